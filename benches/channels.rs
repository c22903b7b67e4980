//! agentstream's EventStream beside futures-channel, tokio, async-channel and
//! flume (each with a oneshot for the result), in the same executor and the
//! same criterion group, plus the ScriptedModel scenarios.
//!
//! Groups (one directory each under `target/criterion/`):
//! - `burst-{1,64,4096,1048576}`: push N, finish, drain, await the result;
//!   throughput in elements, so the report divides by N.
//! - `pingpong-handrolled`, `pingpong-tokio-ct`: the consumer is parked, one
//!   push wakes it, it reads the event and parks again; one round per
//!   iteration.
//! - `crossthread-tokio-mt`, `crossthread-smol`: 100,000 events from a
//!   producer thread to a consumer task on a runtime thread.
//! - `lifecycle`: one call's whole life (see `agentstream_suite::lifecycle`).
//! - `fanout-1`, `fanout-1000`: that many awaiters parked on one result when
//!   `finish` lands.
//! - `scripted-toolcall`, `scripted-1MiB-1024`, `scripted-1MiB-16384`:
//!   ScriptedModel played end to end (ours only: it is built on EventStream).
//!
//! `bash benches/report.sh` runs this in quick mode and prints the table.

// `criterion_main!` generates an undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Context;
use std::time::{Duration, Instant};

use agentstream::message::{
    assistant, text, tool_call, AssistantMessage, Context as ModelContext, StopReason,
};
use agentstream::model::{Model, ScriptedModel, ScriptedTurn, StreamOptions};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use futures_util::{FutureExt, StreamExt};

use agentstream_suite::contended::{self, BusyThread, EVENTS_PER_PAIR, PAIRS, PAIR_SUM};
use agentstream_suite::{consume, expect_event, for_each_flavor, Flag, Flavor};
use futures_executor::block_on;

const BURST_SIZES: [u64; 4] = [1, 64, 4096, 1 << 20];
const CROSS_THREAD_EVENTS: u64 = 100_000;
const FAN_OUT: [usize; 2] = [1, 1000];

fn burst(c: &mut Criterion) {
    for n in BURST_SIZES {
        let mut group = c.benchmark_group(format!("burst-{n}"));
        group.throughput(Throughput::Elements(n));
        if n >= 4096 {
            group.sample_size(10);
        }
        if n == 1 << 20 {
            group.sampling_mode(SamplingMode::Flat);
        }
        for_each_flavor!(Fl => {
            group.bench_function(Fl::NAME, |b| b.iter(|| agentstream_suite::burst::<Fl>(black_box(n))));
        });
        group.finish();
    }
}

/// One ping-pong round in the hand-rolled executor: the consumer task (just
/// the receiver, polled with the executor's waker) is parked; the producer
/// pushes; the executor sees the wake and polls the consumer, which reads the
/// event and parks again.
fn pingpong_handrolled(c: &mut Criterion) {
    let mut group = c.benchmark_group("pingpong-handrolled");
    group.throughput(Throughput::Elements(1));
    for_each_flavor!(Fl => {
        let (flag, waker) = Flag::waker();
        let mut cx = Context::from_waker(&waker);
        let (tx, rx, _res) = Fl::channel();
        let mut rx = Box::pin(rx);
        assert!(Fl::poll_recv(rx.as_mut(), &mut cx).is_pending());
        let mut next = 0u64;
        group.bench_function(Fl::NAME, |b| {
            b.iter(|| {
                Fl::push(&tx, next);
                assert!(flag.take(), "{}: the parked consumer was not woken", Fl::NAME);
                assert_eq!(expect_event::<Fl>(rx.as_mut(), &mut cx), Some(next));
                assert!(Fl::poll_recv(rx.as_mut(), &mut cx).is_pending());
                next += 1;
            })
        });
        drop((tx, rx));
    });
    group.finish();
}

