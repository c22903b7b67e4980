//! Cancelling a model call: `AbortController` and `AbortSignal`.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::FusedFuture;

use alloc::sync::Arc;

use super::cause::ErrorCause;
use crate::sync::{AtomicBool, Lock, Ordering, WakerSlab};

/// The error message of a call ended by its [`AbortSignal`].
pub const ABORTED_MESSAGE: &str = "Request was aborted";

/// Aborts the calls that were given its [`AbortSignal`].
///
/// Like the web platform's `AbortController`: the caller keeps the
/// controller and passes [`signal`](Self::signal) to the calls it may want
/// to cancel. Dropping the controller does not abort.
///
/// ```
/// use agentstream::model::AbortController;
///
/// let controller = AbortController::new();
/// let signal = controller.signal();
/// assert!(!signal.is_aborted());
/// controller.abort();
/// assert!(signal.is_aborted());
/// ```
#[derive(Default)]
pub struct AbortController {
    signal: AbortSignal,
}

/// The observing side of an [`AbortController`]: cloneable, `Send + Sync`.
///
/// A producer checks [`is_aborted`](Self::is_aborted) at its yield points,
/// or awaits [`aborted`](Self::aborted) to be woken by the abort while it is
/// parked on something else.
#[derive(Clone)]
pub struct AbortSignal {
    shared: Arc<AbortState>,
}

struct AbortState {
    /// Set once, by the abort, while `waiters` is locked.
    ///
    /// Invariant: a waiter parks only after reading `false` under the lock,
    /// and the abort sets it and empties the slab under the same lock, so no
    /// park is missed. Readers outside the lock (`is_aborted`) need no lock:
    /// the flag never goes back to `false`.
    aborted: AtomicBool,
    /// Parked [`Aborted`] futures, emptied once by the abort, and the
    /// cause the abort gave (see [`AbortController::abort_with`]).
    waiters: Lock<(WakerSlab, Option<ErrorCause>)>,
}

impl AbortController {
    /// A controller that has not aborted.
    pub fn new() -> Self {
        Self::default()
    }

    /// A signal that observes this controller.
    pub fn signal(&self) -> AbortSignal {
        self.signal.clone()
    }

    /// Aborts, waking every task parked on [`AbortSignal::aborted`].
    /// Aborting again does nothing.
    pub fn abort(&self) {
        self.end(None);
    }

    /// Aborts for `cause`: like [`abort`](Self::abort), and a model that
    /// ends the call because of it attaches `cause` (see
    /// [`AbortSignal::cause`]) to its `error` event instead of
    /// [`ErrorCause::Aborted`]. A deadline aborts with
    /// [`Timeout`](ErrorCause::Timeout) this way. Aborting again does
    /// nothing.
    pub fn abort_with(&self, cause: ErrorCause) {
        self.end(Some(cause));
    }

    fn end(&self, cause: Option<ErrorCause>) {
        let state = &self.signal.shared;
        if state.aborted.load(Ordering::Acquire) {
            return;
        }
        let waiters = state.waiters.with(|(waiters, slot)| {
            if state.aborted.load(Ordering::Acquire) {
                return WakerSlab::new();
            }
            *slot = cause;
            state.aborted.store(true, Ordering::Release);
            core::mem::take(waiters)
        });
        waiters.wake_all();
    }

    /// Whether [`abort`](Self::abort) was called.
    pub fn is_aborted(&self) -> bool {
        self.signal.is_aborted()
    }
}

impl Default for AbortSignal {
    /// A signal with no controller: it never aborts.
    fn default() -> Self {
        Self {
            shared: Arc::new(AbortState {
                aborted: AtomicBool::new(false),
                waiters: Lock::new((WakerSlab::new(), None)),
            }),
        }
    }
}

impl AbortSignal {
    /// Whether the controller has aborted. One atomic load, no lock.
    #[inline]
    pub fn is_aborted(&self) -> bool {
        self.shared.aborted.load(Ordering::Acquire)
    }

    /// The cause a model attaches to the `error` event of a call this
    /// signal aborted: the one given to
    /// [`abort_with`](AbortController::abort_with), else
    /// [`ErrorCause::Aborted`] (also before any abort).
    ///
    /// ```
    /// use agentstream::model::{AbortController, ErrorCause, TimeoutKind};
    ///
    /// let controller = AbortController::new();
    /// controller.abort_with(ErrorCause::Timeout(TimeoutKind::Total, None));
    /// assert!(matches!(controller.signal().cause(), ErrorCause::Timeout(TimeoutKind::Total, None)));
    /// assert!(matches!(AbortController::new().signal().cause(), ErrorCause::Aborted));
    /// ```
    pub fn cause(&self) -> ErrorCause {
        if !self.is_aborted() {
            return ErrorCause::Aborted;
        }
        self.shared
            .waiters
            .with(|(_, cause)| cause.clone())
            .unwrap_or(ErrorCause::Aborted)
    }

    /// A future that resolves once the controller aborts.
    pub fn aborted(&self) -> Aborted {
        Aborted {
            signal: self.clone(),
            key: None,
            done: false,
        }
    }
}

/// Resolves when an [`AbortSignal`] is aborted. Created by
/// [`AbortSignal::aborted`].
#[must_use = "futures do nothing unless polled"]
pub struct Aborted {
    signal: AbortSignal,
    key: Option<usize>,
    done: bool,
}

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let key = &mut this.key;
        let state = &this.signal.shared;
        let (aborted, replaced) = if state.aborted.load(Ordering::Acquire) {
            (true, None)
        } else {
            state.waiters.with(|(waiters, _)| {
                // Relaxed suffices: the abort stores under this same lock.
                if state.aborted.load(Ordering::Relaxed) {
                    (true, None)
                } else {
                    (false, waiters.park(key, cx.waker()))
                }
            })
        };
        drop(replaced);
        this.done = aborted;
        if aborted {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl FusedFuture for Aborted {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl Drop for Aborted {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            let waker = self
                .signal
                .shared
                .waiters
                .with(|(waiters, _)| waiters.remove(key));
            drop(waker);
        }
    }
}

impl fmt::Debug for AbortController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortController")
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

impl fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortSignal")
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

impl fmt::Debug for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aborted")
            .field("parked", &self.key.is_some())
            .field("done", &self.done)
            .finish()
    }
}
