//! A future that yields to the executor exactly once.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// Returns a future that is pending on its first poll (after waking its own
/// task) and ready on the second.
///
/// It plays the role of JavaScript's `queueMicrotask`: code after
/// `yield_now().await` runs only after the current poll has returned to the
/// executor. It needs no runtime and no timer.
///
/// ```
/// use agentstream::yield_now;
/// use futures_util::FutureExt;
///
/// assert_eq!(yield_now().now_or_never(), None);
/// let mut fut = Box::pin(async { yield_now().await; 42 });
/// assert_eq!(fut.as_mut().now_or_never(), None); // first poll yields
/// assert_eq!(fut.now_or_never(), Some(42));
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
