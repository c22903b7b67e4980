//! A counting global allocator for allocation-budget tests. Including this
//! module installs it as the binary's global allocator.
//!
//! Shared by the core's `tests/allocations.rs` and, through `#[path]`, the
//! workspace suite's `tests/allocations.rs`, so the unsafe forwarding lives
//! in one place.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations of threads that opted in, so the test harness's
/// own threads don't disturb the figures.
pub struct CountingAllocator;

std::thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn record(allocations: usize, bytes: isize) {
    // `try_with`: thread-local storage may be gone while a thread exits.
    let _ = COUNTING.try_with(|counting| {
        if counting.get() {
            ALLOCATIONS.with(|n| n.set(n.get() + allocations));
            LIVE_BYTES.with(|n| n.set(n.get() + bytes));
        }
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// bookkeeping only touches const-initialized thread-locals, which never
// allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(1, layout.size() as isize);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(0, -(layout.size() as isize));
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(1, new_size as isize - layout.size() as isize);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `f`; returns the allocations it made and the bytes it left allocated
/// (including what its output holds), then drops the output.
pub fn measure<T>(f: impl FnOnce() -> T) -> (usize, isize) {
    ALLOCATIONS.with(|n| n.set(0));
    LIVE_BYTES.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let output = f();
    COUNTING.with(|c| c.set(false));
    drop(output);
    (ALLOCATIONS.with(Cell::get), LIVE_BYTES.with(Cell::get))
}
