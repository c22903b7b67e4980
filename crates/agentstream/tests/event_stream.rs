//! The EventStream contract, tested by polling by hand with counting wakers.
#![cfg(not(loom))]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

use agentstream::event_stream::{EventStream, RefusalReason, StreamError};
use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use support::{expect_ready, CountingWaker};

type Stream3 = EventStream<&'static str, u32, String>;

fn poll_next<S: Stream + Unpin>(stream: &mut S, waker: &CountingWaker) -> Poll<Option<S::Item>> {
    waker.poll(&mut stream.next())
}

#[test]
fn first_terminal_call_wins_and_later_calls_are_refused_with_stable_wording() {
    let (producer, _events) = Stream3::channel();
    producer.finish(1).unwrap();

    let push = producer.push("late").unwrap_err();
    assert_eq!(push.reason(), RefusalReason::Finished);
    assert_eq!(
        push.to_string(),
        "EventStream is already terminal (finished)"
    );
    assert_eq!(push.into_inner(), "late");
    let finish = producer.finish(2).unwrap_err();
    assert_eq!(
        finish.to_string(),
        "EventStream is already terminal (finished)"
    );
    assert_eq!(finish.into_inner(), 2);
    let fail = producer.fail("no".into()).unwrap_err();
    assert!(fail.is_terminal());
    assert_eq!(
        fail.to_string(),
        "EventStream is already terminal (finished)"
    );

    let (producer, events) = Stream3::channel();
    producer.fail("boom".into()).unwrap();
    for error in [
        producer.push("late").unwrap_err().to_string(),
        producer.finish(3).unwrap_err().to_string(),
        producer.fail("again".into()).unwrap_err().to_string(),
    ] {
        assert_eq!(error, "EventStream is already terminal (failed)");
    }
    assert_eq!(
        expect_ready(events.result()),
        Err(StreamError::Failed("boom".to_string()))
    );
}

#[test]
fn buffered_events_keep_push_order() {
    let (producer, mut events) = Stream3::channel();
    for event in ["a", "b", "c"] {
        producer.push(event).unwrap();
    }
    producer.finish(0).unwrap();
    let waker = CountingWaker::new();
    for expected in ["a", "b", "c"] {
        assert_eq!(
            poll_next(&mut events, &waker),
            Poll::Ready(Some(Ok(expected)))
        );
    }
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
    assert_eq!(waker.wakes(), 0);
}

#[test]
fn events_to_a_parked_reader_keep_push_order_and_each_push_wakes_it_once() {
    let (producer, mut events) = Stream3::channel();
    let waker = CountingWaker::new();
    assert_eq!(poll_next(&mut events, &waker), Poll::Pending);
    producer.push("a").unwrap();
    assert_eq!(waker.wakes(), 1);
    // Pushed while the consumer is woken but has not polled yet: no new wake.
    producer.push("b").unwrap();
    assert_eq!(waker.wakes(), 1);
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("a"))));
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("b"))));
    assert_eq!(poll_next(&mut events, &waker), Poll::Pending);
    producer.push("c").unwrap();
    assert_eq!(waker.wakes(), 2);
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("c"))));
}

#[test]
fn nothing_is_woken_when_nothing_is_parked() {
    let (producer, mut events) = Stream3::channel();
    let waker = CountingWaker::new();
    producer.push("a").unwrap();
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("a"))));
    producer.push("b").unwrap();
    producer.finish(1).unwrap();
    assert_eq!(waker.wakes(), 0);
    assert_eq!(
        waker.clones(),
        0,
        "a consumer that never parked stores no waker"
    );
}

#[test]
fn repolling_with_the_same_waker_does_not_clone_it_again() {
    let (producer, mut events) = Stream3::channel();
    let waker = CountingWaker::new();
    for _ in 0..5 {
        assert_eq!(poll_next(&mut events, &waker), Poll::Pending);
    }
    assert_eq!(waker.clones(), 1);
    assert_eq!(waker.live_clones(), 1);
    producer.push("a").unwrap();
    assert_eq!(waker.wakes(), 1);
    assert_eq!(waker.live_clones(), 0, "the wake consumed the stored clone");
}

#[test]
fn finish_resolves_the_result_at_once_and_buffered_events_drain_first() {
    let (producer, mut events) = Stream3::channel();
    let result = events.result();
    producer.push("a").unwrap();
    producer.push("b").unwrap();
    producer.finish(7).unwrap();
    assert_eq!(expect_ready(result), Ok(7));
    let waker = CountingWaker::new();
    assert!(!events.is_terminated());
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("a"))));
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("b"))));
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
    assert!(events.is_terminated());
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
}

