//! Allocation budget of EventStream, measured with a counting global
//! allocator: at most 2 allocations per stream, none per event in steady
//! state, and bounded memory kept after a burst has drained.
#![cfg(not(loom))]

use agentstream::event_stream::EventStream;
use agentstream_testkit::{measure, CountingAllocator};

/// The documented retention limit: drained buffers keep room for at most
/// this many events.
const RETAINED_CAPACITY: usize = 1024;
use futures_util::StreamExt;

/// The workspace's one counting allocator; `measure` counts this thread only.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Polls once with a waker that allocates nothing, so only the stream's own
/// allocations are counted.
fn expect_ready<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
    match std::pin::pin!(future).poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("future is pending"),
    }
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
