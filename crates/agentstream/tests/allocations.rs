//! Allocation budget of EventStream, measured with a counting global
//! allocator: at most 2 allocations per stream, none per event in steady
//! state, and bounded memory kept after a burst has drained.
#![cfg(not(loom))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use agentstream::event_stream::{EventStream, RETAINED_CAPACITY};
use futures_util::StreamExt;

/// Polls once with a waker that allocates nothing, so only the stream's own
/// allocations are counted.
fn expect_ready<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
    match std::pin::pin!(future).poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("future is pending"),
    }
}

/// Counts allocations made by threads that opted in, so the test harness's
/// own threads don't disturb the figures.
struct CountingAllocator;

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
// bookkeeping touches only const-initialized thread-locals, which never
// allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(1, layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(0, -(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(1, new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `f` and returns (allocations, net bytes still allocated) it caused.
fn measure(f: impl FnOnce()) -> (usize, isize) {
    ALLOCATIONS.with(|n| n.set(0));
    LIVE_BYTES.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    (ALLOCATIONS.with(Cell::get), LIVE_BYTES.with(Cell::get))
}

type Stream = EventStream<u64, u64, ()>;

#[test]
fn a_stream_lifecycle_costs_at_most_two_allocations() {
    let (allocations, live) = measure(|| {
        let (producer, mut events) = Stream::channel();
        producer.push(1).unwrap();
        producer.finish(2).unwrap();
        assert_eq!(expect_ready(events.next()), Some(Ok(1)));
        assert_eq!(expect_ready(events.next()), None);
        assert_eq!(expect_ready(events.result()), Ok(2));
    });
    assert!(allocations <= 2, "{allocations} allocations per stream");
    assert_eq!(live, 0, "everything is freed with the stream");
}

#[test]
fn steady_streaming_allocates_nothing_per_event() {
    let (producer, mut events) = Stream::channel();
    let mut cycle = |n: u64| {
        for event in 0..n {
            producer.push(event).unwrap();
        }
        for event in 0..n {
            assert_eq!(expect_ready(events.next()), Some(Ok(event)));
        }
    };
    cycle(64); // warm up: both buffers reach their working size
    cycle(64);
    let rounds = if cfg!(miri) { 10 } else { 1_000 };
    let (allocations, _) = measure(|| {
        for _ in 0..rounds {
            cycle(64);
        }
        for _ in 0..rounds {
            cycle(1);
        }
    });
    assert_eq!(
        allocations,
        0,
        "allocations over {} steady-state events",
        rounds * 65
    );
}

#[test]
fn memory_kept_after_a_drained_burst_is_bounded() {
    let burst: u64 = if cfg!(miri) { 5_000 } else { 1 << 20 };
    let (producer, mut events) = Stream::channel();
    let (_, live) = measure(|| {
        for event in 0..burst {
            producer.push(event).unwrap();
        }
        for event in 0..burst {
            assert_eq!(expect_ready(events.next()), Some(Ok(event)));
        }
        // One more round trip lets the consumer notice its drained buffer.
        producer.push(0).unwrap();
        assert_eq!(expect_ready(events.next()), Some(Ok(0)));
    });
    let bound = (2 * RETAINED_CAPACITY * std::mem::size_of::<u64>()) as isize;
    assert!(
        live <= bound,
        "{live} bytes kept after the burst (bound {bound})"
    );
}
