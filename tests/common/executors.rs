//! The executors every conformance body runs under, and [`Rt`], the handle a
//! body uses to start concurrent tasks without knowing which executor runs
//! it.
//!
//! | executor | how tasks run |
//! |---|---|
//! | [`hand_polled`] | one task, polled by hand with a counting waker; no runtime |
//! | [`smol_block_on`] | one task under `smol::block_on` |
//! | [`tokio_current_thread`] | `tokio::spawn` on a current-thread runtime |
//! | [`tokio_multi_thread`] | 2 workers; every producer starts on the *other* worker (see [`spawn_on_other_worker`]) |
//! | [`smol_multi_thread`] | an `async_executor::Executor` run by 2 threads |
//! | [`async_std`] | `async_std::task::spawn` |
//!
//! On the single-task executors, "spawning" returns the future itself, and
//! bodies always await it concurrently with their consumer (`join`), so the
//! body is the same everywhere.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use agentstream::event_stream::EventStream;
use agentstream::model::ModelStream;
use agentstream::rt::Runtime as _;
use agentstream::Producer;
use futures_util::future::{self, Either, FutureExt};

pub use agentstream_testkit::conformance::{ready, BoxFut, Rt};

/// How long a body may run before the guard calls it a hang. It catches
/// hangs; nothing asserts on speed.
pub const GUARD: Duration = Duration::from_secs(1);

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWake(AtomicUsize);

impl Wake for CountingWake {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `body` by hand on this thread. Every pending poll must have woken
/// the task (nothing else could), which is checked.
///
/// Kept hand-written for that check: with everything on one task, a
/// `Pending` that did not wake is a hang, and a library `block_on` would
/// park on it (hanging, or passing after a spurious wake) where this fails
/// at once. The other executors below are the runtimes' own.
pub fn hand_polled<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()>,
{
    let started = Instant::now();
    let counts = Arc::new(CountingWake::default());
    let waker = Waker::from(counts.clone());
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(body(Rt::inline()));
    loop {
        let seen = counts.0.load(Ordering::SeqCst);
        if let Poll::Ready(()) = future.as_mut().poll(&mut context) {
            return;
        }
        assert!(
            counts.0.load(Ordering::SeqCst) > seen,
            "pending without a wakeup: this would hang"
        );
        assert!(started.elapsed() < GUARD, "guard: the body hung");
    }
}

/// Races `body` against a timer of `limit`, panicking if the timer wins.
async fn guarded<Fut: Future<Output = ()>>(body: Fut, limit: Duration) {
    let timer = smol::Timer::after(limit);
    match future::select(pin!(body), timer).await {
        Either::Left(((), _)) => {}
        Either::Right(_) => panic!("guard: the body hung"),
    }
}

/// Runs `body` in one task under `smol::block_on`.
pub fn smol_block_on<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()>,
{
    smol::block_on(guarded(body(Rt::inline()), GUARD));
}

fn tokio_rt(join: tokio::task::JoinHandle<()>) -> BoxFut {
    Box::pin(join.map(|outcome| outcome.expect("a spawned task panicked")))
}

/// A producer spawned by a host's `spawn_driver`, which must complete.
fn driver_task(task: agentstream::rt::DriverTask) -> BoxFut {
    Box::pin(task.map(|outcome| outcome.expect("a spawned producer panicked")))
}

/// An `Rt` that spawns with `tokio::spawn` (and model drivers with the
/// tokio adapter) on whatever tokio runtime runs the caller.
pub fn tokio_rt_plain() -> Rt {
    Rt::new(|future| tokio_rt(tokio::spawn(future))).with_model_spawner(
        |stream: &mut ModelStream| {
            agentstream_tokio::Tokio
                .spawn_driver(stream)
                .map_or_else(ready, driver_task)
        },
    )
}

/// Runs `body` on a current-thread tokio runtime; tasks are `tokio::spawn`ed.
pub fn tokio_current_thread<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let rt = tokio_rt_plain();
    runtime.block_on(async {
        tokio::time::timeout(GUARD, body(rt))
            .await
            .expect("guard: the body hung");
    });
}

