//! Hand-polling helpers shared by the core's integration tests: a waker that
//! counts clones, wakes and drops, and [`run_local`], the hand-polled
//! executor. Tests whose producer runs on another thread use
//! `futures_executor::block_on` instead (a library executor; those tests do
//! not run on wasm32-wasip1, which has no threads).
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
        // SAFETY: the data pointer is an `Arc<Counts>` turned into a raw
        // pointer, which owns one strong count, and `VTABLE`'s functions
        // treat it as exactly that (see each of them).
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

// The vtable's functions: `data` is always a pointer from `Arc::into_raw`
// of an `Arc<Counts>` that owns one strong count (made by
// `CountingWaker::new` or by `clone`).

unsafe fn clone(data: *const ()) -> RawWaker {
    let counts = data.cast::<Counts>();
    // SAFETY: `counts` comes from `Arc::into_raw` and the waker being cloned
    // still holds its count, so the `Arc` is alive; the new count belongs to
    // the returned waker.
    unsafe { Arc::increment_strong_count(counts) };
    // SAFETY: as above, the `Counts` is alive for this borrow.
    unsafe { &*counts }.clones.fetch_add(1, Ordering::SeqCst);
    raw(counts)
}
unsafe fn wake(data: *const ()) {
    // SAFETY: `wake` gets a live waker's data pointer, as `wake_by_ref` needs.
    unsafe { wake_by_ref(data) };
    // SAFETY: `wake` consumes the waker, so its count is released once.
    unsafe { drop_waker(data) };
}
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: the waker holds a count, so the `Counts` is alive.
    unsafe { &*data.cast::<Counts>() }
        .wakes
        .fetch_add(1, Ordering::SeqCst);
}
unsafe fn drop_waker(data: *const ()) {
    // SAFETY: the dropped waker owned one count from `Arc::into_raw`; taking
    // it back here releases exactly that count.
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

/// Runs a single-threaded future to completion by hand. Every pending poll
/// must have woken the task (otherwise nothing ever could, and it would
/// hang): that is checked, and a one-second guard stops a livelock. The
/// guard catches hangs; it asserts nothing about speed.
///
/// Kept instead of a library `block_on` for that check: a library executor
/// parks the thread on `Pending` and would hang (or, with a spurious wake,
/// pass) where this fails at once with "pending without a wakeup". It also
/// never parks, so it runs unchanged on wasm32-wasip1.
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