/// Ping-pong in tokio's current-thread runtime: a spawned consumer task
/// reads; the producer (the `block_on` future) pushes one event and yields,
/// which lets the consumer run, read it and park again.
fn pingpong_tokio(c: &mut Criterion) {
    let mut group = c.benchmark_group("pingpong-tokio-ct");
    group.throughput(Throughput::Elements(1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    for_each_flavor!(Fl => {
        group.bench_function(Fl::NAME, |b| {
            b.iter_custom(|rounds| {
                runtime.block_on(async {
                    let (tx, rx, res) = Fl::channel();
                    let received = Arc::new(AtomicU64::new(0));
                    let seen = received.clone();
                    let start = Instant::now();
                    let consumer = tokio::spawn(async move {
                        let mut rx = std::pin::pin!(rx);
                        while let Some(event) =
                            std::future::poll_fn(|cx| Fl::poll_recv(rx.as_mut(), cx)).await
                        {
                            seen.store(event + 1, Ordering::Relaxed);
                        }
                        res.await
                    });
                    // Let the consumer start and park.
                    tokio::task::yield_now().await;
                    for round in 0..rounds {
                        Fl::push(&tx, round);
                        tokio::task::yield_now().await;
                        debug_assert_eq!(received.load(Ordering::Relaxed), round + 1);
                    }
                    Fl::finish(tx, 0);
                    consumer.await.expect("consumer task");
                    let elapsed = start.elapsed();
                    assert_eq!(received.load(Ordering::Relaxed), rounds);
                    elapsed
                })
            })
        });
    });
    group.finish();
}

fn produce_on_thread<Fl: Flavor>(tx: Fl::Tx) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for event in 0..CROSS_THREAD_EVENTS {
            Fl::push(&tx, event);
        }
        Fl::finish(tx, 0);
    })
}

fn crossthread(c: &mut Criterion) {
    let expected = CROSS_THREAD_EVENTS * (CROSS_THREAD_EVENTS - 1) / 2;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .build()
        .expect("tokio runtime");
    let mut group = c.benchmark_group("crossthread-tokio-mt");
    group.throughput(Throughput::Elements(CROSS_THREAD_EVENTS));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for_each_flavor!(Fl => {
        group.bench_function(Fl::NAME, |b| {
            b.iter(|| {
                let (tx, rx, res) = Fl::channel();
                let consumer = runtime.spawn(consume::<Fl>(rx, res));
                let producer = produce_on_thread::<Fl>(tx);
                let sum = runtime.block_on(consumer).expect("consumer task");
                producer.join().expect("producer thread");
                assert_eq!(sum, expected);
            })
        });
    });
    group.finish();
    drop(runtime);

    let mut group = c.benchmark_group("crossthread-smol");
    group.throughput(Throughput::Elements(CROSS_THREAD_EVENTS));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for_each_flavor!(Fl => {
        group.bench_function(Fl::NAME, |b| {
            b.iter(|| {
                let (tx, rx, res) = Fl::channel();
                // `smol::spawn` runs the task on smol's global executor thread.
                let consumer = smol::spawn(consume::<Fl>(rx, res));
                let producer = produce_on_thread::<Fl>(tx);
                let sum = smol::block_on(consumer);
                producer.join().expect("producer thread");
                assert_eq!(sum, expected);
            })
        });
    });
    group.finish();
}

/// The contended load (the stress test's, with the same checks): every
/// iteration spawns the 16 pairs on the 8-worker runtime and waits for all
/// of them, with the busy thread spinning for the whole group. Ours and
/// tokio's unbounded mpsc only: the row compares against tokio under its
/// own runtime.
fn contended_load(c: &mut Criterion) {
    let expected = PAIRS * (PAIR_SUM + EVENTS_PER_PAIR);
    let runtime = contended::runtime();
    // Bounded twice: stopped at the end of the group, and by itself after
    // ten minutes in any case.
    let busy = BusyThread::start(Duration::from_secs(600));
    let mut group = c.benchmark_group("contended-16x100k-tokio-mt8");
    group.throughput(Throughput::Elements(PAIRS * EVENTS_PER_PAIR));
    // One iteration is 1.6M events: criterion's minimum of 10 samples, flat,
    // keeps the quick mode short (one iteration per sample).
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    fn run<Fl: Flavor>(runtime: &tokio::runtime::Runtime) -> u64 {
        runtime
            .block_on(runtime.spawn(contended::round::<Fl>()))
            .expect("the contended round panicked")
    }
    group.bench_function(agentstream_suite::Ours::NAME, |b| {
        b.iter(|| assert_eq!(run::<agentstream_suite::Ours>(&runtime), expected))
    });
    group.bench_function(agentstream_suite::Tokio::NAME, |b| {
        b.iter(|| assert_eq!(run::<agentstream_suite::Tokio>(&runtime), expected))
    });
    group.finish();
    drop(runtime);
    busy.stop();
}

