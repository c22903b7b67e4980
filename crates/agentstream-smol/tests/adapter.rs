//! The smol adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentstream_smol::agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
};
use agentstream_smol::agentstream::model::{ErrorReason, ABORTED_MESSAGE};
use agentstream_smol::{
    spawn_driver_on, spawn_on, stream_with_timeout, validate_events, AbortController, Executor,
    Model, ModelEvent, ModelStream, ScriptedModel, ScriptedTurn, StreamOptions, Task, Timer,
};
use futures_util::StreamExt;
use serde_json::json;

/// One executor shared by the tests; every test thread runs it, so it is
/// multi-threaded while tests run in parallel.
static EXECUTOR: Executor<'static> = Executor::new();

/// Runs `body` on [`EXECUTOR`], with a one-second guard against hangs (it
/// asserts nothing about speed).
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    let guarded = async {
        let body = std::pin::pin!(EXECUTOR.spawn(body));
        let guard = std::pin::pin!(Timer::after(Duration::from_secs(1)));
        match futures_util::future::select(body, guard).await {
            futures_util::future::Either::Left(((), _)) => {}
            futures_util::future::Either::Right(_) => panic!("guard: the test body hung"),
        }
    };
    smol::block_on(EXECUTOR.run(guarded));
}

fn spawn_driver(stream: &mut ModelStream) -> Option<Task<()>> {
    spawn_driver_on(&EXECUTOR, stream)
}

async fn sleep(duration: Duration) {
    Timer::after(duration).await;
}

fn context() -> Context {
    Context::from_messages([user("hi").into()])
}

fn turns() -> Vec<ScriptedTurn> {
    let chunks = NonZeroUsize::new(3).unwrap();
    vec![
        ScriptedTurn::message(assistant(
            [
                text("Let me look"),
                tool_call("c1", "read", json!({"path": "README.md"})),
            ],
            StopReason::ToolUse,
        ))
        .chunked(chunks),
        ScriptedTurn::message(assistant([text("A"), text("B")], StopReason::Stop)).full_sequence(),
        ScriptedTurn::failure(ErrorReason::Error, "rate limited").with_partial_text("Work"),
    ]
}

async fn play(stream: &mut ModelStream) -> (Vec<ModelEvent>, AssistantMessage) {
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let diagnostics = validate_events(&events);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    (events, stream.result().await)
}

/// A pacer whose first `free` pauses end at once and later ones never end
/// by themselves: only an abort (or a timeout) ends them.
fn stalling_pacer(free: usize) -> impl Fn() -> futures_util::future::BoxFuture<'static, ()> {
    let calls = Arc::new(AtomicUsize::new(0));
    move || {
        let call = calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if call >= free {
                futures_util::future::pending::<()>().await;
            }
        })
    }
}

fn slow_turn() -> ScriptedTurn {
    ScriptedTurn::message(assistant([text("abcdefgh")], StopReason::Stop))
        .chunked(NonZeroUsize::new(4).unwrap())
}

#[test]
fn a_spawned_producer_gives_the_same_events_and_results_as_a_self_driven_one() {
    run(async {
        let self_driven = ScriptedModel::new(turns());
        let spawned = ScriptedModel::new(turns());
        for _ in 0..turns().len() {
            let expected =
                play(&mut self_driven.stream(&context(), StreamOptions::default())).await;
            let mut stream = spawn_on(
                &EXECUTOR,
                spawned.stream(&context(), StreamOptions::default()),
            );
            assert!(stream.take_driver().is_none(), "the driver runs as a task");
            assert_eq!(play(&mut stream).await, expected);
        }
    });
}

#[test]
fn dropping_the_consumer_stops_the_spawned_producer_task() {
    run(async {
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
                sleep(Duration::from_millis(1)).await;
            }
        });
        let task = spawn_driver(&mut stream).expect("a driven stream has a driver");
        let result = stream.result_handle();
        assert_eq!(stream.next().await.map(|e| e.type_name()), Some("start"));
        drop(stream);
        // A result handle still observes the call: the producer goes on.
        sleep(Duration::from_millis(5)).await;
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
        sleep(Duration::from_millis(5)).await;
        assert_eq!(
            iterations.load(Ordering::SeqCst),
            work,
            "no work after the drop"
        );
    });
}

#[test]
fn dropping_a_paced_scripted_call_midway_ends_its_task() {
    run(async {
        let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
        let mut stream = model.stream(&context(), StreamOptions::default());
        let task = spawn_driver(&mut stream).unwrap();
        assert_eq!(stream.next().await.map(|e| e.type_name()), Some("start"));
        drop(stream);
        task.await;
    });
}

#[test]
fn a_timeout_cuts_a_call_off_mid_stream_with_the_text_so_far() {
    run(async {
        let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
        let mut stream = stream_with_timeout(
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
    });
}

#[test]
fn a_call_that_ends_before_its_timeout_is_untouched() {
    run(async {
        let model = ScriptedModel::new(turns());
        let reference = ScriptedModel::new(turns());
        let expected = play(&mut reference.stream(&context(), StreamOptions::default())).await;
        let options = StreamOptions::default();
        let mut stream =
            stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
        assert_eq!(play(&mut stream).await, expected);
    });
}

#[test]
fn the_callers_own_signal_still_aborts_a_call_with_a_timeout() {
    run(async {
        let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(0));
        let controller = AbortController::new();
        let options = StreamOptions::default().with_signal(controller.signal());
        let mut stream =
            stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
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
        let mut stream =
            stream_with_timeout(&model, &context(), options, Duration::from_secs(3600));
        let (events, result) = play(&mut stream).await;
        assert_eq!(events.len(), 1);
        assert_eq!(result.stop_reason, StopReason::Aborted);
    });
}
