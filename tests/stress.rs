//! Stress: 8 event streams consumed concurrently, 100,000 events in total,
//! under tokio multi-thread and under a multi-threaded smol executor; and
//! the contended load (`agentstream_suite::contended`): 16 pairs of 100,000
//! events each on a tokio runtime with 8 workers while a busy thread spins.
//! Nothing may be lost, duplicated or reordered, and every result resolves.
#![cfg(not(loom))]

#[path = "common/executors.rs"]
mod executors;

use std::time::Duration;

use agentstream::event_stream::EventStream;
use agentstream::yield_now;
use agentstream_suite::contended::{self, BusyThread, EVENTS_PER_PAIR, PAIRS, YIELD_EVERY};
use executors::{Rt, SmolPool};
use futures_util::future::join_all;
use futures_util::StreamExt;

const STREAMS: u64 = 8;
const TOTAL_EVENTS: u64 = 100_000;
const PER_STREAM: u64 = TOTAL_EVENTS / STREAMS;
/// A hang detector for the whole run; nothing asserts on speed.
const GUARD: Duration = Duration::from_secs(60);

/// Spawns every producer and every consumer as its own task, and checks
/// each stream's sequence and result.
async fn eight_streams(rt: Rt) {
    let mut tasks = Vec::new();
    let mut results = Vec::new();
    for stream in 0..STREAMS {
        let (producer, mut events) = EventStream::<(u64, u64), u64, ()>::channel();
        results.push(events.result());
        tasks.push(rt.spawn(async move {
            for n in 0..PER_STREAM {
                producer.push((stream, n)).unwrap();
                if n % 97 == 0 {
                    yield_now().await;
                }
            }
            producer.finish(stream * 1_000 + PER_STREAM).unwrap();
        }));
        let result = events.result();
        tasks.push(rt.spawn(async move {
            let mut expected = 0;
            while let Some(event) = events.next().await {
                assert_eq!(
                    event,
                    Ok((stream, expected)),
                    "lost, duplicated or reordered"
                );
                expected += 1;
            }
            assert_eq!(expected, PER_STREAM);
            assert_eq!(result.await, Ok(stream * 1_000 + PER_STREAM));
        }));
    }
    join_all(tasks).await;
    let resolved = join_all(results).await;
    let expected: Vec<_> = (0..STREAMS).map(|s| Ok(s * 1_000 + PER_STREAM)).collect();
    assert_eq!(resolved, expected);
}

#[test]
fn eight_streams_on_tokio_multi_thread() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let rt = executors::tokio_rt_plain();
    runtime.block_on(async {
        tokio::time::timeout(GUARD, tokio::spawn(eight_streams(rt)))
            .await
            .expect("guard: the stress run hung")
            .unwrap();
    });
}

#[test]
fn eight_streams_on_smol_multi_thread() {
    let pool = SmolPool::new(2);
    pool.run(eight_streams(pool.rt()), GUARD);
}

/// The contended load with `EventStream` itself: every producer and every
/// consumer is its own task on an 8-worker runtime (on a 2-core machine),
/// while a std thread spins beside them. Each consumer checks every
/// sequence number and its result; the result handles kept aside resolve
/// too. Nothing asserts on speed: `GUARD` only catches a hang.
#[test]
fn sixteen_pairs_on_eight_workers_beside_a_busy_thread() {
    let busy = BusyThread::start(GUARD);
    let runtime = contended::runtime();
    let delivered = runtime.block_on(async {
        tokio::time::timeout(GUARD, tokio::spawn(sixteen_pairs()))
            .await
            .expect("guard: the contended run hung")
            .expect("the contended run panicked")
    });
    drop(runtime);
    busy.stop();
    assert_eq!(delivered, PAIRS * EVENTS_PER_PAIR);
}

/// Spawns the 16 pairs and returns how many events the consumers received
/// in order.
async fn sixteen_pairs() -> u64 {
    let mut producers = Vec::new();
    let mut consumers = Vec::new();
    let mut kept = Vec::new();
    for pair in 0..PAIRS {
        let (producer, mut events) = EventStream::<u64, u64, ()>::channel();
        kept.push(events.result());
        let result = events.result();
        producers.push(tokio::spawn(async move {
            for n in 0..EVENTS_PER_PAIR {
                producer.push(n).expect("the consumer is alive");
                if n % YIELD_EVERY == YIELD_EVERY - 1 {
                    tokio::task::yield_now().await;
                }
            }
            producer.finish(pair).expect("the stream is open");
        }));
        consumers.push(tokio::spawn(async move {
            let mut expected = 0u64;
            while let Some(event) = events.next().await {
                assert_eq!(
                    event,
                    Ok(expected),
                    "pair {pair}: lost, duplicated or reordered"
                );
                expected += 1;
            }
            assert_eq!(expected, EVENTS_PER_PAIR, "pair {pair}: events lost");
            assert_eq!(result.await, Ok(pair), "pair {pair}: result");
            expected
        }));
    }
    for producer in join_all(producers).await {
        producer.expect("a producer panicked");
    }
    let mut delivered = 0;
    for consumer in join_all(consumers).await {
        delivered += consumer.expect("a consumer panicked");
    }
    let resolved = join_all(kept).await;
    let expected: Vec<_> = (0..PAIRS).map(Ok).collect();
    assert_eq!(resolved, expected, "every kept result handle resolves");
    delivered
}
