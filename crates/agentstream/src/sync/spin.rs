//! The fallback lock: a test-and-test-and-set spin lock.
//!
//! Used when neither the `std` nor the `critical-section` feature is on:
//! a `no_std` host that has atomics but told us nothing about its
//! scheduler.
//!
//! # The hazard
//!
//! A waiter spins until the holder leaves. Every critical section in the
//! crate is short (a `VecDeque` push or swap, a state check, taking or
//! storing a `Waker`; no waker is ever woken inside one), so on a
//! single-threaded host (wasm without threads, one executor on a
//! microcontroller without interrupts that touch streams) the lock is never
//! contended and never spins. But if the holder can be preempted (an OS
//! thread descheduled, more workers than cores, CPU quota throttling), the
//! other side burns its whole time slice; and if the holder can be
//! interrupted by code that takes the same lock (an interrupt handler on a
//! microcontroller), it deadlocks. Enable `std` on hosted targets and
//! `critical-section` on embedded ones.
//!
//! The lock is not reentrant: code inside a critical section must not call
//! back into the same stream.

use super::{AtomicBool, Ordering};

/// Called in every busy-wait iteration.
///
/// Under loom this yields to the model checker; without it a spin loop would
/// make loom explore an unbounded number of interleavings.
#[inline]
fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

#[cfg(loom)]
use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` with loom's closure-based access API.
#[cfg(not(loom))]
#[derive(Debug)]
struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    #[inline]
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Mutual exclusion over a `T`, with closure-scoped access.
pub(crate) struct Lock<T> {
    /// `true` while some thread is inside [`Lock::with`].
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
unsafe impl<T: Send> Sync for Lock<T> {}
// SAFETY: owning the lock is owning the `T`.
unsafe impl<T: Send> Send for Lock<T> {}

impl<T> Lock<T> {
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
