//! The lock of embedded targets: a critical section from the
//! [`critical-section`](https://docs.rs/critical-section) crate.
//!
//! The firmware (or its HAL) supplies the implementation: on a single-core
//! microcontroller it masks interrupts for the few instructions of a
//! critical section, on a multi-core one it also takes a hardware spinlock.
//! Either way an interrupt handler that pushes an event can never preempt a
//! task that holds the lock, which a spin lock would turn into a deadlock.
//!
//! Every stream shares the one global critical section, so this is the
//! wrong choice on a multi-threaded host: enable `std` there.

use core::cell::RefCell;

/// Mutual exclusion over a `T`, with closure-scoped access.
pub(crate) struct Lock<T>(critical_section::Mutex<RefCell<T>>);

impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(critical_section::Mutex::new(RefCell::new(value)))
    }

    /// Runs `f` with exclusive access to the protected value.
    ///
    /// The crate never re-enters a lock from inside its own critical
    /// section, so the `RefCell` borrow cannot fail.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        critical_section::with(|cs| f(&mut self.0.borrow_ref_mut(cs)))
    }
}
