//! The producing half of an event stream.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::error::{RefusalReason, RefusedError};
use super::shared::{Shared, State};
use crate::sync::Arc;

/// The producing half of an [`EventStream`](super::EventStream).
///
/// There is exactly one producer per stream. It pushes events and ends the
/// stream once, with [`finish`](Self::finish) or [`fail`](Self::fail).
/// Dropping it without doing either ends the stream with
/// [`StreamError::ProducerDropped`](super::StreamError::ProducerDropped), so
/// nobody waits forever on a producer that forgot to finish.
///
/// All methods take `&self` and never block or wait: the buffer is
/// unbounded (see the [module docs](super#no-backpressure)).
pub struct Producer<E, R, F> {
    pub(super) shared: Arc<Shared<E, R, F>>,
}

impl<E, R, F> Producer<E, R, F> {
    /// Appends an event for the consumer and wakes it if it is parked.
    ///
    /// Never waits. Events keep push order.
    ///
    /// If the [`EventStream`](super::EventStream) was dropped while a
    /// [`ResultFuture`](super::ResultFuture) is still alive, the event is
    /// dropped at once (nobody can read it) and `Ok` is returned, because the
    /// producer still has a result to deliver.
    ///
    /// # Errors
    /// - [`RefusalReason::Finished`] or [`RefusalReason::Failed`] once the
    ///   stream is terminal;
    /// - [`RefusalReason::Closed`] when the consumer and every result handle
    ///   are gone, so the producer can stop early.
    ///
    /// The refused event is handed back in the error.
    #[inline]
    pub fn push(&self, event: E) -> Result<(), RefusedError<E>> {
        let outcome = self.shared.with(|inner| {
            if let Some(reason) = inner.refusal() {
                return Err(RefusedError::new(reason, event));
            }
            if !inner.consumer_alive {
                if inner.result_handles == 0 {
                    return Err(RefusedError::new(RefusalReason::Closed, event));
                }
                return Ok(Delivery::Discarded(event));
            }
            inner.queue.push_back(event);
            Ok(Delivery::Queued(inner.consumer_waker.take()))
        })?;
        // Wake (or drop an unreadable event) only after releasing the lock.
        match outcome {
            Delivery::Queued(Some(waker)) => waker.wake(),
            Delivery::Queued(None) => {}
            Delivery::Discarded(event) => drop(event),
        }
        Ok(())
    }

    /// Ends the stream successfully.
    ///
    /// Every [`ResultFuture`](super::ResultFuture) resolves to `Ok(result)` at
    /// once. The consumer still gets every buffered event, then `None`.
    ///
    /// # Errors
    /// If the stream is already terminal, the result is handed back in a
    /// [`RefusedError`] whose reason says how the stream ended.
    pub fn finish(&self, result: R) -> Result<(), RefusedError<R>> {
        self.terminate(result, State::Finished)
    }

    /// Ends the stream with an error.
    ///
    /// Every [`ResultFuture`](super::ResultFuture) resolves to
    /// `Err(StreamError::Failed(error))` at once. The consumer still gets
    /// every buffered event, then that error once, then `None`.
    ///
    /// # Errors
    /// If the stream is already terminal, the error is handed back in a
    /// [`RefusedError`] whose reason says how the stream ended.
    pub fn fail(&self, error: F) -> Result<(), RefusedError<F>> {
        self.terminate(error, State::Failed)
    }

    fn terminate<T>(&self, value: T, state: fn(T) -> State<R, F>) -> Result<(), RefusedError<T>> {
        let wakeups = self.shared.with(|inner| match inner.refusal() {
            Some(reason) => Err(RefusedError::new(reason, value)),
            None => Ok(inner.terminate(state(value))),
        })?;
        wakeups.wake();
        Ok(())
    }

    /// Whether the stream has finished or failed.
    pub fn is_terminal(&self) -> bool {
        self.shared.with(|inner| inner.refusal().is_some())
    }

    /// Whether nobody can observe the stream any more: the consumer and every
    /// result handle are gone. A producer can poll this to stop early.
    pub fn is_closed(&self) -> bool {
        self.shared.with(|inner| inner.is_closed())
    }

    /// A future that resolves once nobody can observe the stream any more:
    /// the consumer and every result handle are gone. A producer can race
    /// its work against it to stop early, and the future holds no producer
    /// role (dropping it never ends the stream).
    pub fn closed(&self) -> Closed<E, R, F> {
        Closed {
            shared: self.shared.clone(),
        }
    }
}

/// Resolves when nobody observes the stream any more. Created by
/// [`Producer::closed`].
#[must_use = "futures do nothing unless polled"]
pub struct Closed<E, R, F> {
    shared: Arc<Shared<E, R, F>>,
}

impl<E, R, F> Future for Closed<E, R, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let replaced = self.shared.with(|inner| {
            if inner.is_closed() {
                return Ok(());
            }
            Err(match &mut inner.closed_waker {
                Some(stored) if stored.will_wake(cx.waker()) => None,
                slot => slot.replace(cx.waker().clone()),
            })
        });
        match replaced {
            Ok(()) => Poll::Ready(()),
            Err(replaced) => {
                // Only one waiter is kept: settle the one replaced.
                if let Some(previous) = replaced {
                    previous.wake();
                }
                Poll::Pending
            }
        }
    }
}

impl<E, R, F> fmt::Debug for Closed<E, R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed").finish_non_exhaustive()
    }
}

enum Delivery<E> {
    Queued(Option<core::task::Waker>),
    Discarded(E),
}

impl<E, R, F> Drop for Producer<E, R, F> {
    fn drop(&mut self) {
        let wakeups = self.shared.with(|inner| match inner.state {
            State::Open => Some(inner.terminate(State::ProducerDropped)),
            _ => None,
        });
        if let Some(wakeups) = wakeups {
            wakeups.wake();
        }
    }
}

impl<E, R, F> fmt::Debug for Producer<E, R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer")
            .field("terminal", &self.is_terminal())
            .field("closed", &self.is_closed())
            .finish()
    }
}
