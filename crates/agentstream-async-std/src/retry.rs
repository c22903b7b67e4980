//! [`with_retry`]: the core's [`RetryModel`] waiting on async-std's timer.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use agentstream::model::{os_entropy, system_unix_seconds, RetryModel, RetryPolicy};

/// The timer a [`with_retry`] model waits on: `async_std::task::sleep`.
pub type AsyncStdSleep = fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;

fn sleep(duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async_std::task::sleep(duration))
}

/// Wraps `model` so that a call failing before it produced anything (HTTP
/// 429 or 5xx, a transport failure, a connect timeout) is tried again as
/// `policy` says (see [`RetryPolicy`] for the rules and defaults), waiting
/// on async-std's timer; an HTTP-date `Retry-After` is resolved with the
/// system clock, and the jitter is seeded from the OS unless the policy fixes a
/// seed. The caller's signal ends a wait at once.
///
/// ```
/// use agentstream_async_std::prelude::*;
/// use agentstream_async_std::with_retry;
/// use agentstream::model::RetryPolicy;
///
/// let model = with_retry(ScriptedModel::new(Vec::<ScriptedTurn>::new()), RetryPolicy::default());
/// assert_eq!(model.policy().max_retries, 2);
/// ```
pub fn with_retry<M>(model: M, policy: RetryPolicy) -> RetryModel<M, AsyncStdSleep> {
    RetryModel::new(model, policy, sleep as AsyncStdSleep)
        .with_clock(system_unix_seconds)
        .with_entropy(os_entropy())
}
