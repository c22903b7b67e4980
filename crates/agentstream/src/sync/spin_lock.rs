//! A minimal test-and-test-and-set spin lock.
//!
//! # Why a spin lock
//!
//! The core is `no_std`, so there is no OS mutex to park on. Every critical
//! section guarded by this lock in agentstream is a handful of instructions:
//! a `VecDeque` push or swap, a state check, taking or storing a `Waker`.
//! No waker is ever *woken* while the lock is held, and no user callback other
//! than `Waker::clone`/`will_wake` and the global allocator runs inside it.
//! Contention is therefore short by construction: at most one producer, one
//! consumer and the (cold) result awaiters ever touch a given lock.
//!
//! On single-threaded hosts (wasm) the lock is never contended, so it never
//! spins and never blocks. The lock is not reentrant: code inside a critical
//! section must not call back into the same stream.

use super::{spin_hint, AtomicBool, Ordering, UnsafeCell};

/// Mutual exclusion over a `T`, with closure-scoped access.
pub(crate) struct SpinLock<T> {
    /// `true` while some thread is inside [`SpinLock::with`].
    ///
    /// Invariant: the thread that flipped it from `false` to `true` (with
    /// `Acquire`) is the only one that may access `value` until it stores
    /// `false` again (with `Release`).
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one thread at a time, so sharing the
// lock between threads only ever moves access to `T` between threads. That is
// sound exactly when `T: Send`, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: owning the lock is owning the `T`.
unsafe impl<T: Send> Send for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with exclusive access to the protected value.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.acquire();
        // Releases the lock even if `f` unwinds (a panicking `Waker::clone`).
        let _release = Release(&self.locked);
        self.value.with_mut(|value| {
            // SAFETY: `acquire` returned, so this thread set `locked` and no
            // other thread can reach `value` until `_release` is dropped,
            // which happens after this closure returns. The `&mut T` does not
            // escape `f`.
            f(unsafe { &mut *value })
        })
    }

    #[inline]
    fn acquire(&self) {
        while self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Wait on plain loads so that waiting does not keep stealing the
            // cache line from the holder. (loom lets a relaxed load return a
            // stale value forever, so under loom the read-modify-write above,
            // which always sees the latest value, is retried instead.)
            #[cfg(not(loom))]
            while self.locked.load(Ordering::Relaxed) {
                spin_hint();
            }
            #[cfg(loom)]
            spin_hint();
        }
    }
}

struct Release<'a>(&'a AtomicBool);

impl Drop for Release<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl<T> core::fmt::Debug for SpinLock<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SpinLock")
            .field("locked", &self.locked.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
