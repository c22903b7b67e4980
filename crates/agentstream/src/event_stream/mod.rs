//! An event channel with a terminal result.
//!
//! [`channel`] creates a [`Producer`] and an [`EventStream`].
//! The producer pushes events and ends the stream once, with a result
//! ([`Producer::finish`]) or an error ([`Producer::fail`]). The `EventStream`
//! is the single consumer: it is a [`Stream`] of `Result<E, StreamError<F>>`.
//! Any number of tasks can await the terminal result through
//! [`EventStream::result`].
//!
//! ```
//! use agentstream::event_stream::{self, EventStream, StreamError};
//! use futures_util::StreamExt;
//!
//! # futures_executor::block_on(async {
//! let (producer, mut events): (_, EventStream<&str, u32, String>) = event_stream::channel();
//! let result = events.result();
//!
//! producer.push("first").unwrap();
//! producer.push("second").unwrap();
//! producer.finish(42).unwrap();
//!
//! assert_eq!(events.next().await, Some(Ok("first")));
//! assert_eq!(events.next().await, Some(Ok("second")));
//! assert_eq!(events.next().await, None);
//! assert_eq!(result.await, Ok(42));
//! # });
//! ```
//!
//! # Lifecycle
//!
//! A stream is *open* until the first of [`Producer::finish`],
//! [`Producer::fail`] or the producer's drop. That first terminal call wins;
//! any later `push`, `finish` or `fail` returns a [`RefusedError`] that
//! displays `EventStream is already terminal (finished)` or
//! `EventStream is already terminal (failed)`, and hands the value back.
//!
//! | how it ended | result awaiters get | consumer gets, after the buffered events |
//! |---|---|---|
//! | `finish(r)` | `Ok(r)` | `None` |
//! | `fail(e)` | `Err(StreamError::Failed(e))` | `Some(Err(StreamError::Failed(e)))` once, then `None` |
//! | producer dropped | `Err(StreamError::ProducerDropped)` | `Some(Err(StreamError::ProducerDropped))` once, then `None` |
//!
//! Results and errors are cloned to each observer, hence the `R: Clone` and
//! `F: Clone` bounds on the consuming side. Wrap them in an `Arc` if cloning
//! is expensive.
//!
//! # One consumer
//!
//! The consumer is the `EventStream` value itself. It is not `Clone`, and
//! polling needs `&mut`, so two concurrent consumers are ruled out by the
//! borrow checker:
//!
//! ```compile_fail
//! use agentstream::event_stream::{self, EventStream};
//! use futures_util::StreamExt;
//!
//! let (_producer, mut events): (_, EventStream<u8, (), ()>) = event_stream::channel();
//! let first = events.next();
//! let second = events.next(); // error: `events` is already borrowed mutably
//! drop((first, second));
//! ```
//!
//! A consumer that stops early (`events.by_ref().take(2)`, a dropped
//! `next()` future) leaves the remaining events in the stream for the next
//! one, in order. If a new consumer parks with a waker for a different task,
//! the previously parked waker is woken once, so no task is left waiting on
//! a read that can no longer complete.
//!
//! # No backpressure
//!
//! The buffer is **unbounded**. [`Producer::push`] is synchronous and never
//! waits; a consumer that stops reading lets the buffer grow without limit.
//! A caller that needs bounded memory must add it on top: for example count
//! unconsumed events and slow the producer (or drop or coalesce deltas) above
//! a threshold, or abort the upstream work. Once the `EventStream` is
//! dropped, buffered events are freed and later pushes are discarded (or
//! refused with [`RefusalReason::Closed`] when no result awaiter is left
//! either), so an abandoned stream does not keep memory alive.
//!
//! # Synchronization
//!
//! One allocation holds the shared state behind a lock that every
//! operation takes exactly once: `std::sync::Mutex` with the `std` feature,
//! the `critical-section` crate's mutex with `critical-section`, and a spin
//! lock otherwise (see the crate docs, "Choosing the lock"). The consumer moves the whole pending buffer
//! into a local one with a single swap, then yields from it without touching
//! shared memory, so draining costs no synchronization per event. Wakers are
//! always woken after the lock is released. Buffers are recycled between the
//! two sides, so a steady stream allocates nothing per event; after a burst,
//! buffers with room for more than 1,024 events are freed once drained.
//!
//! The handles are `Send` and `Sync` whenever `E`, `R` and `F` are, so the
//! producer and consumer can live on different threads.

