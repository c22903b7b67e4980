//! Synchronization primitives, routed through a facade so that the same code
//! is model-checked by [loom](https://docs.rs/loom) under `--cfg loom`.
//!
//! Everything in the crate that is shared between threads goes through this
//! module: the lock, atomics, `UnsafeCell`, `Arc` and the spin hint. Outside
//! loom the facade compiles to the plain `core`/`alloc`/`std` items with no
//! overhead.
//!
//! # The lock
//!
//! [`Lock`] is chosen by cargo feature, once for the whole crate:
//!
//! | features | lock | module |
//! |---|---|---|
//! | `std` (with or without `critical-section`) | `std::sync::Mutex` | `std_lock` |
//! | `critical-section` only | `critical_section::Mutex` | `critical_section_lock` |
//! | neither | test-and-test-and-set spin lock | `spin` |
//!
//! The rustc cfg `agentstream_spin_lock` forces the spin lock whatever the
//! features; it exists so that the benchmarks can compare both locks in one
//! run and is not meant for users. Under loom, `std` selects loom's mutex
//! and everything else the spin lock (loom cannot see a critical section's
//! implementation, and the spin lock's atomics are what needs checking).
//!
//! Every lock has the same closure-scoped API, `Lock::new` and `Lock::with`,
//! and the crate keeps to the same rules in every critical section: a few
//! instructions, no waker woken, no user code but `Waker::clone`/`will_wake`
//! and the allocator, no re-entry.

#[cfg(all(feature = "std", not(agentstream_spin_lock)))]
mod std_lock;
#[cfg(all(feature = "std", not(agentstream_spin_lock)))]
pub(crate) use std_lock::Lock;

#[cfg(all(
    feature = "critical-section",
    not(feature = "std"),
    not(agentstream_spin_lock),
    not(loom)
))]
mod critical_section_lock;
#[cfg(all(
    feature = "critical-section",
    not(feature = "std"),
    not(agentstream_spin_lock),
    not(loom)
))]
pub(crate) use critical_section_lock::Lock;

#[cfg(any(
    agentstream_spin_lock,
    all(not(feature = "std"), any(loom, not(feature = "critical-section")))
))]
mod spin;
#[cfg(any(
    agentstream_spin_lock,
    all(not(feature = "std"), any(loom, not(feature = "critical-section")))
))]
pub(crate) use spin::Lock;

mod waker_slab;

pub(crate) use waker_slab::WakerSlab;

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicBool, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, Ordering};

// Shared state lives in `alloc::sync::Arc` under loom too: the observers hold
// it as `Arc<dyn Trait>`, and loom's `Arc` cannot be coerced to an unsized
// type. The reference count is not ours to check; every access to the state
// behind it goes through the lock and atomics above, which loom does see.
