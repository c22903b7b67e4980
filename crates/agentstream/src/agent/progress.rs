//! The queue between a running tool's [`ProgressReporter`] and the loop.
//!
//! One small shared queue per call: the tool pushes reports (from any task
//! or thread), the loop drains them whenever it polls the call. Lighter
//! than a full event stream: one allocation per call, and a single waker
//! slot (only the loop's task ever waits on it).
//!
//! [`ProgressReporter`]: super::ProgressReporter

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::task::{Context as TaskContext, Poll, Waker};

use serde_json::Value;

use crate::sync::Lock;

/// The reports of one call not yet turned into events.
pub(crate) struct ProgressQueue {
    state: Lock<QueueState>,
}

#[derive(Default)]
struct QueueState {
    reports: VecDeque<Value>,
    /// The loop's task, parked until the next report.
    waker: Option<Waker>,
    /// The loop no longer listens (the call's result was decided).
    closed: bool,
}

impl ProgressQueue {
    /// Queues `report` and wakes the loop; dropped once the loop stopped
    /// listening.
    pub(crate) fn push(&self, report: Value) {
        let waker = self.state.with(|state| {
            if state.closed {
                return None;
            }
            state.reports.push_back(report);
            state.waker.take()
        });
        // Woken outside the lock: the wake may run the loop's task inline.
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next queued report, or `Pending` with the task registered to
    /// be woken by the next one.
    fn poll_next(&self, cx: &mut TaskContext<'_>) -> Poll<Value> {
        self.state.with(|state| match state.reports.pop_front() {
            Some(report) => Poll::Ready(report),
            None => {
                match &mut state.waker {
                    Some(waker) => waker.clone_from(cx.waker()),
                    slot @ None => *slot = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        })
    }
}

/// The loop's end of a call's queue: drains it, and closes it when
/// dropped, so that later reports are discarded instead of kept.
pub(crate) struct ProgressReceiver(Arc<ProgressQueue>);

impl ProgressReceiver {
    /// A new queue and its receiving end.
    pub(crate) fn new() -> (Arc<ProgressQueue>, Self) {
        let queue = Arc::new(ProgressQueue {
            state: Lock::new(QueueState::default()),
        });
        (Arc::clone(&queue), Self(queue))
    }

    /// Hands every queued report to `report`, in order, without holding
    /// the lock while it runs; registers the task for the next one.
    pub(crate) fn drain(&self, cx: &mut TaskContext<'_>, mut report: impl FnMut(Value)) {
        while let Poll::Ready(value) = self.0.poll_next(cx) {
            report(value);
        }
    }
}

impl Drop for ProgressReceiver {
    fn drop(&mut self) {
        let dropped = self.0.state.with(|state| {
            state.closed = true;
            state.waker = None;
            core::mem::take(&mut state.reports)
        });
        // Reports are dropped outside the lock.
        drop(dropped);
    }
}

#[cfg(test)]
mod tests {
    use super::ProgressReceiver;
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use core::task::{Context, Waker};
    use serde_json::{json, Value};

    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn reports_are_drained_in_order_and_a_report_wakes_the_parked_loop() {
        let (sink, receiver) = ProgressReceiver::new();
        let wakes = Arc::new(Wakes::default());
        let waker = Waker::from(Arc::clone(&wakes));
        let mut cx = Context::from_waker(&waker);
        sink.push(json!(1));
        sink.push(json!(2));
        let mut seen = Vec::new();
        receiver.drain(&mut cx, |value| seen.push(value));
        assert_eq!(seen, [json!(1), json!(2)]);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        // The drain left the task parked: the next report wakes it once.
        sink.push(json!(3));
        sink.push(json!(4));
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        seen.clear();
        receiver.drain(&mut cx, |value| seen.push(value));
        assert_eq!(seen, [json!(3), json!(4)]);
    }

    #[test]
    fn reports_after_the_loop_stopped_listening_are_discarded() {
        let (sink, receiver) = ProgressReceiver::new();
        sink.push(json!("kept until the drop"));
        drop(receiver);
        sink.push(json!("discarded"));
        let left: Vec<Value> = sink
            .state
            .with(|state| state.reports.iter().cloned().collect());
        assert!(left.is_empty(), "{left:?}");
    }
}