fn lifecycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("lifecycle");
    let (_flag, waker) = Flag::waker();
    let mut cx = Context::from_waker(&waker);
    for_each_flavor!(Fl => {
        group.bench_function(Fl::NAME, |b| b.iter(|| agentstream_suite::lifecycle::<Fl>(&mut cx)));
    });
    group.finish();
}

/// `awaiters` futures on the same result, each polled once (parked), then
/// `finish`, then each polled to completion.
fn fan_out_once<Fl: Flavor>(awaiters: usize, cx: &mut Context<'_>) -> u64 {
    let (tx, rx, res) = Fl::channel();
    let first = Fl::fan_out(res);
    let mut futures = Vec::with_capacity(awaiters);
    for _ in 1..awaiters {
        futures.push(first.clone());
    }
    futures.push(first);
    for future in &mut futures {
        assert!(future.poll_unpin(cx).is_pending());
    }
    Fl::finish(tx, 7);
    let mut sum = 0;
    for future in &mut futures {
        sum += agentstream_suite::expect_ready(std::pin::Pin::new(future), cx);
    }
    drop(rx);
    sum
}

fn fan_out(c: &mut Criterion) {
    let (_flag, waker) = Flag::waker();
    let mut cx = Context::from_waker(&waker);
    for awaiters in FAN_OUT {
        let mut group = c.benchmark_group(format!("fanout-{awaiters}"));
        for_each_flavor!(Fl => {
            group.bench_function(Fl::NAME, |b| {
                b.iter(|| fan_out_once::<Fl>(black_box(awaiters), &mut cx))
            });
        });
        group.finish();
    }
}

/// A 1 MiB text.
fn mebibyte_text() -> String {
    "agentstream "
        .repeat(1 << 20)
        .chars()
        .take(1 << 20)
        .collect()
}

/// Plays `turn` end to end: every event read, then the result awaited.
fn play(turn: &ScriptedTurn, context: &ModelContext) -> (usize, AssistantMessage) {
    let model = ScriptedModel::new([turn.clone()]);
    let mut stream = model.stream(context, StreamOptions::default());
    block_on(async {
        let mut events = 0;
        while stream.next().await.is_some() {
            events += 1;
        }
        (events, stream.result().await)
    })
}

fn scripted(c: &mut Criterion) {
    let context = ModelContext::from_messages([agentstream::message::user("hi").into()]);

    let mut group = c.benchmark_group("scripted-toolcall");
    let turn = ScriptedTurn::message(assistant(
        [
            text("Let me read that file."),
            tool_call(
                "c1",
                "read",
                serde_json::json!({"path": "crates/agentstream/src/lib.rs"}),
            ),
        ],
        StopReason::ToolUse,
    ));
    group.bench_function("ours", |b| {
        b.iter_batched(
            || ScriptedModel::new([turn.clone()]),
            |model| {
                let mut stream = model.stream(&context, StreamOptions::default());
                let message = block_on(async {
                    while stream.next().await.is_some() {}
                    stream.result().await
                });
                (model, message)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    let message = assistant([text(mebibyte_text())], StopReason::Stop);
    for deltas in [1024usize, 16384] {
        let turn = ScriptedTurn::message(message.clone())
            .chunked(NonZeroUsize::new(deltas).expect("non-zero"));
        let (events, played) = play(&turn, &context);
        assert_eq!(events, deltas + 2, "start, the deltas, done");
        assert_eq!(played, message);
        let mut group = c.benchmark_group(format!("scripted-1MiB-{deltas}"));
        group.throughput(Throughput::Elements(deltas as u64));
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.bench_function("ours", |b| {
            b.iter_batched(
                || ScriptedModel::new([turn.clone()]),
                |model| {
                    let mut stream = model.stream(&context, StreamOptions::default());
                    let message = block_on(async {
                        while stream.next().await.is_some() {}
                        stream.result().await
                    });
                    (model, message)
                },
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = burst, pingpong_handrolled, pingpong_tokio, crossthread, contended_load, lifecycle, fan_out, scripted
}
criterion_main!(benches);
