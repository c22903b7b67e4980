//! The adapter's own pieces on the real JavaScript event loop: the order in
//! which a spawned call runs, the host timer, timeouts and the abort
//! bridges.
#![cfg(target_arch = "wasm32")]

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream_wasm::prelude::*;
use futures_util::future::{select, Either};
use futures_util::{FutureExt, StreamExt};
use wasm_bindgen_test::wasm_bindgen_test;

/// A log shared by the test's synchronous code, the producer and the
/// consumer.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// `inner` behind a driver that logs when it first runs, then forwards
/// every event: the log shows when the call's producer starts.
fn logged(mut inner: ModelStream, log: Log) -> ModelStream {
    ModelStream::driven(move |mut producer| async move {
        log.push("producer runs");
        while let Some(event) = inner.next().await {
            if producer.push(event).is_err() {
                return;
            }
        }
    })
}

/// The seed's ordering, on the JS event loop: `stream` returns before the
/// producer runs, the synchronous code after it runs to its end, and the
/// producer runs in a later microtask, before the first event arrives
/// (like the TypeScript original's `queueMicrotask`).
#[wasm_bindgen_test]
async fn the_producer_runs_after_the_synchronous_code() {
    let log = Log::default();
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let context = Context::from_messages([user("hello").into()]);

    log.push("synchronous code");
    let mut stream = EventLoop.spawn_stream(logged(
        model.stream(&context, StreamOptions::default()),
        log.clone(),
    ));
    log.push("stream returned");
    // Polling now finds nothing: the producer is a task that has not run.
    assert!(stream.next().now_or_never().is_none());
    log.push("synchronous code ends");

    let first = stream.next().await.expect("a first event");
    log.push(format!("first event: {}", first.type_name()));
    assert_eq!(
        log.entries(),
        [
            "synchronous code",
            "stream returned",
            "synchronous code ends",
            "producer runs",
            "first event: start",
        ]
    );
    assert_eq!(stream.result().await.text(), "hi");
}

/// Without `spawn`, the stream drives itself on the event loop: the
/// producer still runs only once the stream is polled.
#[wasm_bindgen_test]
async fn a_self_driven_stream_runs_when_polled() {
    let log = Log::default();
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let context = Context::from_messages([user("hello").into()]);
    let mut stream = logged(
        model.stream(&context, StreamOptions::default()),
        log.clone(),
    );
    log.push("stream returned");
    let types: Vec<_> = stream.by_ref().map(|e| e.type_name()).collect().await;
    assert_eq!(log.entries(), ["stream returned", "producer runs"]);
    assert_eq!(types, ["start", "text_delta", "done"]);
}

/// Two host timers complete in the order of their durations, whatever the
/// order they were set in.
#[wasm_bindgen_test]
async fn sleeps_complete_in_the_order_of_their_durations() {
    let long = agentstream_wasm::sleep(Duration::from_millis(40));
    let short = agentstream_wasm::sleep(Duration::from_millis(1));
    match select(long, short).await {
        Either::Right(((), long)) => long.await,
        Either::Left(_) => panic!("the 40 ms sleep completed before the 1 ms one"),
    }
}

/// A timeout measured by `setTimeout` cuts a paced scripted call off after
/// its first delta, through the call's abort signal.
#[wasm_bindgen_test]
async fn a_timeout_aborts_a_paced_call_mid_stream() {
    let model = ScriptedModel::new([ScriptedTurn::message(assistant(
        [text("a long answer")],
        StopReason::Stop,
    ))
    .chunked(NonZeroUsize::new(10).unwrap())])
    .with_pacer(EventLoop.pause(Duration::from_secs(60)));
    let context = Context::from_messages([user("hi").into()]);
    let mut stream = EventLoop.stream_with_timeout(
        &model,
        &context,
        StreamOptions::default(),
        Duration::from_millis(10),
    );
    let result = stream.result().await;
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.text(), "a ");
}

