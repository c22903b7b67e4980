//! Awaiting the terminal result of a stream.

use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::FusedFuture;

use super::error::StreamError;
use super::shared::Observed;

/// A future resolving to the stream's terminal result.
///
/// Created by [`EventStream::result`](super::EventStream::result). Any number
/// of them may exist, on any task or thread; each resolves to its own clone of
/// the result as soon as the producer ends the stream, whether or not the
/// events have been consumed. Cloning a `ResultFuture` creates another
/// independent awaiter.
///
/// A live `ResultFuture` counts as an observer of the stream: while one
/// exists, [`Producer::push`](super::Producer::push) does not report
/// [`Closed`](super::RefusalReason::Closed).
///
/// It names only the result and error types: a `ResultFuture<R, F>` can be
/// stored and sent without knowing what the stream's events are.
#[must_use = "futures do nothing unless polled"]
pub struct ResultFuture<R, F> {
    shared: Arc<dyn Observed<R, F>>,
    /// Our slot among the parked awaiters, once parked.
    key: Option<usize>,
    done: bool,
}

// SAFETY: a `ResultFuture` reaches the shared state only through
// `Observed`, whose methods touch the result (`R`), the error (`F`), counters
// and wakers, never an event: see the trait's documentation. When it drops
// the last reference, the event queue is empty, so no event is dropped on its
// thread either. Moving it to another thread therefore moves only access to
// `R` and `F` (cloned and dropped there), which is sound when they are
// `Send`, the same bounds that make `std::sync::Mutex<(R, F)>` `Send`.
unsafe impl<R: Send, F: Send> Send for ResultFuture<R, F> {}
// SAFETY: `&ResultFuture` gives access to nothing but its own `key` and
// `done` fields (in `Debug` and `is_terminated`); every access to the shared
// state needs `&mut`. Sharing it is as sound as sending it.
unsafe impl<R: Send, F: Send> Sync for ResultFuture<R, F> {}

impl<R, F> ResultFuture<R, F> {
    pub(super) fn new(shared: Arc<dyn Observed<R, F>>) -> Self {
        shared.add_result_handle();
        Self {
            shared,
            key: None,
            done: false,
        }
    }
}

impl<R: Clone, F> ResultFuture<R, F> {
    /// The result once the producer finished with one (a copy), without
    /// waiting or parking: `None` while the stream is open and when it
    /// failed or its producer went away.
    pub fn peek(&self) -> Option<R> {
        self.shared.peek_result()
    }
}

impl<R: Clone, F: Clone> Future for ResultFuture<R, F> {
    type Output = Result<R, StreamError<F>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let poll = this.shared.poll_result(&mut this.key, cx.waker());
        if poll.is_ready() {
            this.done = true;
        }
        poll
    }
}

impl<R: Clone, F: Clone> FusedFuture for ResultFuture<R, F> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<R, F> Clone for ResultFuture<R, F> {
    fn clone(&self) -> Self {
        Self::new(self.shared.clone())
    }
}

impl<R, F> Drop for ResultFuture<R, F> {
    fn drop(&mut self) {
        self.shared.drop_result_handle(self.key);
    }
}

impl<R, F> fmt::Debug for ResultFuture<R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultFuture")
            .field("parked", &self.key.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