mod error;
mod producer;
mod result;
mod shared;

use alloc::collections::VecDeque;
use core::fmt;
use core::mem;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use futures_core::{FusedStream, Stream};

pub use error::{RefusalReason, RefusedError, StreamError};
pub use producer::{Closed, Producer};
pub use result::ResultFuture;
use shared::{Observed, Shared, State};

use alloc::sync::Arc;

/// Drained buffers keep at most this many events of capacity; larger ones
/// are freed, so a burst does not pin its peak memory forever.
const RETAINED_CAPACITY: usize = 1024;

/// Creates a stream and its producer.
///
/// This is the only allocation of the stream's life, besides the event
/// buffers and the slabs of parked observers. Same as
/// [`EventStream::channel`].
pub fn channel<E, R, F>() -> (Producer<E, R, F>, EventStream<E, R, F>) {
    let shared = Arc::new(Shared::new());
    let producer = Producer {
        shared: shared.clone(),
    };
    let stream = EventStream {
        shared,
        local: VecDeque::new(),
        end_after_local: None,
        ended: false,
    };
    (producer, stream)
}

/// The consuming half of an event stream: a [`Stream`] of events that ends
/// after the producer's terminal call.
///
/// See the [module documentation](self) for the full contract.
pub struct EventStream<E, R, F> {
    shared: Arc<Shared<E, R, F>>,
    /// Events taken from the shared queue in one swap, yielded without locking.
    local: VecDeque<E>,
    /// Set by a refill that found the stream already terminal: how it ended,
    /// to be yielded once `local` is drained without taking the lock again.
    end_after_local: Option<Option<StreamError<F>>>,
    /// True once `None` has been returned; the stream is then fused.
    ended: bool,
}

impl<E, R, F> EventStream<E, R, F> {
    /// Creates a stream and its producer: [`channel`] as an associated
    /// function, for when the types are named on `EventStream`.
    pub fn channel() -> (Producer<E, R, F>, Self) {
        channel()
    }

    /// Returns a future that resolves to the terminal result.
    ///
    /// It may be called any number of times; each future is independent and
    /// can be sent to another task. It resolves whether or not the events are
    /// consumed. The future does not name the event type, hence the
    /// `'static` bounds: it holds the shared state as a trait object.
    pub fn result(&self) -> ResultFuture<R, F>
    where
        E: 'static,
        R: 'static,
        F: 'static,
    {
        ResultFuture::new(self.shared.clone())
    }

    /// The result once the producer finished with one (a copy), without
    /// waiting: see [`ResultFuture::peek`].
    pub fn peek_result(&self) -> Option<R>
    where
        R: Clone,
    {
        self.shared.peek_result()
    }

    /// Number of events pushed and not yet yielded.
    pub fn buffered_len(&self) -> usize {
        self.local.len() + self.shared.with(|inner| inner.queue.len())
    }

    /// Frees a drained local buffer that grew past [`RETAINED_CAPACITY`].
    fn trim_local(&mut self) {
        if self.local.capacity() > RETAINED_CAPACITY {
            self.local = VecDeque::new();
        }
    }
}

// Events are moved in and out by value and never pinned, so the stream can be
// `Unpin` whatever `E` is.
impl<E, R, F> Unpin for EventStream<E, R, F> {}

/// What one locked look at the shared state decided.
enum Step<F> {
    /// New events are in `local`; `Some` if the stream had already ended
    /// (with this error, if any).
    Refilled(Option<Option<StreamError<F>>>),
    /// Parked; a waker for a different task was replaced and must be woken.
    Parked(Option<Waker>),
    Ended(Option<StreamError<F>>),
}

