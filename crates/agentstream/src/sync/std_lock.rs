//! The lock of hosts with an operating system: `std::sync::Mutex`.
//!
//! A contended caller sleeps in the kernel (a futex on Linux) instead of
//! spinning, so a preempted holder never makes the other side burn its time
//! slice. Uncontended, locking costs one atomic read-modify-write and
//! unlocking one atomic store, the same as the spin lock.

#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(not(loom))]
use std::sync::Mutex;

/// Mutual exclusion over a `T`, with closure-scoped access.
pub(crate) struct Lock<T>(Mutex<T>);

impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(Mutex::new(value))
    }

    /// Runs `f` with exclusive access to the protected value.
    ///
    /// Poisoning is ignored: every critical section in the crate leaves the
    /// state consistent at each point where user code (`Waker::clone`, the
    /// allocator) could panic, exactly as with the spin lock, which has no
    /// poisoning.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}
