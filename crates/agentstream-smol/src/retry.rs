//! [`with_retry`]: the core's [`RetryModel`] waiting on smol's timer.

use std::time::Duration;

use agentstream::model::{os_entropy, system_unix_seconds, RetryModel, RetryPolicy};

use crate::{Pause, Timer};

/// The timer a [`with_retry`] model waits on: a smol [`Timer`].
pub type SmolSleep = fn(Duration) -> Pause;

fn pause(duration: Duration) -> Pause {
    Pause(Timer::after(duration))
}

/// Wraps `model` so that a call failing before it produced anything (HTTP
/// 429 or 5xx, a transport failure, a connect timeout) is tried again as
/// `policy` says (see [`RetryPolicy`] for the rules and defaults), waiting
/// on smol's timer; an HTTP-date `Retry-After` is resolved with the system
/// clock, and the jitter is seeded from the OS unless the policy fixes a
/// seed. The caller's signal ends a wait at once.
///
/// Any model can be wrapped; with the `http` feature, typically an
/// `OpenAiCompatModel` or an `AnthropicModel`:
///
/// ```
/// use agentstream_smol::prelude::*;
/// use agentstream_smol::with_retry;
/// use agentstream::model::RetryPolicy;
///
/// let model = with_retry(ScriptedModel::new(Vec::<ScriptedTurn>::new()), RetryPolicy::default());
/// assert_eq!(model.policy().max_retries, 2);
/// ```
pub fn with_retry<M>(model: M, policy: RetryPolicy) -> RetryModel<M, SmolSleep> {
    RetryModel::new(model, policy, pause as SmolSleep)
        .with_clock(system_unix_seconds)
        .with_entropy(os_entropy())
}
