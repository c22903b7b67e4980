//! [`with_retry`]: the core's [`RetryModel`] waiting on smol's timer.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentstream::model::{RetryModel, RetryPolicy};

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
/// clock. The caller's signal ends a wait at once.
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
    RetryModel::new(model, policy, pause as SmolSleep).with_clock(unix_now)
}

/// Seconds since the Unix epoch (0 for a clock set before it).
fn unix_now() -> u64 {
    unix_millis() / 1000
}

/// Milliseconds since the Unix epoch (0 for a clock set before it), the
/// timestamp of a call's messages.
pub(crate) fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
