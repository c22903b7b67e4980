//! Synchronization primitives, routed through a facade so that the same code
//! is model-checked by [loom](https://docs.rs/loom) under `--cfg loom`.
//!
//! Everything in the crate that is shared between threads goes through this
//! module: atomics, `UnsafeCell`, `Arc` and the spin hint. Outside loom the
//! facade compiles to the plain `core`/`alloc` items with no overhead.

mod spin_lock;
mod waker_slab;

pub(crate) use spin_lock::SpinLock;
pub(crate) use waker_slab::WakerSlab;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

#[cfg(not(loom))]
pub(crate) use alloc::sync::Arc;
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicBool, Ordering};

/// Called in every busy-wait iteration.
///
/// Under loom this yields to the model checker; without it a spin loop would
/// make loom explore an unbounded number of interleavings.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` with loom's closure-based access API.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
