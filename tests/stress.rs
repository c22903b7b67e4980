//! Stress: 8 event streams consumed concurrently, 100,000 events in total,
//! under tokio multi-thread and under a multi-threaded smol executor.
//! Nothing may be lost, duplicated or reordered, and every result resolves.
#![cfg(not(loom))]

#[path = "common/executors.rs"]
mod executors;

use std::time::Duration;

use agentstream::event_stream::EventStream;
use agentstream::yield_now;
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
