//! [`Pause`]: a pause of a fixed length, started afresh each time.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::time::Duration;

use super::Timer;

/// The future of one [`Pause`].
type Started = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A pause the core takes again and again: the wait between two deltas of
/// a paced [`ScriptedModel`](crate::model::ScriptedModel)
/// ([`with_pacer`](crate::model::ScriptedModel::with_pacer)) and the grace
/// a running tool gets after an abort
/// ([`AgentOptions::with_abort_grace`](crate::agent::AgentOptions::with_abort_grace)).
///
/// Usually a [`Timer`]'s sleep of a fixed length ([`Pause::new`]); a test
/// can make each pause any future it likes ([`Pause::from_fn`]). Cloning
/// shares the maker.
///
/// ```
/// use core::future::{ready, Ready};
/// use core::time::Duration;
/// use agentstream::rt::{Pause, Timer};
///
/// struct Instant;
/// impl Timer for Instant {
///     type Sleep = Ready<()>;
///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
///     fn now_unix_ms(&self) -> u64 { 0 }
/// }
///
/// let pause = Pause::new(Instant, Duration::from_millis(20));
/// futures_executor::block_on(pause.start());
/// // A pause that never ends, for a test that holds a stream mid-way.
/// let _forever = Pause::from_fn(core::future::pending::<()>);
/// ```
#[derive(Clone)]
pub struct Pause {
    start: Arc<dyn Fn() -> Started + Send + Sync>,
}

impl Pause {
    /// Each pause is `timer`'s sleep of `length`.
    pub fn new<T>(timer: T, length: Duration) -> Self
    where
        T: Timer + Send + Sync,
        T::Sleep: Send,
    {
        Self::from_fn(move || timer.sleep(length))
    }

    /// Each pause is the future `start` returns.
    pub fn from_fn<F>(start: impl Fn() -> F + Send + Sync + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        Self {
            start: Arc::new(move || Box::pin(start()) as Started),
        }
    }

    /// Starts one pause.
    pub fn start(&self) -> impl Future<Output = ()> + Send + Unpin + 'static {
        (self.start)()
    }
}

impl fmt::Debug for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pause").finish_non_exhaustive()
    }
}
