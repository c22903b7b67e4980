//! The state shared by the producer, the consumer and the observers.

use alloc::collections::VecDeque;
use core::mem;
use core::task::{Poll, Waker};

use super::error::{RefusalReason, StreamError};
use crate::sync::{AtomicBool, Lock, Ordering, WakerSlab};

/// The single allocation behind one stream.
pub(crate) struct Shared<E, R, F> {
    /// Whether `Inner::state` has left `Open`: set under the lock, in the
    /// same critical section as the transition, and read without it. It
    /// never goes back, so a `true` read needs no lock to be acted on.
    terminal: AtomicBool,
    inner: Lock<Inner<E, R, F>>,
}

impl<E, R, F> Shared<E, R, F> {
    pub(crate) fn new() -> Self {
        Self {
            terminal: AtomicBool::new(false),
            inner: Lock::new(Inner::new()),
        }
    }

    /// Runs `f` under the lock.
    #[inline]
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Inner<E, R, F>) -> T) -> T {
        self.inner.with(f)
    }

    /// Whether the stream has finished, failed or lost its producer; one
    /// atomic load.
    #[inline]
    pub(crate) fn is_terminal(&self) -> bool {
        self.terminal.load(Ordering::Acquire)
    }

    /// Moves the stream to `state` if it is still open, under the lock.
    /// Returns the wakers to wake after the lock is released, or hands
    /// `value` back with the reason the stream is already terminal.
    pub(crate) fn terminate<T>(
        &self,
        value: T,
        state: impl FnOnce(T) -> State<R, F>,
    ) -> Result<Wakeups, (RefusalReason, T)> {
        let terminal = &self.terminal;
        self.with(|inner| match inner.refusal() {
            Some(reason) => Err((reason, value)),
            None => {
                terminal.store(true, Ordering::Release);
                Ok(inner.terminate(state(value)))
            }
        })
    }
}

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
    /// released as soon as nobody can read the events, and no event is ever
    /// dropped by an observer (see [`Observed`]).
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
    /// Parked `Closed` futures (any number: each has its own slot, so two
    /// waiters never evict each other).
    ///
    /// Invariant: emptied, once, by whichever drop makes the stream closed
    /// (`consumer_alive` false and `result_handles` zero); nothing parks
    /// after that, because a closed stream resolves `Closed` at once.
    pub(crate) closed_waiters: WakerSlab,
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
            closed_waiters: WakerSlab::new(),
            awaiters: WakerSlab::new(),
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
    /// the caller can wake them once the lock is released. Only through
    /// [`Shared::terminate`], which also sets the lock-free flag.
    fn terminate(&mut self, state: State<R, F>) -> Wakeups {
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

    /// The `Closed` waiters to wake, if the stream has just become closed.
    pub(crate) fn take_closed_waiters(&mut self) -> Option<WakerSlab> {
        if self.is_closed() && !self.closed_waiters.is_empty() {
            Some(mem::take(&mut self.closed_waiters))
        } else {
            None
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

/// What the observers of a stream (its [`ResultFuture`]s and its producer's
/// [`Closed`] futures) do with the shared state, without naming the event
/// type: they hold the state as `Arc<dyn Observed<R, F>>`.
///
/// No method touches `Inner::queue`, so an observer never reads, moves or
/// drops an event. When an observer holds the last reference, the queue is
/// empty (the consumer is gone, see the invariant on `Inner::queue`), so
/// dropping the state frees at most an empty buffer.
///
/// [`ResultFuture`]: super::ResultFuture
/// [`Closed`]: super::Closed
pub(crate) trait Observed<R, F> {
    /// Registers a new result handle.
    fn add_result_handle(&self);

    /// The terminal result, or `Pending` with `waker` parked in slot `key`.
    fn poll_result(
        &self,
        key: &mut Option<usize>,
        waker: &Waker,
    ) -> Poll<Result<R, StreamError<F>>>
    where
        R: Clone,
        F: Clone;

    /// The terminal result when the stream finished with one, without
    /// parking anything.
    fn peek_result(&self) -> Option<R>
    where
        R: Clone;

    /// Unregisters a result handle parked in `key`, if any.
    fn drop_result_handle(&self, key: Option<usize>);

    /// `Ready` once the stream is closed, or `Pending` with `waker` parked.
    fn poll_closed(&self, key: &mut Option<usize>, waker: &Waker) -> Poll<()>;

    /// Leaves the `Closed` slot `key`.
    fn drop_closed(&self, key: usize);
}

impl<E, R, F> Observed<R, F> for Shared<E, R, F> {
    fn add_result_handle(&self) {
        self.with(|inner| inner.result_handles += 1);
    }

    fn poll_result(&self, key: &mut Option<usize>, waker: &Waker) -> Poll<Result<R, StreamError<F>>>
    where
        R: Clone,
        F: Clone,
    {
        let (poll, replaced) = self.with(|inner| match &inner.state {
            State::Open => (Poll::Pending, inner.awaiters.park(key, waker)),
            State::Finished(result) => (Poll::Ready(Ok(result.clone())), None),
            State::Failed(error) => (Poll::Ready(Err(StreamError::Failed(error.clone()))), None),
            State::ProducerDropped => (Poll::Ready(Err(StreamError::ProducerDropped)), None),
        });
        drop(replaced);
        poll
    }

    fn peek_result(&self) -> Option<R>
    where
        R: Clone,
    {
        self.with(|inner| match &inner.state {
            State::Finished(result) => Some(result.clone()),
            _ => None,
        })
    }

    fn drop_result_handle(&self, key: Option<usize>) {
        let (parked, closed) = self.with(|inner| {
            inner.result_handles -= 1;
            let parked = key.and_then(|key| inner.awaiters.remove(key));
            (parked, inner.take_closed_waiters())
        });
        drop(parked);
        if let Some(waiters) = closed {
            waiters.wake_all();
        }
    }

    fn poll_closed(&self, key: &mut Option<usize>, waker: &Waker) -> Poll<()> {
        let parked = self.with(|inner| {
            if inner.is_closed() {
                Ok(())
            } else {
                Err(inner.closed_waiters.park(key, waker))
            }
        });
        match parked {
            Ok(()) => Poll::Ready(()),
            Err(replaced) => {
                drop(replaced);
                Poll::Pending
            }
        }
    }

    fn drop_closed(&self, key: usize) {
        let parked = self.with(|inner| inner.closed_waiters.remove(key));
        drop(parked);
    }
}
