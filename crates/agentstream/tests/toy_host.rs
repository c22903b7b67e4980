//! "Adding a host" (docs/design.md) done in a test: a toy runtime is two
//! trait impls, [`Timer`] (a manual clock that the executor moves on when
//! every task is idle, like tokio's paused time) and [`Spawn`] (a queue of
//! tasks), and the core's generic code, through the methods of
//! [`Runtime`] that the two impls give it, gives it a retry that honours a
//! `Retry-After` date on that clock (`with_retry`), a timeout that cuts a
//! paced call off (`stream_with_timeout`, `pause`), a spawned producer
//! (`spawn_stream`, `spawn_driver`) and spawned tool calls
//! (`tool_spawner`). Nothing here is specific to the toy runtime but the
//! two impls.
//!
//! Not on `wasm` targets: there `Spawn` takes tasks that are not `Send`
//! (`MaybeSend` bounds nothing) while a `Model` stays `Send + Sync`, so a
//! runtime that keeps its tasks in shared state, as this toy does, is not
//! a timer a model can hold. A wasm runtime is a single-thread one without
//! such state: agentstream-wasm's `EventLoop`, tested under Node and
//! Chromium by `.ci/hosts-wasm.sh`.
#![cfg(not(target_family = "wasm"))]

use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

use agentstream::agent::{MaybeSend, ToolError, ToolOutput};
use agentstream::message::{assistant, text, user, Context, StopReason};
use agentstream::model::{
    DoneReason, ErrorCause, ErrorReason, HttpFailure, Model, ModelEvent, ModelStream, RetryAfter,
    RetryModel, RetryPolicy, ScriptedModel, ScriptedTurn, StreamOptions, TimeoutKind,
};
use agentstream::rt::{Runtime, Spawn, Timer};

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The toy runtime's shared state: the clock, the sleepers, the tasks.
#[derive(Default)]
struct State {
    now_ms: u64,
    /// Deadlines (ms) of pending sleeps and their wakers.
    sleepers: Vec<(u64, Waker)>,
    spawned: Vec<Task>,
}

/// The toy runtime: one value implementing both traits.
#[derive(Clone, Default)]
struct Toy(Arc<Mutex<State>>);

/// The toy's clock starts here (a Unix time in ms).
const EPOCH_MS: u64 = 1_700_000_000_000;

impl Toy {
    fn new() -> Self {
        let toy = Self::default();
        toy.0.lock().unwrap().now_ms = EPOCH_MS;
        toy
    }

    /// Milliseconds since the toy started.
    fn elapsed_ms(&self) -> u64 {
        self.0.lock().unwrap().now_ms - EPOCH_MS
    }

    /// Runs `main` and every spawned task until `main` is done. When no
    /// task was woken in a round, the clock jumps to the next deadline.
    fn block_on<T>(&self, main: impl Future<Output = T>) -> T {
        let woken = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = TaskContext::from_waker(&waker);
        let mut main = std::pin::pin!(main);
        let mut tasks: Vec<Task> = Vec::new();
        for _ in 0..100_000 {
            woken.0.store(false, Ordering::SeqCst);
            if let Poll::Ready(output) = main.as_mut().poll(&mut cx) {
                return output;
            }
            tasks.append(&mut self.0.lock().unwrap().spawned);
            tasks.retain_mut(|task| task.as_mut().poll(&mut cx).is_pending());
            if !woken.0.load(Ordering::SeqCst) && self.0.lock().unwrap().spawned.is_empty() {
                self.advance();
            }
        }
        panic!("the toy runtime made no progress");
    }

    /// Moves the clock to the earliest deadline and wakes its sleepers.
    fn advance(&self) {
        let mut state = self.0.lock().unwrap();
        let next = state.sleepers.iter().map(|(at, _)| *at).min();
        let Some(next) = next else {
            panic!("deadlock: nothing is woken and nothing sleeps");
        };
        state.now_ms = state.now_ms.max(next);
        let now = state.now_ms;
        let (due, rest) = state.sleepers.drain(..).partition(|(at, _)| *at <= now);
        state.sleepers = rest;
        drop(state);
        for (_, waker) in due {
            waker.wake();
        }
    }
}

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// One sleep of the toy timer.
struct Sleep {
    toy: Toy,
    until_ms: u64,
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let mut state = self.toy.0.lock().unwrap();
        if state.now_ms >= self.until_ms {
            return Poll::Ready(());
        }
        state.sleepers.push((self.until_ms, cx.waker().clone()));
        Poll::Pending
    }
}

impl Timer for Toy {
    type Sleep = Sleep;

    fn sleep(&self, duration: Duration) -> Sleep {
        let now = self.0.lock().unwrap().now_ms;
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Sleep {
            toy: self.clone(),
            until_ms: now.saturating_add(millis),
        }
    }

