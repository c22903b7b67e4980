//! Stress: 1,000 scripted calls whose consumers drop at random points, under
//! tokio multi-thread and under a multi-threaded smol executor. Every
//! spawned producer task must finish, and a counting global allocator must
//! show nothing retained once the calls are over.
//!
//! The allocator counts for this whole test binary, so the two tests take a
//! lock and never measure at the same time. Each test first runs one
//! identical warm-up round, so the runtime's own structures (worker queues,
//! task slabs) have reached their size before the measured round.
#![cfg(not(loom))]

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, ScriptedTurn, StreamOptions};
use agentstream::rt::Runtime as _;
use agentstream_testkit::{live_bytes, CountingAllocator};
use futures_util::future::join_all;
use futures_util::StreamExt;
use serde_json::json;

/// Counts the bytes currently allocated by the whole binary (every thread:
/// the calls run on runtime workers).
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Only one test measures at a time.
static MEASURING: Mutex<()> = Mutex::new(());

const CALLS: usize = 1_000;
/// A hang detector for one round; nothing asserts on speed.
const GUARD: Duration = Duration::from_secs(60);

/// A tiny xorshift generator: deterministic, no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn turn() -> ScriptedTurn {
    ScriptedTurn::message(assistant(
        [
            text("a text long enough to be cut into several deltas"),
            tool_call("c1", "read", json!({"path": "README.md"})),
        ],
        StopReason::ToolUse,
    ))
    .chunked(NonZeroUsize::new(6).unwrap())
}

/// How a round spawns things on the runtime under test.
trait Spawner {
    /// Spawns the stream's driver; the future completes when it stopped.
    fn spawn_driver(&self, stream: &mut ModelStream)
        -> Box<dyn Future<Output = ()> + Unpin + Send>;
    /// Spawns a consumer task; the future completes with it.
    fn spawn(
        &self,
        future: impl Future<Output = ()> + Send + 'static,
    ) -> Box<dyn Future<Output = ()> + Unpin + Send>;
}

/// One round: `CALLS` calls, each consumer reading a random number of
/// events (sometimes all, sometimes none) and then dropping the stream, some
/// of them after handing a result handle to a task of its own. Returns how
/// many producer tasks finished.
async fn round(spawner: &impl Spawner, seed: u64) -> usize {
    let model = ScriptedModel::new((0..CALLS).map(|_| turn()));
    let context = Context::from_messages([user("go").into()]);
    let finished = Arc::new(AtomicUsize::new(0));
    let mut rng = XorShift(seed);
    let mut tasks = Vec::with_capacity(CALLS * 2);
    for _ in 0..CALLS {
        let mut stream = model.stream(&context, StreamOptions::default());
        let producer = spawner.spawn_driver(&mut stream);
        let finished = finished.clone();
        tasks.push(spawner.spawn(async move {
            producer.await;
            finished.fetch_add(1, Ordering::SeqCst);
        }));
        let read = rng.below(20) as usize; // a full call has 15 events
        let keep_result = rng.below(4) == 0;
        let handle = keep_result.then(|| stream.result_handle());
        tasks.push(spawner.spawn(async move {
            let mut stream = stream;
            for _ in 0..read {
                if stream.next().await.is_none() {
                    break;
                }
            }
            drop(stream);
            if let Some(handle) = handle {
                // The producer goes on for this awaiter, then resolves it.
                let message = handle.await;
                assert!(
                    message.stop_reason == StopReason::ToolUse || message.error_message.is_some()
                );
            }
        }));
    }
    join_all(tasks).await;
    drop(model);
    finished.load(Ordering::SeqCst)
}

/// Runs a warm-up round, then a measured one, and checks the counts.
fn measure(name: &str, run_round: impl Fn(u64) -> usize) {
    assert_eq!(run_round(1), CALLS, "{name}: warm-up producers finished");
    let before = live_bytes();
    assert_eq!(
        run_round(0x9e37_79b9_7f4a_7c15),
        CALLS,
        "{name}: every producer finished"
    );
    let after = live_bytes();
    let retained = after - before;
    eprintln!("{name}: live bytes before {before}, after {after}, retained {retained}");
    // One leaked call would keep its stream state, events and partials:
    // far more than this for 1,000 calls. The slack covers the runtime's
    // own bookkeeping (queue blocks that are allocated and freed as tasks
    // flow through), which is not per call.
    assert!(
        retained <= 4096,
        "{name}: {retained} bytes retained after {CALLS} calls"
    );
}

struct Tokio;

impl Spawner for Tokio {
    fn spawn_driver(
        &self,
        stream: &mut ModelStream,
    ) -> Box<dyn Future<Output = ()> + Unpin + Send> {
        let handle = agentstream_tokio::Tokio
            .spawn_driver(stream)
            .expect("scripted streams have drivers");
        Box::new(Box::pin(async move {
            handle.await.expect("the producer task completed")
        }))
    }
    fn spawn(
        &self,
        future: impl Future<Output = ()> + Send + 'static,
    ) -> Box<dyn Future<Output = ()> + Unpin + Send> {
        let handle = tokio::spawn(future);
        Box::new(Box::pin(async move {
            handle.await.expect("the task completed")
        }))
    }
}

#[test]
fn random_drops_on_tokio_multi_thread_finish_every_producer_and_retain_nothing() {
    let _lock = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    measure("tokio", |seed| {
        runtime.block_on(async {
            tokio::time::timeout(GUARD, round(&Tokio, seed))
                .await
                .expect("guard: the round hung")
        })
    });
}

struct Smol(Arc<smol::Executor<'static>>);

impl Spawner for Smol {
    fn spawn_driver(
        &self,
        stream: &mut ModelStream,
    ) -> Box<dyn Future<Output = ()> + Unpin + Send> {
        Box::new(
            agentstream_smol::spawn_driver_on(&self.0, stream)
                .expect("scripted streams have drivers"),
        )
    }
    fn spawn(
        &self,
        future: impl Future<Output = ()> + Send + 'static,
    ) -> Box<dyn Future<Output = ()> + Unpin + Send> {
        Box::new(self.0.spawn(future))
    }
}

#[path = "common/executors.rs"]
mod executors;

#[test]
fn random_drops_on_smol_multi_thread_finish_every_producer_and_retain_nothing() {
    let _lock = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let pool = executors::SmolPool::new(2);
    let spawner = Smol(pool.executor.clone());
    measure("smol", |seed| {
        let finished = Arc::new(AtomicUsize::new(0));
        let done = finished.clone();
        let executor = spawner.0.clone();
        let spawner = Smol(executor);
        pool.run(
            async move {
                done.store(round(&spawner, seed).await, Ordering::SeqCst);
            },
            GUARD,
        );
        finished.load(Ordering::SeqCst)
    });
}
