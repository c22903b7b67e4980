//! [`CountingAllocator`], the one counting global allocator of the
//! workspace, for the allocation-counting tests and benches.
//!
//! It depends on `std` alone (no runtime, no networking), so the core's
//! tests can use it on every target they run on, `wasm32-wasip1` included.
//!
//! Installing it is the binary's choice; this crate never does it for
//! them:
//!
//! ```
//! use agentstream_testkit::{measure, CountingAllocator};
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! fn main() {
//!     let (allocations, live) = measure(|| vec![1u64, 2, 3]);
//!     assert_eq!((allocations, live), (1, 24));
//! }
//! ```
//!
//! It keeps two sets of figures:
//!
//! - **this thread, opted in**: [`measure`] counts the allocations and the
//!   net bytes of one closure on the calling thread only, so a test
//!   harness's other threads (or a runtime's workers) do not disturb the
//!   figures;
//! - **the whole process**: [`allocations`] and [`live_bytes`] count every
//!   thread, for tests whose work runs on runtime worker threads (leak
//!   checks) and for benches that count a whole pass.
//!
//! Without the allocator installed, every figure stays zero.

// A global allocator implements `GlobalAlloc`, an unsafe trait.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// A global allocator that forwards to [`System`] and counts. See the
/// [crate documentation](crate).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

/// Every allocation and reallocation of the process since it started.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// The bytes currently allocated by the whole process.
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

std::thread_local! {
    // Const-initialized and without destructors: touching them from inside
    // the allocator never allocates and never registers a TLS destructor.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static THREAD_ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static THREAD_LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    static THREAD_PEAK_BYTES: Cell<isize> = const { Cell::new(0) };
    static THREAD_ALLOCATED_BYTES: Cell<usize> = const { Cell::new(0) };
}

/// Books one allocator call: `allocations` new blocks (0 or 1) and a change
/// of `bytes` in what is allocated.
fn record(allocations: usize, bytes: isize) {
    // Relaxed: the counters are independent tallies. A reader that needs
    // another thread's calls counted synchronizes with that thread anyway
    // (a join, a channel), which orders the increments before the read.
    ALLOCATIONS.fetch_add(allocations, Ordering::Relaxed);
    LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed);
    // `try_with`: a thread's locals may already be gone while it exits.
    let _ = MEASURING.try_with(|measuring| {
        if measuring.get() {
            THREAD_ALLOCATIONS.with(|n| n.set(n.get() + allocations));
            let live = THREAD_LIVE_BYTES.with(|n| {
                n.set(n.get() + bytes);
                n.get()
            });
            THREAD_PEAK_BYTES.with(|peak| peak.set(peak.get().max(live)));
            if bytes > 0 {
                THREAD_ALLOCATED_BYTES
                    .with(|n| n.set(n.get().saturating_add(bytes.unsigned_abs())));
            }
        }
    });
}

/// The size of a layout as a signed byte count.
fn bytes(size: usize) -> isize {
    // Layout sizes never exceed `isize::MAX`, so this cannot wrap.
    size as isize
}

// SAFETY: every method forwards its arguments unchanged to `System`, which
// upholds `GlobalAlloc`'s contract, and returns what `System` returned; the
// bookkeeping around it only updates atomics and const-initialized
// thread-locals, which neither allocate nor unwind.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: our caller upholds `alloc`'s contract for `layout`.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(1, bytes(layout.size()));
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: our caller upholds `alloc_zeroed`'s contract for `layout`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(1, bytes(layout.size()));
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: our caller guarantees that `ptr` was allocated by this
        // allocator, hence by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        record(0, -bytes(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: our caller guarantees that `ptr` came from this allocator
        // (so from `System`) with `layout`, and that `new_size` is valid.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(1, bytes(new_size) - bytes(layout.size()));
        }
        new
    }
}

/// Runs `f` and returns the allocations (and reallocations) it made on
/// this thread and the bytes it left allocated, including what its output
/// holds; then drops the output.
///
/// Only the calling thread is counted, and measurements do not nest.
pub fn measure<T>(f: impl FnOnce() -> T) -> (usize, isize) {
    THREAD_ALLOCATIONS.with(|n| n.set(0));
    THREAD_LIVE_BYTES.with(|n| n.set(0));
    THREAD_PEAK_BYTES.with(|n| n.set(0));
    MEASURING.with(|m| m.set(true));
    let output = f();
    MEASURING.with(|m| m.set(false));
    drop(output);
    (
        THREAD_ALLOCATIONS.with(Cell::get),
        THREAD_LIVE_BYTES.with(Cell::get),
    )
}

/// Runs `f` and returns the most bytes it had allocated at once on this
/// thread (its high-water mark, relative to the start), with its output.
///
/// ```
/// use agentstream_testkit::{peak_bytes, CountingAllocator};
///
/// #[global_allocator]
/// static ALLOCATOR: CountingAllocator = CountingAllocator;
///
/// fn main() {
///     let (peak, ()) = peak_bytes(|| drop(vec![0u8; 1000]));
///     assert_eq!(peak, 1000);
/// }
/// ```
pub fn peak_bytes<T>(f: impl FnOnce() -> T) -> (isize, T) {
    THREAD_LIVE_BYTES.with(|n| n.set(0));
    THREAD_PEAK_BYTES.with(|n| n.set(0));
    MEASURING.with(|m| m.set(true));
    let output = f();
    MEASURING.with(|m| m.set(false));
    (THREAD_PEAK_BYTES.with(Cell::get), output)
}

/// Runs `f` and returns the bytes it allocated on this thread in all
/// (every allocation's size and every reallocation's growth, freed or
/// not), with its output: the work of copying, where [`peak_bytes`] is
/// what is held at once.
pub fn allocated_bytes<T>(f: impl FnOnce() -> T) -> (usize, T) {
    THREAD_ALLOCATED_BYTES.with(|n| n.set(0));
    MEASURING.with(|m| m.set(true));
    let output = f();
    MEASURING.with(|m| m.set(false));
    (THREAD_ALLOCATED_BYTES.with(Cell::get), output)
}

/// Allocations and reallocations made by every thread so far.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Bytes currently allocated by every thread together.
pub fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOCATOR: CountingAllocator = CountingAllocator;

    #[test]
    fn measure_counts_this_threads_allocations_and_what_the_output_keeps() {
        let (allocations, live) = measure(|| Vec::<u64>::with_capacity(4));
        assert_eq!(allocations, 1);
        assert_eq!(live, 32, "the output is counted before it is dropped");
        let (allocations, live) = measure(|| drop(Vec::<u8>::with_capacity(16)));
        assert_eq!((allocations, live), (1, 0));
    }

    #[test]
    fn realloc_counts_as_an_allocation_and_books_the_size_change() {
        let (allocations, live) = measure(|| {
            let mut buffer = Vec::<u8>::with_capacity(8);
            // Room for 24 in all: grows the block from 8 to 24 bytes.
            buffer.reserve_exact(24);
            buffer
        });
        assert_eq!(allocations, 2);
        assert_eq!(live, 24);
    }

    #[test]
    fn the_process_wide_figures_see_every_thread() {
        let before = allocations();
        let held = std::thread::spawn(|| Box::new([0u8; 64]))
            .join()
            .expect("the thread allocated");
        assert!(allocations() > before);
        assert!(live_bytes() >= 64);
        drop(held);
    }
}
