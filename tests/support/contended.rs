//! The contended load, shared by its stress test (`tests/stress.rs`) and its
//! bench row (`benches/channels.rs`, group `contended-16x100k-tokio-mt8`):
//! [`PAIRS`] producer/consumer task pairs on a tokio multi-thread runtime
//! with [`WORKER_THREADS`] workers ([`runtime`]), each pair carrying
//! [`EVENTS_PER_PAIR`] `u64` sequence numbers, while a [`BusyThread`] spins
//! on a core of its own. On a 2-core machine that is far more runnable
//! threads than cores, so wakeups race with preemption.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::Flavor;

/// Producer/consumer pairs running at once.
pub const PAIRS: u64 = 16;
/// Events each producer pushes: the sequence numbers `0..EVENTS_PER_PAIR`.
pub const EVENTS_PER_PAIR: u64 = 100_000;
/// Worker threads of the runtime, whatever the machine's core count.
pub const WORKER_THREADS: usize = 8;
/// A producer yields to the scheduler after this many pushes, so pairs
/// interleave instead of each producer filling its buffer in one poll.
pub const YIELD_EVERY: u64 = 64;

/// The runtime of the load: tokio multi-thread with [`WORKER_THREADS`]
/// workers and the timer (for hang guards).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .enable_time()
        .build()
        .expect("tokio multi-thread runtime")
}

/// A std thread that spins, competing with the runtime's workers for the
/// cores, until it is dropped or `limit` has passed, whichever is first (so
/// it stops even if its owner leaks it).
pub struct BusyThread {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<u64>>,
}

impl BusyThread {
    /// Starts the spinning thread.
    pub fn start(limit: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::Builder::new()
            .name("busy".into())
            .spawn(move || {
                let deadline = Instant::now() + limit;
                let mut spins = 0u64;
                while !flag.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    // Reading the clock is far slower than a spin: only now
                    // and then.
                    if spins % 4096 == 0 && Instant::now() >= deadline {
                        break;
                    }
                }
                spins
            })
            .expect("spawn the busy thread");
        Self {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the thread, waits for it and returns how many times it spun.
    pub fn stop(mut self) -> u64 {
        self.halt()
    }

    fn halt(&mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(thread) => thread.join().expect("the busy thread panicked"),
            None => 0,
        }
    }
}

impl Drop for BusyThread {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The sum of one pair's events, `0 + 1 + … + (EVENTS_PER_PAIR - 1)`.
pub const PAIR_SUM: u64 = EVENTS_PER_PAIR * (EVENTS_PER_PAIR - 1) / 2;

/// One round of the load for flavour `Fl`, spawned on the runtime that runs
/// the caller: every producer and every consumer is its own task. Each
/// consumer checks its sequence (nothing lost, duplicated or reordered) and
/// awaits its result; returns the sum of every event and result, which is
/// `PAIRS * (PAIR_SUM + EVENTS_PER_PAIR)`.
pub async fn round<Fl: Flavor>() -> u64 {
    let mut tasks = Vec::with_capacity(2 * PAIRS as usize);
    let mut consumers = Vec::with_capacity(PAIRS as usize);
    for _ in 0..PAIRS {
        let (tx, rx, res) = Fl::channel();
        consumers.push(tokio::spawn(async move {
            let mut rx = std::pin::pin!(rx);
            let mut expected = 0u64;
            while let Some(event) = std::future::poll_fn(|cx| Fl::poll_recv(rx.as_mut(), cx)).await
            {
                assert_eq!(
                    event,
                    expected,
                    "{}: lost, duplicated or reordered",
                    Fl::NAME
                );
                expected += 1;
            }
            assert_eq!(expected, EVENTS_PER_PAIR, "{}: events lost", Fl::NAME);
            PAIR_SUM + res.await
        }));
        tasks.push(tokio::spawn(async move {
            for event in 0..EVENTS_PER_PAIR {
                Fl::push(&tx, event);
                if event % YIELD_EVERY == YIELD_EVERY - 1 {
                    tokio::task::yield_now().await;
                }
            }
            Fl::finish(tx, EVENTS_PER_PAIR);
        }));
    }
    for task in tasks {
        task.await.expect("a producer task panicked");
    }
    let mut sum = 0;
    for consumer in consumers {
        sum += consumer.await.expect("a consumer task panicked");
    }
    sum
}
