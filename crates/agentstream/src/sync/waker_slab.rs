//! A slab of wakers for futures that wait on the same event.
//!
//! Each waiting future owns a slot key. Parking, re-parking with a new
//! waker, and leaving are O(1); the event wakes every parked waker once.

use alloc::vec::Vec;
use core::mem;
use core::task::Waker;

/// A slab of parked wakers, one slot per waiting future: O(1) insert, update and removal.
#[derive(Default)]
pub(crate) struct WakerSlab {
    slots: Vec<Slot>,
    /// Head of the free list threaded through `Slot::Vacant`, or `slots.len()`.
    next_vacant: usize,
    /// Number of `Slot::Parked` entries, so that `len` is O(1) under a lock.
    parked: usize,
}

enum Slot {
    Parked(Waker),
    Vacant { next: usize },
}

impl WakerSlab {
    /// An empty slab; allocates nothing until the first park.
    pub(crate) const fn new() -> Self {
        Self {
            slots: Vec::new(),
            next_vacant: 0,
            parked: 0,
        }
    }

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
        self.parked += 1;
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
        self.parked -= 1;
        match mem::replace(slot, vacant) {
            Slot::Parked(waker) => Some(waker),
            Slot::Vacant { .. } => None,
        }
    }

    /// Number of parked wakers.
    pub(crate) fn len(&self) -> usize {
        self.parked
    }

    /// Whether no waker is parked.
    pub(crate) fn is_empty(&self) -> bool {
        self.parked == 0
    }

    /// Wakes every parked waker, consuming the slab.
    pub(crate) fn wake_all(self) {
        for slot in self.slots {
            if let Slot::Parked(waker) = slot {
                waker.wake();
            }
        }
    }
}
