//! The scenarios every runtime adapter runs, written once so that tokio,
//! smol and async-std are held to the same behaviour: a spawned producer
//! gives the trace of a self-driven one, a dropped consumer stops the
//! spawned producer task, and `stream_with_timeout` cuts a call off without
//! touching calls that end in time or the caller's own signal.
//!
//! This module knows no runtime. Each adapter's test file implements
//! [`AdapterRuntime`] with its own spawn, timeout and sleep, then runs each
//! scenario on its runtime, inside a guard against hangs. The scenarios
//! panic on any mismatch. They never assert on speed: the only waits are
//! short sleeps that give a task which should *not* make progress the chance
//! to (wrongly) do so, and the slow calls use [`stalling_pacer`], whose
//! pauses only an abort or a timeout can end.

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use crate::conformance::support::stalling_pacer;
use crate::conformance::support::{play, slow_turn, tool_turn};
use agentstream::message::{assistant, text, user, Context, StopReason};
use agentstream::model::{
    AbortController, ErrorReason, Model, ModelEvent, ModelStream, ScriptedModel, ScriptedTurn,
    StreamOptions, ABORTED_MESSAGE,
};
use agentstream::rt::Runtime;
use futures_util::StreamExt;

/// What the scenarios need from a runtime adapter. Implement it on a unit
/// type in the adapter's test file, forwarding to the adapter's functions.
pub trait AdapterRuntime {
    /// Spawns the stream's producer as a task and returns the stream, which
    /// no longer drives it (the adapter's `spawn`).
    fn spawn(stream: ModelStream) -> ModelStream;

    /// Spawns the stream's producer as a task, leaves the stream in place and
    /// returns a future that completes when the task has finished; `None` if
    /// the stream has no driver. The future must panic if the task was
    /// cancelled or failed instead of completing.
    fn spawn_driver(stream: &mut ModelStream) -> Option<impl Future<Output = ()> + Send + 'static>;

    /// The adapter's runtime type (`Tokio`, `Smol`, `AsyncStd`).
    type Rt: Runtime<Sleep: Send>;

    /// The adapter's runtime value.
    const RT: Self::Rt;

    /// Starts a call that the adapter's timer aborts after `timeout` (the
    /// adapter's `stream_with_timeout`).
    fn stream_with_timeout(
        model: &ScriptedModel,
        context: &Context,
        options: StreamOptions,
        timeout: Duration,
    ) -> ModelStream {
        Self::RT.stream_with_timeout(model, context, options, timeout)
    }

    /// Sleeps for `duration` on the runtime's timer.
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static;
}

fn context() -> Context {
    Context::from_messages([user("hi").into()])
}

/// Three turns of different shapes: a chunked tool call, a full sequence
/// of two text blocks, and a failure after some text.
fn turns() -> Vec<ScriptedTurn> {
    let chunks = NonZeroUsize::new(3).unwrap();
    vec![
        ScriptedTurn::message(tool_turn()).chunked(chunks),
        ScriptedTurn::message(assistant([text("A"), text("B")], StopReason::Stop)).full_sequence(),
        ScriptedTurn::failure(ErrorReason::Error, "rate limited").with_partial_text("Work"),
    ]
}

/// Each of the three scripted turns, played self-driven and with its
/// producer spawned: the same events and the same result, and the spawned
/// stream no longer carries a driver.
pub async fn spawned_matches_self_driven<R: AdapterRuntime>() {
    let self_driven = ScriptedModel::new(turns());
    let spawned = ScriptedModel::new(turns());
    for _ in 0..turns().len() {
        let expected = play(&mut self_driven.stream(&context(), StreamOptions::default())).await;
        let mut stream = R::spawn(spawned.stream(&context(), StreamOptions::default()));
        assert!(stream.take_driver().is_none(), "the driver runs as a task");
        assert_eq!(play(&mut stream).await, expected);
    }
}

/// A producer that never ends on its own, spawned: while a result handle
/// lives it keeps running after the stream is dropped; once the handle goes
/// too, its task completes (it is not cancelled), the producer future is
/// dropped and no further work happens.
pub async fn dropping_the_consumer_stops_the_spawned_producer<R: AdapterRuntime>() {
    let iterations = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    /// Sets its flag when the producer future is dropped.
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let (counter, flag) = (iterations.clone(), DropFlag(dropped.clone()));
    let mut stream = ModelStream::driven(move |mut producer| async move {
        let _flag = flag;
        let _ = producer.push(ModelEvent::Start {
            partial: assistant([], StopReason::Stop).into(),
        });
        loop {
            // A producer that never ends on its own.
            counter.fetch_add(1, Ordering::SeqCst);
            R::sleep(Duration::from_millis(1)).await;
        }
    });
    let task = R::spawn_driver(&mut stream).expect("a driven stream has a driver");
    let result = stream.result_handle();
    assert_eq!(stream.next().await.map(|e| e.type_name()), Some("start"));
    drop(stream);
    // A result handle still observes the call: the producer goes on.
    R::sleep(Duration::from_millis(5)).await;
    assert!(
        !dropped.load(Ordering::SeqCst),
        "a result handle keeps it alive"
    );
    drop(result);
    task.await; // the producer task completes
    assert!(
        dropped.load(Ordering::SeqCst),
        "the producer future was dropped"
    );
    let work = iterations.load(Ordering::SeqCst);
    R::sleep(Duration::from_millis(5)).await;
    assert_eq!(
        iterations.load(Ordering::SeqCst),
        work,
        "no work after the drop"
    );
}