    fn now_unix_ms(&self) -> u64 {
        self.0.lock().unwrap().now_ms
    }
}

impl Spawn for Toy {
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + MaybeSend + 'static,
    {
        self.0.lock().unwrap().spawned.push(Box::pin(task));
    }
}

fn context() -> Context {
    Context::from_messages([user("hi").into()])
}

/// Fails with HTTP 429 and `Retry-After` three seconds after the toy's
/// clock (an HTTP date), then answers.
struct RateLimited {
    toy: Toy,
    calls: AtomicUsize,
}

impl Model for RateLimited {
    fn stream(&self, _: &Context, _: StreamOptions) -> ModelStream {
        let first = self.calls.fetch_add(1, Ordering::SeqCst) == 0;
        let at = self.toy.now_unix_ms() / 1000 + 3;
        ModelStream::driven(move |mut producer| async move {
            if first {
                let mut message = assistant(Vec::new(), StopReason::Error);
                message.error_message = Some("HTTP 429".into());
                let cause = HttpFailure::new(429)
                    .with_retry_after(Some(RetryAfter::At { unix_seconds: at }));
                let event = ModelEvent::error(ErrorReason::Error, message);
                let _ = producer.push_error(event, ErrorCause::Http(cause));
            } else {
                let message = assistant([text("at last")], StopReason::Stop);
                let _ = producer.push(ModelEvent::done(DoneReason::Stop, message));
            }
        })
    }
}

#[test]
fn a_retry_waits_on_the_toy_timer_for_a_retry_after_date_read_on_its_clock() {
    let toy = Toy::new();
    let inner = RateLimited {
        toy: toy.clone(),
        calls: AtomicUsize::new(0),
    };
    // `RetryModel::new` rather than `Runtime::with_retry`: the latter seeds
    // its jitter from the OS (feature `std`), and this test runs without it.
    let model = RetryModel::new(inner, RetryPolicy::default(), toy.clone());
    let mut stream = toy.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let message = toy.block_on(stream.result());
    assert_eq!(message.text(), "at last");
    assert_eq!(model.inner().calls.load(Ordering::SeqCst), 2);
    // The date was three whole seconds ahead of a clock at .000.
    assert_eq!(toy.elapsed_ms(), 3_000);
}

#[test]
fn a_timeout_cuts_a_paced_call_off_on_the_toy_timer() {
    let toy = Toy::new();
    // "abcdef" in three deltas with 10 s between them; a 15 s timeout
    // lets the first two out.
    let model =
        ScriptedModel::new([
            ScriptedTurn::message(assistant([text("abcdef")], StopReason::Stop))
                .chunked(NonZeroUsize::new(3).unwrap()),
        ])
        .with_pacer(toy.pause(Duration::from_secs(10)));
    let mut stream = toy.stream_with_timeout(
        &model,
        &context(),
        StreamOptions::default(),
        Duration::from_secs(15),
    );
    let message = toy.block_on(stream.result());
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.text(), "abcd");
    assert!(matches!(
        stream.error_cause(),
        Some(ErrorCause::Timeout(TimeoutKind::Total, None))
    ));
    assert_eq!(toy.elapsed_ms(), 15_000);
}

#[test]
fn a_spawned_driver_and_spawned_tool_calls_run_as_toy_tasks() {
    let toy = Toy::new();
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let mut stream = model.stream(&context(), StreamOptions::default());
    let task = toy
        .spawn_driver(&mut stream)
        .expect("a scripted stream has a driver");
    assert_eq!(toy.block_on(task), Ok(()));
    assert_eq!(toy.block_on(stream.result()).text(), "hi");

    let spawner = toy.tool_spawner();
    let sleeper = toy.clone();
    let call = spawner(Box::pin(async move {
        sleeper.sleep(Duration::from_secs(2)).await;
        Ok::<_, ToolError>(ToolOutput::text("done"))
    }));
    let output = toy.block_on(call).expect("the tool's result");
    assert_eq!(output, ToolOutput::text("done"));
    assert_eq!(toy.elapsed_ms(), 2_000);

    // A call whose future is dropped stops its task at its next step.
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = SetOnDrop(Arc::clone(&dropped));
    let sleeper = toy.clone();
    let call = spawner(Box::pin(async move {
        let _guard = guard;
        sleeper.sleep(Duration::from_secs(60)).await;
        Ok::<_, ToolError>(ToolOutput::text("late"))
    }));
    drop(call);
    toy.block_on(toy.pause(Duration::from_secs(1)).start());
    assert!(
        dropped.load(Ordering::SeqCst),
        "the dropped call's task stopped"
    );
    assert_eq!(toy.elapsed_ms(), 3_000);
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
