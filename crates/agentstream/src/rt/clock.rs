//! [`Clock`]: the wall clock an agent stamps the messages it makes with.

use alloc::sync::Arc;
use core::fmt;

use super::Timer;

/// A wall clock in milliseconds since the Unix epoch, shared by cloning.
///
/// The core has no clock of its own. The agent loop stamps the messages it
/// makes (a [`prompt_text`](crate::agent::Agent::prompt_text) user message,
/// every `toolResult`) with the clock of its
/// [`AgentOptions`](crate::agent::AgentOptions::with_clock), or else the
/// model's own ([`Model::clock`](crate::model::Model::clock): an HTTP
/// model's runtime, a [`RetryModel`](crate::model::RetryModel)'s timer), as
/// Pi stamps them with `Date.now()`; with neither, they read 0.
///
/// ```
/// use agentstream::rt::Clock;
///
/// let fixed = Clock::from_fn(|| 1_700_000_000_000);
/// assert_eq!(fixed.now_unix_ms(), 1_700_000_000_000);
/// ```
#[derive(Clone)]
pub struct Clock {
    now: Arc<dyn Fn() -> u64 + Send + Sync>,
}

impl Clock {
    /// The clock of a runtime's [`Timer`].
    pub fn of<T: Timer + Send + Sync>(timer: T) -> Self {
        Self::from_fn(move || timer.now_unix_ms())
    }

    /// A clock reading whatever `now` returns (a fixed or manual clock in a
    /// test).
    pub fn from_fn(now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        Self { now: Arc::new(now) }
    }

    /// The time now, in milliseconds since the Unix epoch (0: no clock).
    pub fn now_unix_ms(&self) -> u64 {
        (self.now)()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clock").finish_non_exhaustive()
    }
}
