//! Timing: how long a streamed answer waits before its first event and
//! between its deltas, and the seeded generator its jitter (and chaos)
//! draw from.
//!
//! A turn, or a rule's reply, may say
//! `"timing": {"ttftMs": 400, "tokensPerSecond": 50, "jitterMs": 30}`
//! (every key optional):
//!
//! - `ttftMs`: milliseconds before the stream's first event (time to first
//!   token), 0 to [`MAX_TTFT_MS`];
//! - `tokensPerSecond`: each text, thinking or tool-argument delta waits
//!   its tokens / this many seconds before it is written (a delta's
//!   tokens are Pi's estimate, `ceil(chars / 4)`, at least 1); more than
//!   0 and at most [`MAX_TOKENS_PER_SECOND`]; absent, deltas are not paced
//!   (a delta is the model's: the pieces `--chunks` splits it into after
//!   the wait go out together);
//! - `jitterMs`: each wait is moved by up to ± this many milliseconds
//!   (never below 0), drawn from the server's seeded generator, 0 to
//!   [`MAX_JITTER_MS`].
//!
//! The waits are timers on the connection's own task: no lock is held
//! while waiting, other connections are not held up, and a client that
//! goes away drops the timer with its response.

use std::time::Duration;

use agentstream::message::DecodeError;
use agentstream::model::ModelEvent;
use serde_json::{Map, Value};

/// The largest `ttftMs`: ten minutes.
pub const MAX_TTFT_MS: f64 = 600_000.0;
/// The largest `jitterMs`: one minute.
pub const MAX_JITTER_MS: f64 = 60_000.0;
/// The largest `tokensPerSecond`.
pub const MAX_TOKENS_PER_SECOND: f64 = 1_000_000.0;

/// A turn's timing (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Timing {
    /// Milliseconds before the first event.
    ttft_ms: f64,
    /// Tokens written per second; `None`: deltas are not paced.
    tokens_per_second: Option<f64>,
    /// The most a wait is moved, either way, in milliseconds.
    jitter_ms: f64,
}

impl Timing {
    /// Parses `{"ttftMs"?, "tokensPerSecond"?, "jitterMs"?}`.
    ///
    /// # Errors
    /// A [`DecodeError`] naming the bad key: not a number, negative, not
    /// finite, or past its bound; or a key that is not one of the three.
    pub(crate) fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(object) = value else {
            return Err(DecodeError::new(format!(
                "expected {{\"ttftMs\"?, \"tokensPerSecond\"?, \"jitterMs\"?}}, found {value}"
            )));
        };
        if let Some(key) = object
            .keys()
            .find(|key| !["ttftMs", "tokensPerSecond", "jitterMs"].contains(&key.as_str()))
        {
            return Err(DecodeError::new("unknown timing key").within_key(key));
        }
        let ttft_ms = bounded(&object, "ttftMs", MAX_TTFT_MS)?.unwrap_or(0.0);
        let jitter_ms = bounded(&object, "jitterMs", MAX_JITTER_MS)?.unwrap_or(0.0);
        let tokens_per_second = bounded(&object, "tokensPerSecond", MAX_TOKENS_PER_SECOND)?;
        if tokens_per_second == Some(0.0) {
            return Err(DecodeError::new("expected more than 0 tokens per second")
                .within_key("tokensPerSecond"));
        }
        Ok(Self {
            ttft_ms,
            tokens_per_second,
            jitter_ms,
        })
    }

    /// The wait before the stream's first event.
    pub(crate) fn first(&self, rng: &mut Rng) -> Duration {
        self.jittered(self.ttft_ms, rng)
    }

    /// The wait before `event` (not the first): its tokens at the pace
    /// asked, for a delta; nothing for any other event.
    pub(crate) fn before(&self, event: &ModelEvent, rng: &mut Rng) -> Duration {
        let (Some(pace), Some(delta)) = (self.tokens_per_second, delta_text(event)) else {
            return Duration::ZERO;
        };
        #[allow(clippy::cast_precision_loss)] // a token count is far below 2^52
        let tokens = estimate_tokens(delta) as f64;
        self.jittered(tokens * 1000.0 / pace, rng)
    }

    fn jittered(&self, base_ms: f64, rng: &mut Rng) -> Duration {
        let moved = if self.jitter_ms > 0.0 {
            base_ms + (rng.unit() * 2.0 - 1.0) * self.jitter_ms
        } else {
            base_ms
        };
        // Both terms are finite and bounded (checked at load).
        Duration::from_secs_f64(moved.max(0.0) / 1000.0)
    }
}

