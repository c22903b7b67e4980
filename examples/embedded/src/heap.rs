//! The global allocator: a fixed heap (embedded-alloc's linked-list
//! allocator over a static array) wrapped to count the bytes in use and
//! their high-water mark.

use core::alloc::{GlobalAlloc, Layout};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicUsize, Ordering};

use embedded_alloc::LlffHeap;

/// The heap's size: 128 KiB (the agent scenarios are the real Pi's, with
/// full event sequences compared as JSON values; the largest peaks pass
/// 64 KiB).
pub const HEAP_SIZE: usize = 128 * 1024;

/// The heap's memory (in `.bss`, zeroed by the reset handler).
static mut HEAP_MEMORY: [MaybeUninit<u8>; HEAP_SIZE] = [MaybeUninit::uninit(); HEAP_SIZE];

/// A heap that counts what it hands out.
pub struct CountingHeap {
    heap: LlffHeap,
    in_use: AtomicUsize,
    peak: AtomicUsize,
}

impl CountingHeap {
    /// An empty heap; [`init`](Self::init) gives it its memory.
    pub const fn empty() -> Self {
        Self {
            heap: LlffHeap::empty(),
            in_use: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Gives the heap its memory. Call once, before the first allocation.
    pub fn init(&self) {
        // SAFETY: called once from `main` before anything allocates; the
        // static array is used by nothing else.
        unsafe {
            let start = core::ptr::addr_of_mut!(HEAP_MEMORY) as usize;
            self.heap.init(start, HEAP_SIZE);
        }
    }

    /// The bytes allocated now.
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }

    /// The most bytes allocated at once since the last
    /// [`reset_peak`](Self::reset_peak).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts a new high-water mark from what is in use now.
    pub fn reset_peak(&self) {
        self.peak.store(self.in_use(), Ordering::Relaxed);
    }
}

// SAFETY: forwards to `LlffHeap` (a `GlobalAlloc`), adding only counters.
unsafe impl GlobalAlloc for CountingHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let ptr = unsafe { self.heap.alloc(layout) };
        if !ptr.is_null() {
            let now = self.in_use.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.in_use.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { self.heap.dealloc(ptr, layout) }
    }
}
