//! loom models of the cross-thread races in EventStream.
//!
//! Run with the command in the README ("Model checking"):
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p agentstream --test loom --release`,
//! once with no features (the spin lock) and once with `--features std`
//! (loom's mutex in place of `std::sync::Mutex`).
#![cfg(loom)]

use agentstream::event_stream::{EventStream, StreamError};
use futures_util::StreamExt;
use loom::sync::Notify;
use loom::thread;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A waker that releases a loom `Notify` permit.
struct NotifyWaker(Notify);

impl Wake for NotifyWaker {
    fn wake(self: Arc<Self>) {
        self.0.notify();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

/// Drives a future on the current loom thread. Unlike `loom::future::block_on`
/// it never wakes spuriously, so a lost wakeup shows up as a loom deadlock.
///
/// Kept hand-written for that property: loom's own `block_on` re-polls
/// without a wake and would hide exactly the bug these models look for, and
/// a library executor (`futures_executor::block_on`) parks a real OS thread
/// outside loom's scheduler, which loom cannot model.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let notify = Arc::new(NotifyWaker(Notify::new()));
    let waker = Waker::from(notify.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        notify.0.wait();
    }
}

type Stream = EventStream<u32, u32, u32>;

#[test]
fn push_vs_park() {
    loom::model(|| {
        let (producer, mut events) = Stream::channel();
        // The producer stays alive (it is handed back), so only the pushes'
        // own wakeups can complete the reads.
        let producer = thread::spawn(move || {
            producer.push(1).unwrap();
            producer.push(2).unwrap();
            producer
        });
        assert_eq!(block_on(events.next()), Some(Ok(1)));
        assert_eq!(block_on(events.next()), Some(Ok(2)));
        let producer = producer.join().unwrap();
        producer.finish(0).unwrap();
        assert_eq!(block_on(events.next()), None);
    });
}

#[test]
fn finish_vs_park() {
    loom::model(|| {
        let (producer, mut events) = Stream::channel();
        let producer = thread::spawn(move || producer.finish(7).unwrap());
        assert_eq!(block_on(events.next()), None);
        assert_eq!(block_on(events.result()), Ok(7));
        producer.join().unwrap();
    });
}

#[test]
fn fail_vs_park() {
    loom::model(|| {
        let (producer, mut events) = Stream::channel();
        let producer = thread::spawn(move || producer.fail(9).unwrap());
        assert_eq!(block_on(events.next()), Some(Err(StreamError::Failed(9))));
        assert_eq!(block_on(events.next()), None);
        producer.join().unwrap();
    });
}

#[test]
fn producer_drop_vs_park() {
    loom::model(|| {
        let (producer, mut events) = Stream::channel();
        let producer = thread::spawn(move || drop(producer));
        assert_eq!(
            block_on(events.next()),
            Some(Err(StreamError::ProducerDropped))
        );
        producer.join().unwrap();
    });
}

#[test]
fn result_awaiter_vs_finish() {
    loom::model(|| {
        let (producer, events) = Stream::channel();
        let result = events.result();
        let awaiter = thread::spawn(move || block_on(result));
        producer.finish(3).unwrap();
        assert_eq!(block_on(events.result()), Ok(3));
        assert_eq!(awaiter.join().unwrap(), Ok(3));
    });
}

#[test]
fn result_awaiter_drop_vs_finish() {
    loom::model(|| {
        let (producer, events) = Stream::channel();
        let result = events.result();
        let producer = thread::spawn(move || producer.finish(3).unwrap());
        drop(result);
        assert_eq!(block_on(events.result()), Ok(3));
        producer.join().unwrap();
    });
}

#[test]
fn consumer_drop_vs_push() {
    loom::model(|| {
        let (producer, events) = Stream::channel();
        let producer = thread::spawn(move || {
            // Either delivered (and freed with the consumer) or refused.
            let _ = producer.push(1);
            let _ = producer.push(2);
        });
        drop(events);
        producer.join().unwrap();
    });
}

#[test]
fn closed_vs_consumer_and_result_drop() {
    loom::model(|| {
        let (producer, events) = Stream::channel();
        let result = events.result();
        let consumer = thread::spawn(move || drop(events));
        drop(result);
        block_on(producer.closed());
        assert!(producer.is_closed());
        consumer.join().unwrap();
    });
}

#[test]
fn abort_vs_parked_waiter() {
    loom::model(|| {
        let controller = agentstream::model::AbortController::new();
        let signal = controller.signal();
        let aborter = thread::spawn(move || controller.abort());
        block_on(signal.aborted());
        assert!(signal.is_aborted());
        aborter.join().unwrap();
    });
}

#[test]
fn two_closed_waiters_vs_the_last_observer_drop() {
    loom::model(|| {
        let (producer, events) = Stream::channel();
        let producer = std::sync::Arc::new(producer);
        let other = producer.clone();
        // Two tasks wait on `closed()` at once; the drop must wake both.
        let waiter = thread::spawn(move || block_on(other.closed()));
        drop(events);
        block_on(producer.closed());
        waiter.join().unwrap();
    });
}

#[test]
fn is_aborted_sees_an_abort_from_another_thread() {
    loom::model(|| {
        let controller = agentstream::model::AbortController::new();
        let signal = controller.signal();
        let aborter = thread::spawn(move || {
            controller.abort();
            controller
        });
        // Lock-free reads either see the abort or not; once the aborting
        // thread is joined they must.
        let _ = signal.is_aborted();
        let controller = aborter.join().unwrap();
        assert!(signal.is_aborted() && controller.is_aborted());
    });
}