/// Spawns `future` on the runtime of `handle` so that its first poll runs on
/// a worker thread other than the calling one, and returns its join future.
///
/// How it is forced: the calling task runs on one of the runtime's two
/// workers. The task is submitted from a short-lived helper thread, which
/// puts it in the runtime's shared injection queue rather than this
/// worker's local queue; then this worker *blocks* until the task reports
/// that it has started. While this worker is blocked, only the other worker
/// can pick the task up, and the task asserts that it runs on a thread other
/// than the caller's. Later polls may migrate (work stealing), which only
/// adds cross-thread traffic.
pub fn spawn_on_other_worker(handle: &tokio::runtime::Handle, future: BoxFut) -> BoxFut {
    let caller = thread::current().id();
    let (started_tx, started_rx) = std::sync::mpsc::sync_channel(1);
    let task = async move {
        let here = thread::current().id();
        started_tx.send(here).expect("the spawner waits for this");
        future.await;
    };
    let handle = handle.clone();
    let join = thread::spawn(move || handle.spawn(task))
        .join()
        .expect("the helper thread spawned the task");
    let worker = started_rx
        .recv_timeout(GUARD)
        .expect("guard: no other worker started the task");
    assert_ne!(worker, caller, "the task started on the spawning worker");
    tokio_rt(join)
}

/// Runs `body` as a task on a 2-worker tokio runtime; every task it spawns
/// (producers and model drivers) starts on the other worker.
pub fn tokio_multi_thread<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let handle = runtime.handle().clone();
    let spawner = handle.clone();
    let rt = Rt::new(move |future| spawn_on_other_worker(&spawner, future)).with_model_spawner(
        move |stream: &mut ModelStream| match stream.take_driver() {
            Some(driver) => spawn_on_other_worker(&handle, driver),
            None => ready(),
        },
    );
    let consumer = runtime.spawn(body(rt));
    runtime.block_on(async {
        tokio::time::timeout(GUARD, consumer)
            .await
            .expect("guard: the body hung")
            .expect("the body panicked");
    });
}

/// A multi-threaded smol executor: an `async_executor::Executor` run by
/// `threads` threads until the value is dropped.
pub struct SmolPool {
    /// The executor; spawn on it.
    pub executor: Arc<smol::Executor<'static>>,
    stop: Option<Producer<(), (), ()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl SmolPool {
    /// Starts `threads` threads that run the executor.
    pub fn new(threads: usize) -> Self {
        let executor = Arc::new(smol::Executor::new());
        // The core's own event stream as a stop signal: dropping `stop`
        // resolves every clone of `stopped`.
        let (stop, events) = EventStream::<(), (), ()>::channel();
        let stopped = events.result();
        drop(events);
        let threads = (0..threads)
            .map(|_| {
                let executor = executor.clone();
                let stopped = stopped.clone();
                thread::spawn(move || {
                    let _ = smol::block_on(executor.run(stopped));
                })
            })
            .collect();
        Self {
            executor,
            stop: Some(stop),
            threads,
        }
    }

    /// An `Rt` that spawns on this pool.
    pub fn rt(&self) -> Rt {
        let executor = self.executor.clone();
        let drivers = self.executor.clone();
        Rt::new(move |future| Box::pin(executor.spawn(future))).with_model_spawner(
            move |stream: &mut ModelStream| match agentstream_smol::spawn_driver_on(
                &drivers, stream,
            ) {
                Some(task) => Box::pin(task),
                None => ready(),
            },
        )
    }

    /// Spawns `body` on the pool and waits for it on this thread, with a
    /// guard of `limit`.
    pub fn run<Fut: Future<Output = ()> + Send + 'static>(&self, body: Fut, limit: Duration) {
        let task = self.executor.spawn(body);
        smol::block_on(guarded(task, limit));
    }
}

impl Drop for SmolPool {
    fn drop(&mut self) {
        drop(self.stop.take());
        for thread in self.threads.drain(..) {
            thread.join().expect("an executor thread panicked");
        }
    }
}

/// Runs `body` as a task on a smol executor run by two threads.
pub fn smol_multi_thread<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let pool = SmolPool::new(2);
    pool.run(body(pool.rt()), GUARD);
}

/// Runs `body` as an async-std task; tasks are `async_std::task::spawn`ed.
pub fn async_std<F, Fut>(body: F)
where
    F: FnOnce(Rt) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let rt = Rt::new(|future| Box::pin(async_std::task::spawn(future))).with_model_spawner(
        |stream: &mut ModelStream| match agentstream_async_std::AsyncStd.spawn_driver(stream) {
            Some(task) => driver_task(task),
            None => ready(),
        },
    );
    async_std::task::block_on(async {
        async_std::future::timeout(GUARD, async_std::task::spawn(body(rt)))
            .await
            .expect("guard: the body hung");
    });
}
