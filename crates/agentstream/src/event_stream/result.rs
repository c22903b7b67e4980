//! Awaiting the terminal result of a stream.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::FusedFuture;

use super::error::StreamError;
use super::shared::Shared;
use crate::sync::Arc;

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
#[must_use = "futures do nothing unless polled"]
pub struct ResultFuture<E, R, F> {
    shared: Arc<Shared<E, R, F>>,
    /// Our slot among the parked awaiters, once parked.
    key: Option<usize>,
    done: bool,
}

impl<E, R, F> ResultFuture<E, R, F> {
    pub(super) fn new(shared: Arc<Shared<E, R, F>>) -> Self {
        shared.with(|inner| inner.result_handles += 1);
        Self {
            shared,
            key: None,
            done: false,
        }
    }
}

impl<E, R: Clone, F: Clone> Future for ResultFuture<E, R, F> {
    type Output = Result<R, StreamError<F>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let (poll, replaced) = this.shared.with(|inner| match inner.outcome() {
            Some(outcome) => {
                let outcome = outcome.cloned().map_err(|error| match error {
                    StreamError::Failed(error) => StreamError::Failed(error.clone()),
                    StreamError::ProducerDropped => StreamError::ProducerDropped,
                });
                (Poll::Ready(outcome), None)
            }
            None => (
                Poll::Pending,
                inner.awaiters.park(&mut this.key, cx.waker()),
            ),
        });
        drop(replaced);
        if poll.is_ready() {
            this.done = true;
        }
        poll
    }
}

impl<E, R: Clone, F: Clone> FusedFuture for ResultFuture<E, R, F> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<E, R, F> Clone for ResultFuture<E, R, F> {
    fn clone(&self) -> Self {
        Self::new(self.shared.clone())
    }
}

impl<E, R, F> Drop for ResultFuture<E, R, F> {
    fn drop(&mut self) {
        let key = self.key;
        let (parked, closed) = self.shared.with(|inner| {
            inner.result_handles -= 1;
            let parked = key.and_then(|key| inner.awaiters.remove(key));
            (parked, inner.take_closed_waker())
        });
        drop(parked);
        if let Some(producer) = closed {
            producer.wake();
        }
    }
}

impl<E, R, F> fmt::Debug for ResultFuture<E, R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultFuture")
            .field("parked", &self.key.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