#[test]
fn finish_wakes_a_parked_consumer_which_then_ends() {
    let (producer, mut events) = Stream3::channel();
    let waker = CountingWaker::new();
    assert_eq!(poll_next(&mut events, &waker), Poll::Pending);
    producer.finish(1).unwrap();
    assert_eq!(waker.wakes(), 1);
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
}

#[test]
fn fail_resolves_the_result_then_the_consumer_gets_the_error_once_after_the_buffer() {
    let (producer, mut events) = Stream3::channel();
    let waker = CountingWaker::new();
    producer.push("a").unwrap();
    producer.fail("boom".into()).unwrap();
    assert_eq!(
        expect_ready(events.result()),
        Err(StreamError::Failed("boom".into()))
    );
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(Some(Ok("a"))));
    assert_eq!(
        poll_next(&mut events, &waker),
        Poll::Ready(Some(Err(StreamError::Failed("boom".into()))))
    );
    assert!(events.is_terminated());
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
    assert_eq!(poll_next(&mut events, &waker), Poll::Ready(None));
}

#[test]
fn fail_wakes_a_parked_consumer_and_parked_result_awaiters() {
    let (producer, mut events) = Stream3::channel();
    let consumer = CountingWaker::new();
    let awaiter = CountingWaker::new();
    let mut result = events.result();
    assert_eq!(poll_next(&mut events, &consumer), Poll::Pending);
    assert_eq!(awaiter.poll(&mut result), Poll::Pending);
    producer.fail("boom".into()).unwrap();
    assert_eq!((consumer.wakes(), awaiter.wakes()), (1, 1));
    assert_eq!(
        awaiter.poll(&mut result),
        Poll::Ready(Err(StreamError::Failed("boom".into())))
    );
}

#[test]
fn an_early_stop_leaves_the_rest_for_the_next_consumer_in_order() {
    let (producer, mut events) = Stream3::channel();
    for event in ["a", "b", "c", "d"] {
        producer.push(event).unwrap();
    }
    producer.finish(0).unwrap();
    let first: Vec<_> = support::expect_ready(events.by_ref().take(2).collect::<Vec<_>>());
    assert_eq!(first, [Ok("a"), Ok("b")]);
    let rest: Vec<_> = support::expect_ready(events.collect::<Vec<_>>());
    assert_eq!(rest, [Ok("c"), Ok("d")]);
}

#[test]
fn a_parked_consumer_that_goes_away_is_settled_and_its_successor_reads_in_order() {
    let (producer, mut events) = Stream3::channel();
    let first = CountingWaker::new();
    {
        let mut next = events.next();
        assert_eq!(first.poll(&mut next), Poll::Pending);
    } // the first consumer stops while parked
    let second = CountingWaker::new();
    assert_eq!(poll_next(&mut events, &second), Poll::Pending);
    assert_eq!(
        first.wakes(),
        1,
        "the abandoned park is woken, not left hanging"
    );
    assert_eq!(
        first.live_clones(),
        0,
        "the stream keeps nothing of the first consumer"
    );
    producer.push("a").unwrap();
    assert_eq!(second.wakes(), 1);
    assert_eq!(first.wakes(), 1);
    assert_eq!(poll_next(&mut events, &second), Poll::Ready(Some(Ok("a"))));
}

#[test]
fn push_never_waits_on_a_consumer_that_does_not_read() {
    let (producer, events) = EventStream::<u64, (), ()>::channel();
    let count = if cfg!(miri) { 1_000 } else { 100_000 };
    for n in 0..count {
        producer.push(n).unwrap();
    }
    assert_eq!(events.buffered_len(), count as usize);
}

#[test]
fn dropping_the_producer_ends_the_consumer_and_the_result_with_a_distinct_error() {
    let (producer, mut events) = Stream3::channel();
    let consumer = CountingWaker::new();
    let awaiter = CountingWaker::new();
    let mut result = events.result();
    producer.push("a").unwrap();
    assert_eq!(awaiter.poll(&mut result), Poll::Pending);
    drop(producer);
    assert_eq!(awaiter.wakes(), 1);
    assert_eq!(
        awaiter.poll(&mut result),
        Poll::Ready(Err(StreamError::ProducerDropped))
    );
    assert_eq!(
        poll_next(&mut events, &consumer),
        Poll::Ready(Some(Ok("a")))
    );
    assert_eq!(
        poll_next(&mut events, &consumer),
        Poll::Ready(Some(Err(StreamError::ProducerDropped)))
    );
    assert_eq!(poll_next(&mut events, &consumer), Poll::Ready(None));
}

