//! [`Pricing`]: a model's prices, which fill the `cost` of a message's
//! usage.
//!
//! The computation is Pi's `calculateCost`: each part costs its token
//! count times its price per million tokens, divided by one million, and
//! the total is the sum of the four parts. Without a price table the costs
//! stay 0, as the providers send no prices.

use agentstream::message::{Cost, Usage};

/// The prices of one model, in a currency of your choice (Pi's model
/// tables use US dollars) per million tokens.
///
/// ```
/// use agentstream::message::Usage;
/// use agentstream_wire::pricing::Pricing;
///
/// // $3 per million input tokens, $15 output, $0.30 cache reads, $3.75 cache writes.
/// let pricing = Pricing::new(3.0, 15.0).with_cache_read(0.3).with_cache_write(3.75);
/// let usage = Usage { input: 1_000, output: 2_000, cache_read: 10_000, cache_write: 4_000, ..Usage::default() };
/// let cost = pricing.cost(&usage);
/// assert_eq!(cost.input, 0.003);
/// assert_eq!(cost.output, 0.03);
/// assert_eq!(cost.total, cost.input + cost.output + cost.cache_read + cost.cache_write);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Pricing {
    /// Price of a million input tokens (not cached).
    pub input: f64,
    /// Price of a million output tokens.
    pub output: f64,
    /// Price of a million tokens read from the prompt cache.
    pub cache_read: f64,
    /// Price of a million tokens written to the prompt cache.
    pub cache_write: f64,
}

impl Pricing {
    /// Prices for input and output tokens; cache reads and writes cost 0
    /// until set.
    pub fn new(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_read: 0.0,
            cache_write: 0.0,
        }
    }

    /// Sets the price of a million cache-read tokens.
    pub fn with_cache_read(mut self, price: f64) -> Self {
        self.cache_read = price;
        self
    }

    /// Sets the price of a million cache-write tokens.
    pub fn with_cache_write(mut self, price: f64) -> Self {
        self.cache_write = price;
        self
    }

    /// The cost of `usage`: each part is tokens × price / 1 000 000, the
    /// total their sum. Fields of `usage.cost` this crate does not know
    /// are kept.
    pub fn cost(&self, usage: &Usage) -> Cost {
        // Token counts up to 2^53 convert exactly; beyond that the cost is
        // as precise as an f64 can be.
        let part = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        let input = part(usage.input, self.input);
        let output = part(usage.output, self.output);
        let cache_read = part(usage.cache_read, self.cache_read);
        let cache_write = part(usage.cache_write, self.cache_write);
        Cost {
            input,
            output,
            cache_read,
            cache_write,
            total: input + output + cache_read + cache_write,
            extra: usage.cost.extra.clone(),
        }
    }

    /// Fills `usage.cost` from `usage`'s token counts.
    pub fn apply(&self, usage: &mut Usage) {
        usage.cost = self.cost(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_is_priced_and_the_total_is_their_sum() {
        let pricing = Pricing::new(2.0, 8.0)
            .with_cache_read(0.5)
            .with_cache_write(2.5);
        let mut usage = Usage {
            input: 500_000,
            output: 250_000,
            cache_read: 2_000_000,
            cache_write: 400_000,
            ..Usage::default()
        };
        pricing.apply(&mut usage);
        assert_eq!(usage.cost.input, 1.0);
        assert_eq!(usage.cost.output, 2.0);
        assert_eq!(usage.cost.cache_read, 1.0);
        assert_eq!(usage.cost.cache_write, 1.0);
        assert_eq!(usage.cost.total, 5.0);
    }

    #[test]
    fn no_tokens_cost_nothing() {
        let cost = Pricing::new(3.0, 15.0).cost(&Usage::default());
        assert_eq!(cost, Cost::default());
    }
}
