//! The event stream's semantics across tasks: push order, `fail`, a
//! dropped producer, `finish` before the drain, shared results, an early
//! stop, and a producer that sees nobody observe it.

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::event_stream::{EventStream, RefusalReason, StreamError};
use agentstream::yield_now;
use futures_util::future::{join, join_all};
use futures_util::StreamExt;

use crate::conformance::Rt;

type Numbers = EventStream<u32, u32, String>;

/// Events arrive in push order across tasks; the result resolves.
pub async fn events_keep_push_order(rt: Rt) {
    let (producer, mut events) = Numbers::channel();
    let result = events.result();
    let producing = rt.spawn(async move {
        for n in 0..1_000 {
            producer.push(n).unwrap();
            if n % 64 == 0 {
                yield_now().await;
            }
        }
        producer.finish(1_000).unwrap();
    });
    let consuming = async {
        let mut expected = 0;
        while let Some(event) = events.next().await {
            assert_eq!(event, Ok(expected));
            expected += 1;
        }
        expected
    };
    let ((), received) = join(producing, consuming).await;
    assert_eq!(received, 1_000);
    assert_eq!(result.await, Ok(1_000));
}

/// `fail`: buffered events first, then the error once, then the end.
pub async fn fail_ends_after_the_buffered_events(rt: Rt) {
    let (producer, mut events) = Numbers::channel();
    let result = events.result();
    let producing = rt.spawn(async move {
        producer.push(1).unwrap();
        producer.push(2).unwrap();
        producer.fail(String::from("boom")).unwrap();
        let refused = producer.push(3).unwrap_err();
        assert_eq!(refused.reason(), RefusalReason::Failed);
    });
    let (_, collected) = join(producing, events.by_ref().collect::<Vec<_>>()).await;
    let failed = Err(StreamError::Failed(String::from("boom")));
    assert_eq!(collected, [Ok(1), Ok(2), failed.clone()]);
    assert_eq!(events.next().await, None);
    assert_eq!(result.await, failed);
}

/// A producer dropped without finishing ends the stream with a distinct
/// error, on the consumer and on every result awaiter.
pub async fn a_dropped_producer_ends_the_stream(rt: Rt) {
    let (producer, mut events) = Numbers::channel();
    let result = events.result();
    let producing = rt.spawn(async move {
        producer.push(7).unwrap();
        yield_now().await;
        drop(producer);
    });
    let (_, collected) = join(producing, events.by_ref().collect::<Vec<_>>()).await;
    assert_eq!(collected, [Ok(7), Err(StreamError::ProducerDropped)]);
    assert_eq!(result.await, Err(StreamError::ProducerDropped));
}

/// `finish` resolves every result at once; the buffered events still drain.
pub async fn finish_resolves_results_before_the_events_drain(rt: Rt) {
    let (producer, mut events) = Numbers::channel();
    let result = events.result();
    rt.spawn(async move {
        for n in 0..3 {
            producer.push(n).unwrap();
        }
        producer.finish(3).unwrap();
    })
    .await;
    assert_eq!(result.await, Ok(3));
    assert_eq!(events.buffered_len(), 3);
    let drained: Vec<_> = events.by_ref().collect().await;
    assert_eq!(drained, [Ok(0), Ok(1), Ok(2)]);
}

/// Many tasks await the same result; each gets it.
pub async fn the_result_is_awaited_by_several_tasks(rt: Rt) {
    let (producer, events) = Numbers::channel();
    let awaiters: Vec<_> = (0..4)
        .map(|_| {
            let result = events.result();
            rt.spawn(async move { assert_eq!(result.await, Ok(42)) })
        })
        .collect();
    let producing = rt.spawn(async move {
        yield_now().await;
        producer.push(1).unwrap();
        producer.finish(42).unwrap();
    });
    join(join_all(awaiters), producing).await;
    drop(events);
}

/// A consumer that stops early leaves the rest, in order, for the next one.
pub async fn an_early_stop_then_continue_keeps_order(rt: Rt) {
    let (producer, mut events) = Numbers::channel();
    let producing = rt.spawn(async move {
        for n in 0..10 {
            producer.push(n).unwrap();
            yield_now().await;
        }
        producer.finish(10).unwrap();
    });
    let consuming = async {
        let first: Vec<_> = events.by_ref().take(3).collect().await;
        assert_eq!(first, [Ok(0), Ok(1), Ok(2)]);
        let rest: Vec<_> = events.by_ref().map(Result::unwrap).collect().await;
        assert_eq!(rest, (3..10).collect::<Vec<_>>());
    };
    join(producing, consuming).await;
}

/// Once the consumer and every result handle are gone, the producer's
/// `closed()` resolves and pushes are refused as closed.
pub async fn a_producer_sees_when_nobody_observes_it(rt: Rt) {
    let (producer, events) = Numbers::channel();
    let result = events.result();
    // Pushed before the consumer can go away: it is accepted.
    producer.push(1).unwrap();
    let producing = rt.spawn(async move {
        producer.closed().await;
        assert_eq!(
            producer.push(2).unwrap_err().reason(),
            RefusalReason::Closed
        );
    });
    let consuming = async move {
        yield_now().await;
        drop(events);
        yield_now().await;
        drop(result);
    };
    join(producing, consuming).await;
}