#[test]
fn dropping_the_producer_wakes_a_parked_consumer() {
    let (producer, mut events) = Stream3::channel();
    let consumer = CountingWaker::new();
    assert_eq!(poll_next(&mut events, &consumer), Poll::Pending);
    drop(producer);
    assert_eq!(consumer.wakes(), 1);
    assert_eq!(
        poll_next(&mut events, &consumer),
        Poll::Ready(Some(Err(StreamError::ProducerDropped)))
    );
}

#[test]
fn dropping_a_finished_producer_changes_nothing() {
    let (producer, mut events) = Stream3::channel();
    producer.finish(5).unwrap();
    drop(producer);
    assert_eq!(expect_ready(events.result()), Ok(5));
    assert_eq!(expect_ready(events.next()), None);
}

/// Counts how many values are dropped.
#[derive(Debug)]
struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_push_after_every_observer_is_gone_is_refused_as_closed() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (producer, events) = EventStream::<DropCounter, (), ()>::channel();
    producer.push(DropCounter(drops.clone())).unwrap();
    let result = events.result();
    drop(events);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "buffered events are freed with the consumer"
    );
    assert!(!producer.is_closed());
    // A result awaiter remains: the event is discarded, the push succeeds.
    producer.push(DropCounter(drops.clone())).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    drop(result);
    assert!(producer.is_closed());
    let refused = producer.push(DropCounter(drops.clone())).unwrap_err();
    assert_eq!(refused.reason(), RefusalReason::Closed);
    assert_eq!(
        refused.to_string(),
        "EventStream is closed: no consumer or result awaiter is left"
    );
    drop(refused);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[derive(Debug, Clone)]