/// A paced call whose pauses are shorter than the timeout completes.
#[wasm_bindgen_test]
async fn a_paced_call_within_its_timeout_completes() {
    let model =
        ScriptedModel::new([
            ScriptedTurn::message(assistant([text("abcdef")], StopReason::Stop))
                .chunked(NonZeroUsize::new(3).unwrap()),
        ])
        .with_pacer(EventLoop.pause(Duration::from_millis(1)));
    let context = Context::from_messages([user("hi").into()]);
    let mut stream = EventLoop.stream_with_timeout(
        &model,
        &context,
        StreamOptions::default(),
        Duration::from_secs(60),
    );
    let deltas: Vec<String> = stream
        .by_ref()
        .filter_map(|event| async move { event.delta().map(str::to_owned) })
        .collect()
        .await;
    assert_eq!(deltas, ["ab", "cd", "ef"]);
    assert_eq!(stream.result().await.stop_reason, StopReason::Stop);
}

/// A JavaScript `AbortController` aborts our signal, synchronously (the
/// `abort` event), and a call using it ends in `error(aborted)`.
#[wasm_bindgen_test]
async fn a_javascript_abort_aborts_our_signal() {
    let js = web_sys::AbortController::new().unwrap();
    let bridge = JsAbortBridge::new(&js.signal());
    let signal = bridge.signal();
    assert!(!signal.is_aborted());
    js.abort();
    assert!(signal.is_aborted());
    assert!(bridge.is_aborted());

    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let context = Context::from_messages([user("hello").into()]);
    let options = StreamOptions::default().with_signal(signal);
    let mut stream = EventLoop.spawn_stream(model.stream(&context, options));
    assert_eq!(stream.result().await.stop_reason, StopReason::Aborted);

    // A signal that had aborted before it was bridged.
    let bridge = JsAbortBridge::new(&js.signal());
    assert!(bridge.signal().is_aborted());
}

/// Dropping the bridge stops listening: a later JavaScript abort no longer
/// reaches our signal.
#[wasm_bindgen_test]
fn a_dropped_bridge_stops_listening() {
    let js = web_sys::AbortController::new().unwrap();
    let bridge = JsAbortBridge::new(&js.signal());
    let signal = bridge.signal();
    drop(bridge);
    js.abort();
    assert!(!signal.is_aborted());
}

/// Our abort aborts the JavaScript signal, in a later microtask.
#[wasm_bindgen_test]
async fn our_abort_aborts_a_javascript_signal() {
    let controller = AbortController::new();
    let js = agentstream_wasm::to_js_signal(&controller.signal()).unwrap();
    assert!(!js.aborted());
    controller.abort();
    // The bridge's task runs once this task yields.
    agentstream_wasm::sleep(Duration::ZERO).await;
    assert!(js.aborted());

    let js = agentstream_wasm::to_js_signal(&controller.signal()).unwrap();
    assert!(js.aborted(), "an already aborted signal bridges as aborted");
}

/// A tool call spawned on the event loop runs there and hands back its
/// outcome; it starts only after the spawning code has yielded.
#[wasm_bindgen_test]
async fn a_spawned_tool_call_hands_back_its_outcome() {
    use agentstream_wasm::agentstream::agent::ToolOutput;

    let log = Log::default();
    let spawner = agentstream_wasm::EventLoop.tool_spawner();
    let inside = log.clone();
    let call = spawner(Box::pin(async move {
        inside.push("tool runs");
        Ok(ToolOutput::text("42"))
    }));
    log.push("spawned");
    assert_eq!(call.await.ok(), Some(ToolOutput::text("42")));
    assert_eq!(log.entries(), ["spawned", "tool runs"]);
}

/// Dropping a spawned tool call's future drops the tool's own future.
#[wasm_bindgen_test]
async fn dropping_a_spawned_tool_call_cancels_it() {
    /// Logs when the tool's future is dropped.
    struct OnDrop(Log);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.push("tool dropped");
        }
    }

    let log = Log::default();
    let spawner = agentstream_wasm::EventLoop.tool_spawner();
    let guard = OnDrop(log.clone());
    let inside = log.clone();
    let call = spawner(Box::pin(async move {
        let _guard = guard;
        inside.push("tool runs");
        // Never completes: only the drop ends it.
        futures_util::future::pending().await
    }));
    // Let the task start, then give up on it.
    agentstream_wasm::sleep(Duration::ZERO).await;
    drop(call);
    agentstream_wasm::sleep(Duration::ZERO).await;
    assert_eq!(log.entries(), ["tool runs", "tool dropped"]);
}