/// `key` of `object` as a number in `0..=max`; `None` when absent.
fn bounded(object: &Map<String, Value>, key: &str, max: f64) -> Result<Option<f64>, DecodeError> {
    let Some(value) = object.get(key) else {
        return Ok(None);
    };
    match value.as_f64() {
        Some(n) if n.is_finite() && (0.0..=max).contains(&n) => Ok(Some(n)),
        _ => Err(
            DecodeError::new(format!("expected a number from 0 to {max}, found {value}"))
                .within_key(key),
        ),
    }
}

/// The text a delta event adds: text, thinking or tool-call arguments.
pub(crate) fn delta_text(event: &ModelEvent) -> Option<&str> {
    match event {
        ModelEvent::TextDelta { delta, .. }
        | ModelEvent::ThinkingDelta { delta, .. }
        | ModelEvent::ToolCallDelta { delta, .. } => Some(delta),
        _ => None,
    }
}

/// Pi's token estimate of `text`: `ceil(chars / 4)`, at least 1.
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    let chars = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    chars.div_ceil(4).max(1)
}

/// A small seeded generator (SplitMix64): the same seed gives the same
/// jitter and the same chaos, so a failure can be replayed with `--seed`.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// The generator of one call: the server's seed mixed with the call's
    /// number and its test id, so each test's draws do not depend on how
    /// tests interleave.
    pub(crate) fn for_call(seed: u64, test: Option<&str>, call: usize) -> Self {
        let mut mixed =
            seed ^ (u64::try_from(call).unwrap_or(u64::MAX)).wrapping_mul(0xA24B_AED4_963E_E407);
        for byte in test.unwrap_or_default().bytes() {
            mixed = (mixed ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
        }
        let mut rng = Self(mixed);
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        // The top 53 bits, exactly representable.
        #[allow(clippy::cast_precision_loss)]
        let top = (self.next_u64() >> 11) as f64;
        top / (1u64 << 53) as f64
    }
}

/// A seed from the clock, for a server started without one.
pub(crate) fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let nanos = u64::try_from(now.as_nanos() & u128::from(u64::MAX)).unwrap_or(0);
    Rng(nanos).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timing_is_validated_naming_the_key() {
        let ok = Timing::from_value(json!({"ttftMs": 5, "tokensPerSecond": 20.5, "jitterMs": 1}));
        assert!(ok.is_ok());
        for (bad, path) in [
            (json!({"ttftMs": -1}), "$.ttftMs"),
            (json!({"ttftMs": 1e9}), "$.ttftMs"),
            (json!({"jitterMs": "5"}), "$.jitterMs"),
            (json!({"tokensPerSecond": 0}), "$.tokensPerSecond"),
            (json!({"ttft": 5}), "$.ttft"),
        ] {
            let error = Timing::from_value(bad.clone()).unwrap_err();
            assert_eq!(error.path(), path, "{bad}");
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_waits() {
        let timing =
            Timing::from_value(json!({"ttftMs": 100, "tokensPerSecond": 10, "jitterMs": 50}))
                .unwrap();
        let waits = |seed| {
            let mut rng = Rng::for_call(seed, Some("t"), 3);
            (0..8).map(|_| timing.first(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(waits(7), waits(7));
        assert_ne!(waits(7), waits(8));
        for wait in waits(7) {
            assert!((50..=150).contains(&wait.as_millis()), "{wait:?}");
        }
        // A delta of 8 characters is 2 tokens: 200 ms at 10 tokens/s.
        let still = Timing::from_value(json!({"tokensPerSecond": 10})).unwrap();
        let delta = ModelEvent::TextDelta {
            content_index: 0,
            delta: "12345678".into(),
            partial: agentstream::message::assistant([], agentstream::message::StopReason::Stop)
                .into(),
        };
        assert_eq!(
            still.before(&delta, &mut Rng(0)),
            Duration::from_millis(200)
        );
    }
}