struct CountedError(#[allow(dead_code)] Arc<AtomicUsize>);
impl Drop for CountedError {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_failed_result_nobody_awaits_is_dropped_silently() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (producer, events) = EventStream::<(), (), CountedError>::channel();
    producer.fail(CountedError(drops.clone())).unwrap();
    drop(events);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(producer);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn many_result_awaiters_are_each_woken_once_and_dropped_ones_leave_nothing() {
    let (producer, events) = Stream3::channel();
    let wakers: Vec<CountingWaker> = (0..10).map(|_| CountingWaker::new()).collect();
    let mut futures: Vec<_> = (0..10).map(|_| events.result()).collect();
    for (waker, future) in wakers.iter().zip(&mut futures) {
        assert_eq!(waker.poll(future), Poll::Pending);
        assert_eq!(waker.poll(future), Poll::Pending);
        assert_eq!(waker.clones(), 1);
    }
    // Awaiters 0..3 give up; their slots are freed and reused.
    for future in futures.drain(..3) {
        drop(future);
    }
    for waker in &wakers[..3] {
        assert_eq!(waker.live_clones(), 0);
    }
    let late = CountingWaker::new();
    let mut late_future = events.result();
    assert_eq!(late.poll(&mut late_future), Poll::Pending);
    producer.finish(9).unwrap();
    for waker in &wakers[3..] {
        assert_eq!(waker.wakes(), 1);
    }
    assert_eq!(late.wakes(), 1);
    for (waker, future) in wakers[3..].iter().zip(&mut futures) {
        assert_eq!(waker.poll(future), Poll::Ready(Ok(9)));
    }
    assert_eq!(wakers[0].wakes(), 0);
}

#[test]
fn a_result_awaiter_moving_to_another_task_replaces_its_waker() {
    let (producer, events) = Stream3::channel();
    let mut result = events.result();
    let first = CountingWaker::new();
    let second = CountingWaker::new();
    assert_eq!(first.poll(&mut result), Poll::Pending);
    assert_eq!(second.poll(&mut result), Poll::Pending);
    assert_eq!(first.live_clones(), 0);
    producer.finish(1).unwrap();
    assert_eq!((first.wakes(), second.wakes()), (0, 1));
}

#[test]
fn handles_are_send_and_sync_when_their_types_are() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<EventStream<String, Vec<u8>, String>>();
    send_sync::<agentstream::Producer<String, Vec<u8>, String>>();
    send_sync::<agentstream::ResultFuture<Vec<u8>, String>>();
}

#[test]
fn debug_output_shows_the_state() {
    let (producer, events) = Stream3::channel();
    producer.push("a").unwrap();
    let text = format!("{events:?}");
    assert!(
        text.contains("state: \"open\"") && text.contains("buffered: 1"),
        "{text}"
    );
    producer.finish(1).unwrap();
    assert!(format!("{events:?}").contains("finished"));
    assert!(format!("{producer:?}").contains("terminal: true"));
}

const THREADED_EVENTS: u32 = if cfg!(miri) { 200 } else { 10_000 };

#[test]
#[cfg_attr(target_os = "wasi", ignore = "needs threads")]
fn producer_and_consumer_on_different_threads() {
    let (producer, mut events) = EventStream::<u32, u32, ()>::channel();
    let result = events.result();
    let thread = std::thread::spawn(move || {
        for n in 0..THREADED_EVENTS {
            producer.push(n).unwrap();
        }
        producer.finish(THREADED_EVENTS).unwrap();
    });
    let received = futures_executor::block_on(async {
        let mut received = 0;
        while let Some(event) = events.next().await {
            assert_eq!(event, Ok(received));
            received += 1;
        }
        received
    });
    thread.join().unwrap();
    assert_eq!(received, THREADED_EVENTS);
    assert_eq!(futures_executor::block_on(result), Ok(THREADED_EVENTS));
}

#[test]
fn closed_resolves_once_the_consumer_and_every_result_handle_are_gone() {
    let (producer, events) = Stream3::channel();
    let result = events.result();
    let waker = CountingWaker::new();
    let mut closed = producer.closed();
    assert_eq!(waker.poll(&mut closed), Poll::Pending);
    assert_eq!(waker.poll(&mut closed), Poll::Pending);
    assert_eq!(waker.clones(), 1);
    drop(events);
    assert_eq!(
        waker.wakes(),
        0,
        "a result handle still observes the stream"
    );
    assert_eq!(waker.poll(&mut closed), Poll::Pending);
    drop(result);
    assert_eq!(waker.wakes(), 1);
    assert_eq!(waker.poll(&mut closed), Poll::Ready(()));
    assert!(producer.is_closed());
}

#[test]
fn two_closed_waiters_each_park_without_waking_the_other() {
    let (producer, events) = Stream3::channel();
    let (first, second) = (CountingWaker::new(), CountingWaker::new());
    let (mut a, mut b) = (producer.closed(), producer.closed());
    // Alternate polls, as two tasks on one executor would: with a shared
    // slot each park would evict and wake the other, forever.
    for _ in 0..3 {
        assert_eq!(first.poll(&mut a), Poll::Pending);
        assert_eq!(second.poll(&mut b), Poll::Pending);
    }
    assert_eq!((first.wakes(), second.wakes()), (0, 0));
    assert_eq!((first.live_clones(), second.live_clones()), (1, 1));
    drop(events);
    assert_eq!((first.wakes(), second.wakes()), (1, 1));
    assert_eq!(first.poll(&mut a), Poll::Ready(()));
    assert_eq!(second.poll(&mut b), Poll::Ready(()));
    assert_eq!((first.live_clones(), second.live_clones()), (0, 0));
}

#[test]
fn a_dropped_closed_waiter_leaves_its_slot_and_its_waker() {
    let (producer, events) = Stream3::channel();
    let (first, second) = (CountingWaker::new(), CountingWaker::new());
    let mut a = producer.closed();
    let mut b = producer.closed();
    assert_eq!(first.poll(&mut a), Poll::Pending);
    assert_eq!(second.poll(&mut b), Poll::Pending);
    drop(a);
    assert_eq!(
        first.live_clones(),
        0,
        "the dropped waiter's waker is freed"
    );
    drop(events);
    assert_eq!((first.wakes(), second.wakes()), (0, 1));
    assert_eq!(second.poll(&mut b), Poll::Ready(()));
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "needs threads")]
fn result_and_closed_futures_do_not_name_the_event_type() {
    // A `!Send` event type does not stop the result from moving to another
    // thread: the future names only the result and error types.
    let (producer, events) = agentstream::channel::<std::rc::Rc<u8>, u32, String>();
    let result: agentstream::ResultFuture<u32, String> = events.result();
    let closed: agentstream::event_stream::Closed<u32, String> = producer.closed();
    let waiter = std::thread::spawn(move || futures_executor::block_on(result));
    producer.push(std::rc::Rc::new(1)).unwrap();
    producer.finish(5).unwrap();
    assert_eq!(waiter.join().unwrap(), Ok(5));
    drop(events);
    futures_executor::block_on(closed);
}