/// A scripted call stalled in its pacer, spawned: dropping the stream
/// after the first event lets the task complete.
pub async fn dropping_a_paced_scripted_call_midway_ends_its_task<R: AdapterRuntime>() {
    let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
    let mut stream = model.stream(&context(), StreamOptions::default());
    let task = R::spawn_driver(&mut stream).unwrap();
    assert_eq!(stream.next().await.map(|e| e.type_name()), Some("start"));
    drop(stream);
    task.await;
}

/// A call that stalls after its second delta, with a 20 ms timeout: it
/// ends with `error(aborted)` and keeps the text so far.
pub async fn a_timeout_cuts_a_call_off_mid_stream<R: AdapterRuntime>() {
    let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
    let mut stream = R::stream_with_timeout(
        &model,
        &context(),
        StreamOptions::default(),
        Duration::from_millis(20),
    );
    let (events, result) = play(&mut stream).await;
    let types: Vec<_> = events.iter().map(ModelEvent::type_name).collect();
    assert_eq!(types, ["start", "text_delta", "text_delta", "error"]);
    assert!(matches!(
        events[3],
        ModelEvent::Error {
            reason: ErrorReason::Aborted,
            ..
        }
    ));
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(result.text(), "abcd");
}

/// Calls that end well before their (one hour) timeout give exactly the
/// events and result of calls without one.
pub async fn a_call_that_ends_before_its_timeout_is_untouched<R: AdapterRuntime>() {
    let model = ScriptedModel::new(turns());
    let reference = ScriptedModel::new(turns());
    let expected = play(&mut reference.stream(&context(), StreamOptions::default())).await;
    let options = StreamOptions::default();
    let mut stream = R::stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
    assert_eq!(play(&mut stream).await, expected);
}

/// A call with a (one hour) timeout still obeys the caller's signal:
/// aborted at the first delta, it ends with that delta's text; aborted
/// before the call, it is the single aborted error.
pub async fn the_callers_own_signal_still_aborts_a_call_with_a_timeout<R: AdapterRuntime>() {
    let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(0));
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = R::stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
    let mut types = Vec::new();
    while let Some(event) = stream.next().await {
        if event.type_name() == "text_delta" {
            controller.abort();
        }
        types.push(event.type_name());
    }
    assert_eq!(types, ["start", "text_delta", "error"]);
    assert_eq!(stream.result().await.text(), "ab");

    // A signal aborted before the call gives the single aborted error.
    let model = ScriptedModel::new([slow_turn()]);
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = R::stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
    let (events, result) = play(&mut stream).await;
    assert_eq!(events.len(), 1);
    assert_eq!(result.stop_reason, StopReason::Aborted);
}

/// One `#[test]` per scenario of this module, each `run(scenario::<R>())`:
/// an adapter's `tests/adapter.rs` implements [`AdapterRuntime`] on `R`,
/// defines `run` (its runtime's entry, with a guard against hangs) and
/// invokes `adapter_scenario_tests!(R, run)`.
#[macro_export]
macro_rules! adapter_scenario_tests {
    ($rt:ty, $run:path) => {
        $crate::adapter_scenario_tests!(@each $rt, $run;
            a_spawned_producer_gives_the_same_events_and_results_as_a_self_driven_one
                = spawned_matches_self_driven,
            dropping_the_consumer_stops_the_spawned_producer_task
                = dropping_the_consumer_stops_the_spawned_producer,
            dropping_a_paced_scripted_call_midway_ends_its_task
                = dropping_a_paced_scripted_call_midway_ends_its_task,
            a_timeout_cuts_a_call_off_mid_stream_with_the_text_so_far
                = a_timeout_cuts_a_call_off_mid_stream,
            a_call_that_ends_before_its_timeout_is_untouched
                = a_call_that_ends_before_its_timeout_is_untouched,
            the_callers_own_signal_still_aborts_a_call_with_a_timeout
                = the_callers_own_signal_still_aborts_a_call_with_a_timeout,
        );
    };
    (@each $rt:ty, $run:path; $($test:ident = $scenario:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                $run($crate::http::adapter_scenarios::$scenario::<$rt>());
            }
        )*
    };
}
