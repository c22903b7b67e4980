//! The state shared by the producer, the consumer and the result awaiters.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::mem;
use core::task::Waker;

use super::error::{RefusalReason, StreamError};
use crate::sync::SpinLock;

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
    /// Parked result awaiters, keyed by slot index.
    pub(crate) awaiters: Awaiters,
}

impl<E, R, F> Inner<E, R, F> {
    pub(crate) fn new() -> Self {
        Self {
            queue: VecDeque::new(),
            state: State::Open,
            consumer_waker: None,
            consumer_alive: true,
            result_handles: 0,
            awaiters: Awaiters::default(),
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
            awaiters: mem::take(&mut self.awaiters).slots,
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
    awaiters: Vec<Slot>,
}

impl Wakeups {
    pub(crate) fn wake(self) {
        if let Some(waker) = self.consumer {
            waker.wake();
        }
        for slot in self.awaiters {
            if let Slot::Parked(waker) = slot {
                waker.wake();
            }
        }
    }
}

/// A slab of result-awaiter wakers: O(1) insert, update and removal.
#[derive(Default)]
pub(crate) struct Awaiters {
    slots: Vec<Slot>,
    /// Head of the free list threaded through `Slot::Vacant`, or `slots.len()`.
    next_vacant: usize,
}

enum Slot {
    Parked(Waker),
    Vacant { next: usize },
}

impl Awaiters {
    /// Stores `waker` in the slot `key` (allocating one if `None`). Returns a
    /// replaced waker that does not wake the same task, for the caller to drop
    /// outside the lock.
    pub(crate) fn park(&mut self, key: &mut Option<usize>, waker: &Waker) -> Option<Waker> {
        if let Some(index) = *key {
            if let Some(Slot::Parked(stored)) = self.slots.get_mut(index) {
                if stored.will_wake(waker) {
                    return None;
                }
                return Some(mem::replace(stored, waker.clone()));
            }
        }
        let index = self.next_vacant;
        let slot = Slot::Parked(waker.clone());
        if index == self.slots.len() {
            self.slots.push(slot);
            self.next_vacant = self.slots.len();
        } else {
            match mem::replace(&mut self.slots[index], slot) {
                Slot::Vacant { next } => self.next_vacant = next,
                Slot::Parked(_) => unreachable!("free list points at a parked slot"),
            }
        }
        *key = Some(index);
        None
    }

    /// Frees the slot `key`, returning its waker for the caller to drop
    /// outside the lock.
    pub(crate) fn remove(&mut self, key: usize) -> Option<Waker> {
        let slot = self.slots.get_mut(key)?;
        if let Slot::Vacant { .. } = slot {
            return None;
        }
        let vacant = Slot::Vacant {
            next: self.next_vacant,
        };
        self.next_vacant = key;
        match mem::replace(slot, vacant) {
            Slot::Parked(waker) => Some(waker),
            Slot::Vacant { .. } => None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| matches!(slot, Slot::Parked(_)))
            .count()
    }
}

/// A stream shared by its handles.
pub(crate) fn new_shared<E, R, F>() -> Shared<E, R, F> {
    SpinLock::new(Inner::new())
}