impl<E, R, F: Clone> EventStream<E, R, F> {
    /// The next event, the end, or `Pending`; parks `waker` on `Pending`
    /// if one is given, otherwise leaves no trace.
    #[inline]
    pub(crate) fn poll_event(
        &mut self,
        waker: Option<&Waker>,
    ) -> Poll<Option<Result<E, StreamError<F>>>> {
        // Fast path, no synchronization: an event taken in an earlier swap.
        match self.local.pop_front() {
            Some(event) => Poll::Ready(Some(Ok(event))),
            None => self.poll_shared(waker),
        }
    }

    /// The local buffer is empty: refill it from the shared queue, end, or
    /// park.
    #[inline(never)]
    fn poll_shared(&mut self, waker: Option<&Waker>) -> Poll<Option<Result<E, StreamError<F>>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(end) = self.end_after_local.take() {
            self.ended = true;
            return Poll::Ready(end.map(Err));
        }
        self.trim_local();
        let local = &mut self.local;
        let step = self.shared.with(|inner| {
            let end = match &inner.state {
                State::Open => None,
                State::Finished(_) => Some(None),
                State::Failed(error) => Some(Some(StreamError::Failed(error.clone()))),
                State::ProducerDropped => Some(Some(StreamError::ProducerDropped)),
            };
            if !inner.queue.is_empty() {
                mem::swap(&mut inner.queue, local);
                return Step::Refilled(end);
            }
            match end {
                Some(end) => Step::Ended(end),
                None => Step::Parked(match (waker, &mut inner.consumer_waker) {
                    (None, _) => None,
                    (Some(waker), Some(stored)) if stored.will_wake(waker) => None,
                    (Some(waker), slot) => slot.replace(waker.clone()),
                }),
            }
        });
        match step {
            Step::Refilled(end) => {
                self.end_after_local = end;
                Poll::Ready(self.local.pop_front().map(Ok))
            }
            Step::Parked(replaced) => {
                if let Some(previous) = replaced {
                    previous.wake();
                }
                Poll::Pending
            }
            Step::Ended(error) => {
                self.ended = true;
                Poll::Ready(error.map(Err))
            }
        }
    }
}

impl<E, R, F: Clone> Stream for EventStream<E, R, F> {
    type Item = Result<E, StreamError<F>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_event(Some(cx.waker()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.local.len(), None)
    }
}

impl<E, R, F: Clone> FusedStream for EventStream<E, R, F> {
    fn is_terminated(&self) -> bool {
        // `ended` is set only by `poll_shared`, which runs once `local` is
        // empty; nothing refills `local` after that.
        self.ended
    }
}

impl<E, R, F> Drop for EventStream<E, R, F> {
    fn drop(&mut self) {
        let (waker, queue, closed) = self.shared.with(|inner| {
            inner.consumer_alive = false;
            let closed = inner.take_closed_waiters();
            (
                inner.consumer_waker.take(),
                mem::take(&mut inner.queue),
                closed,
            )
        });
        // User code (event destructors, wakers) runs outside the lock.
        drop((waker, queue));
        if let Some(waiters) = closed {
            waiters.wake_all();
        }
    }
}

impl<E, R, F> fmt::Debug for EventStream<E, R, F> {
    // The shared state's fields are read under the lock; the slab keeps its
    // count, so this is O(1) whatever the number of parked awaiters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (state, queued, awaiters) = self.shared.with(|inner| {
            let state = match inner.state {
                State::Open => "open",
                State::Finished(_) => "finished",
                State::Failed(_) => "failed",
                State::ProducerDropped => "producer dropped",
            };
            (state, inner.queue.len(), inner.awaiters.len())
        });
        f.debug_struct("EventStream")
            .field("state", &state)
            .field("buffered", &(queued + self.local.len()))
            .field("parked_result_awaiters", &awaiters)
            .field("ended", &self.ended)
            .finish()
    }
}
