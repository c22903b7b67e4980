//! The state shared by the producer, the consumer and the result awaiters.

use alloc::collections::VecDeque;
use core::mem;
use core::task::Waker;

use super::error::{RefusalReason, StreamError};
use crate::sync::{SpinLock, WakerSlab};

/// The single allocation behind one stream.
pub(crate) type Shared<E, R, F> = SpinLock<Inner<E, R, F>>;

/// Where the stream is in its life. Transitions only leave `Open`, once.
pub(crate) enum State<R, F> {
    /// Events may still be pushed. `Inner::awaiters` may hold wakers.
    Open,
    /// `finish` ran. `Inner::awaiters` is empty and stays empty.
    Finished(R),
    /// `fail` ran. `Inner::awaiters` is empty and stays empty.
    Failed(F),
    /// The producer was dropped while open. `Inner::awaiters` is empty.
    ProducerDropped,
}

pub(crate) struct Inner<E, R, F> {
    /// Events pushed and not yet moved to the consumer's local buffer.
    ///
    /// Invariant: empty whenever `consumer_alive` is false, so memory is
    /// released as soon as nobody can read the events.
    pub(crate) queue: VecDeque<E>,
    pub(crate) state: State<R, F>,
    /// The waker of a parked consumer.
    ///
    /// Invariant: `Some` only while `state` is `Open` and the consumer's last
    /// poll returned `Pending` with nothing buffered. A push or terminal
    /// transition takes it out and wakes it after releasing the lock, so each
    /// park is woken at most once.
    pub(crate) consumer_waker: Option<Waker>,
    /// False once the `EventStream` is dropped.
    pub(crate) consumer_alive: bool,
    /// Number of live `ResultFuture`s.
    pub(crate) result_handles: usize,
    /// The waker of a producer awaiting `Producer::closed`.
    ///
    /// Invariant: taken and woken by whichever drop makes the stream closed
    /// (`consumer_alive` false and `result_handles` zero).
    pub(crate) closed_waker: Option<Waker>,
    /// Parked result awaiters, keyed by slot index.
    pub(crate) awaiters: WakerSlab,
}

impl<E, R, F> Inner<E, R, F> {
    pub(crate) fn new() -> Self {
        Self {
            queue: VecDeque::new(),
            state: State::Open,
            consumer_waker: None,
            consumer_alive: true,
            result_handles: 0,
            closed_waker: None,
            awaiters: WakerSlab::default(),
        }
    }

    /// Checks that the producer may still act.
    pub(crate) fn refusal(&self) -> Option<RefusalReason> {
        match self.state {
            State::Open => None,
            State::Finished(_) => Some(RefusalReason::Finished),
            // `ProducerDropped` can't be observed by a producer, which is gone.
            State::Failed(_) | State::ProducerDropped => Some(RefusalReason::Failed),
        }
    }

    /// Moves the stream to a terminal state and takes every parked waker so
    /// the caller can wake them once the lock is released.
    pub(crate) fn terminate(&mut self, state: State<R, F>) -> Wakeups {
        debug_assert!(matches!(self.state, State::Open));
        self.state = state;
        Wakeups {
            consumer: self.consumer_waker.take(),
            awaiters: mem::take(&mut self.awaiters),
        }
    }

    /// Whether nobody can observe the stream any more.
    pub(crate) fn is_closed(&self) -> bool {
        !self.consumer_alive && self.result_handles == 0
    }

    /// The producer's `closed` waker, if the stream has just become closed.
    pub(crate) fn take_closed_waker(&mut self) -> Option<Waker> {
        if self.is_closed() {
            self.closed_waker.take()
        } else {
            None
        }
    }

    /// The outcome seen by result awaiters, if the stream has ended.
    pub(crate) fn outcome(&self) -> Option<Result<&R, StreamError<&F>>> {
        match &self.state {
            State::Open => None,
            State::Finished(result) => Some(Ok(result)),
            State::Failed(error) => Some(Err(StreamError::Failed(error))),
            State::ProducerDropped => Some(Err(StreamError::ProducerDropped)),
        }
    }
}

/// Wakers taken out under the lock, to be woken after it is released.
#[must_use = "wakers must be woken after the lock is released"]
pub(crate) struct Wakeups {
    consumer: Option<Waker>,
    awaiters: WakerSlab,
}

impl Wakeups {
    pub(crate) fn wake(self) {
        if let Some(waker) = self.consumer {
            waker.wake();
        }
        self.awaiters.wake_all();
    }
}

/// A stream shared by its handles.
pub(crate) fn new_shared<E, R, F>() -> Shared<E, R, F> {
    SpinLock::new(Inner::new())
}
