//! Hand-polling helpers shared by the core's integration tests: a waker that
//! counts clones, wakes and drops, and a minimal `block_on`.
#![allow(dead_code)]

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// Counters observed through a [`CountingWaker`].
#[derive(Default, Debug)]
pub struct Counts {
    clones: AtomicUsize,
    wakes: AtomicUsize,
    drops: AtomicUsize,
}

/// A waker whose clones, wakes and drops are counted.
pub struct CountingWaker {
    counts: Arc<Counts>,
    waker: Waker,
}

impl CountingWaker {
    pub fn new() -> Self {
        let counts = Arc::new(Counts::default());
        let waker = unsafe { Waker::from_raw(raw(Arc::into_raw(counts.clone()))) };
        Self { counts, waker }
    }
    pub fn waker(&self) -> &Waker {
        &self.waker
    }
    pub fn context(&self) -> Context<'_> {
        Context::from_waker(&self.waker)
    }
    pub fn clones(&self) -> usize {
        self.counts.clones.load(Ordering::SeqCst)
    }
    pub fn wakes(&self) -> usize {
        self.counts.wakes.load(Ordering::SeqCst)
    }
    /// Clones of this waker still alive somewhere (e.g. parked in a stream).
    pub fn live_clones(&self) -> usize {
        self.clones() - self.counts.drops.load(Ordering::SeqCst)
    }
    /// Polls `future` once with this waker.
    pub fn poll<F: Future + Unpin>(&self, future: &mut F) -> Poll<F::Output> {
        Pin::new(future).poll(&mut self.context())
    }
}

impl Default for CountingWaker {
    fn default() -> Self {
        Self::new()
    }
}

fn raw(data: *const Counts) -> RawWaker {
    RawWaker::new(data.cast(), &VTABLE)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

unsafe fn clone(data: *const ()) -> RawWaker {
    let counts = data.cast::<Counts>();
    unsafe { Arc::increment_strong_count(counts) };
    unsafe { &*counts }.clones.fetch_add(1, Ordering::SeqCst);
    raw(counts)
}
unsafe fn wake(data: *const ()) {
    unsafe { wake_by_ref(data) };
    unsafe { drop_waker(data) };
}
unsafe fn wake_by_ref(data: *const ()) {
    unsafe { &*data.cast::<Counts>() }
        .wakes
        .fetch_add(1, Ordering::SeqCst);
}
unsafe fn drop_waker(data: *const ()) {
    let counts = unsafe { Arc::from_raw(data.cast::<Counts>()) };
    counts.drops.fetch_add(1, Ordering::SeqCst);
}

/// Polls `future` once and returns its output, panicking if it is pending.
pub fn expect_ready<F: Future>(future: F) -> F::Output {
    let waker = CountingWaker::new();
    match pin!(future).poll(&mut waker.context()) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("future is pending"),
    }
}

/// Runs a future to completion on the current thread, waiting (by yielding
/// the thread) until its waker is woken between polls. Used by tests whose
/// producer runs on another thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = CountingWaker::new();
    loop {
        let seen = waker.wakes();
        if let Poll::Ready(output) = future.as_mut().poll(&mut waker.context()) {
            return output;
        }
        while waker.wakes() == seen {
            std::thread::yield_now();
        }
    }
}

/// Runs a single-threaded future to completion by hand. Every pending poll
/// must have woken the task (otherwise nothing ever could, and it would
/// hang): that is checked, and a one-second guard stops a livelock. The
/// guard catches hangs; it asserts nothing about speed.
pub fn run_local<F: Future>(future: F) -> F::Output {
    let started = std::time::Instant::now();
    let mut future = pin!(future);
    let waker = CountingWaker::new();
    loop {
        let seen = waker.wakes();
        if let Poll::Ready(output) = future.as_mut().poll(&mut waker.context()) {
            return output;
        }
        assert!(
            waker.wakes() > seen,
            "pending without a wakeup: this would hang"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "guard: the future did not complete within one second"
        );
    }
}
