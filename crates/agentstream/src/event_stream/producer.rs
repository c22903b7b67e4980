//! The producing half of an event stream.

use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::FusedFuture;

use super::error::{RefusalReason, RefusedError};
use super::shared::{Observed, Shared, State};

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
        let wakeups = self
            .shared
            .terminate(value, state)
            .map_err(|(reason, value)| RefusedError::new(reason, value))?;
        wakeups.wake();
        Ok(())
    }

    /// Whether the stream has finished or failed. One atomic load, no lock.
    #[inline]
    pub fn is_terminal(&self) -> bool {
        self.shared.is_terminal()
    }

    /// Whether nobody can observe the stream any more: the consumer and every
    /// result handle are gone. A producer can poll this to stop early.
    pub fn is_closed(&self) -> bool {
        self.shared.with(|inner| inner.is_closed())
    }

    /// A future that resolves once nobody can observe the stream any more:
    /// the consumer and every result handle are gone. A producer can race
    /// its work against it to stop early, and the future holds no producer
    /// role (dropping it never ends the stream). Any number of tasks may
    /// await their own `Closed` at once; each is woken once.
    pub fn closed(&self) -> Closed<R, F>
    where
        E: 'static,
        R: 'static,
        F: 'static,
    {
        Closed {
            shared: self.shared.clone(),
            key: None,
            done: false,
        }
    }
}

/// Resolves when nobody observes the stream any more. Created by
/// [`Producer::closed`].
///
/// Like [`ResultFuture`](super::ResultFuture) it does not name the event
/// type.
#[must_use = "futures do nothing unless polled"]
pub struct Closed<R, F> {
    shared: Arc<dyn Observed<R, F>>,
    /// Our slot among the parked `Closed` waiters, once parked.
    key: Option<usize>,
    done: bool,
}

// SAFETY: as for `ResultFuture`: a `Closed` reaches the shared state only
// through `Observed::poll_closed`/`drop_closed`, which touch counters and
// wakers; when it drops the last reference it drops the result or error
// (hence the bounds) and an empty event queue, never an event.
unsafe impl<R: Send, F: Send> Send for Closed<R, F> {}
// SAFETY: `&Closed` reaches only its own `key` and `done` fields.
unsafe impl<R: Send, F: Send> Sync for Closed<R, F> {}

impl<R, F> Future for Closed<R, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let poll = this.shared.poll_closed(&mut this.key, cx.waker());
        if poll.is_ready() {
            this.done = true;
        }
        poll
    }
}

impl<R, F> FusedFuture for Closed<R, F> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<R, F> Drop for Closed<R, F> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.shared.drop_closed(key);
        }
    }
}

impl<R, F> fmt::Debug for Closed<R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed")
            .field("parked", &self.key.is_some())
            .field("done", &self.done)
            .finish()
    }
}

enum Delivery<E> {
    Queued(Option<core::task::Waker>),
    Discarded(E),
}

impl<E, R, F> Drop for Producer<E, R, F> {
    fn drop(&mut self) {
        // After `finish` or `fail` there is nothing to do, and no lock to
        // take: only this producer ever ends the stream.
        if self.shared.is_terminal() {
            return;
        }
        if let Ok(wakeups) = self.shared.terminate((), |()| State::ProducerDropped) {
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
