//! The scripted model's traces across tasks (its producer spawned where
//! the host spawns drivers), and mid-stream aborts.

use alloc::vec::Vec;
use core::num::NonZeroUsize;

use agentstream::event_stream::EventStream;
use agentstream::message::{assistant, text, thinking, tool_call, StopReason};
use agentstream::model::{
    AbortController, DoneReason, ErrorReason, Model, ModelEvent, ScriptedModel, ScriptedTurn,
    StreamOptions, ABORTED_MESSAGE, EXHAUSTED_MESSAGE,
};
use futures_util::future::join;
use futures_util::StreamExt;
use serde_json::json;

use crate::conformance::support::{
    assert_valid, context, indexes, play, slow_turn, stalling_pacer, tool_turn, types,
};
use crate::conformance::Rt;

// ---- ScriptedModel traces ----

/// Two calls on one instance play two turns, in order.
pub async fn scripted_two_calls(rt: Rt) {
    let model = ScriptedModel::new([
        assistant([text("first")], StopReason::Stop),
        assistant([text("second")], StopReason::Stop),
    ]);
    for expected in ["first", "second"] {
        let (mut stream, producer) =
            rt.spawn_model(model.stream(&context(expected), StreamOptions::default()));
        let ((events, result), ()) = join(play(&mut stream), producer).await;
        assert_eq!(types(&events), ["start", "text_delta", "done"]);
        assert_eq!(result.text(), expected);
    }
    assert_eq!(model.calls(), 2);
}

/// The seed trace of a tool-call turn, with content indexes 0, 1, 1.
pub async fn scripted_tool_call_trace(rt: Rt) {
    let model = ScriptedModel::new([tool_turn()]);
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "text_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    assert_eq!(indexes(&events), [0, 1, 1]);
    let ModelEvent::Done { reason, message } = &events[4] else {
        panic!("expected done, got {:?}", events[4]);
    };
    assert_eq!(*reason, DoneReason::ToolUse);
    assert_eq!(**message, tool_turn());
    assert_eq!(result, tool_turn());
}

/// Two text blocks get indexes 0 and 1, and the partial accumulates.
pub async fn scripted_two_text_blocks(rt: Rt) {
    let model = ScriptedModel::new([assistant([text("A"), text("B")], StopReason::Stop)]);
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(indexes(&events), [0, 1]);
    let partial = events[2].partial().unwrap().to_message();
    assert_eq!(partial.content, [text("A"), text("B")]);
    assert_eq!(result.content, [text("A"), text("B")]);
}

/// An error turn streams its partial text and resolves (does not fail).
pub async fn scripted_error_turn(rt: Rt) {
    let model = ScriptedModel::new([
        ScriptedTurn::failure(ErrorReason::Error, "rate limited").with_partial_text("Work")
    ]);
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(types(&events), ["start", "text_delta", "error"]);
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(result.error_message.as_deref(), Some("rate limited"));
    assert_eq!(result.text(), "Work");
}

/// A call after the script ran out gets a single error event.
pub async fn scripted_exhaustion(rt: Rt) {
    let model = ScriptedModel::new([assistant([text("only")], StopReason::Stop)]);
    let (mut first, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    join(play(&mut first), producer).await;
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("y"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(types(&events), ["error"]);
    assert_eq!(result.error_message.as_deref(), Some(EXHAUSTED_MESSAGE));
    assert_eq!(model.calls(), 2);
}

/// A call whose signal is already aborted gets one `error(aborted)` and
/// consumes its turn.
pub async fn scripted_pre_aborted(rt: Rt) {
    let model = ScriptedModel::new([
        assistant([text("skipped")], StopReason::Stop),
        assistant([text("next")], StopReason::Stop),
    ]);
    let controller = AbortController::new();
    controller.abort();
    let options = StreamOptions::default().with_signal(controller.signal());
    let (mut stream, producer) = rt.spawn_model(model.stream(&context("x"), options));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(types(&events), ["error"]);
    assert!(matches!(
        events[0],
        ModelEvent::Error {
            reason: ErrorReason::Aborted,
            ..
        }
    ));
    assert_eq!(result.error_message.as_deref(), Some(ABORTED_MESSAGE));
    let (mut next, producer) =
        rt.spawn_model(model.stream(&context("y"), StreamOptions::default()));
    let ((_, result), ()) = join(play(&mut next), producer).await;
    assert_eq!(result.text(), "next");
}

/// Chunked turns and the full event sequence stay valid and lossless.
pub async fn scripted_chunked_and_full_sequence(rt: Rt) {
    let full = assistant(
        [
            thinking("hmm"),
            text("hi"),
            tool_call("c1", "ls", json!({"dir": "."})),
        ],
        StopReason::ToolUse,
    );
    let model = ScriptedModel::new([
        ScriptedTurn::message(tool_turn()).chunked(NonZeroUsize::new(4).unwrap()),
        ScriptedTurn::message(full.clone()).full_sequence(),
    ]);
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    let deltas: Vec<_> = events.iter().filter_map(ModelEvent::delta).collect();
    assert_eq!(deltas.len(), 8);
    assert_eq!(deltas[..4].concat(), "Let me look");
    assert_eq!(result, tool_turn());
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("y"), StreamOptions::default()));
    let ((events, result), ()) = join(play(&mut stream), producer).await;
    assert_eq!(indexes(&events), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    assert_eq!(result, full);
}

/// The result can be awaited before the events, which stay readable.
pub async fn scripted_result_before_events(rt: Rt) {
    let model = ScriptedModel::new([tool_turn()]);
    let (mut stream, producer) =
        rt.spawn_model(model.stream(&context("x"), StreamOptions::default()));
    let handle = stream.result_handle();
    let (result, ()) = join(stream.result(), producer).await;
    assert_eq!(result, tool_turn());
    assert_eq!(handle.await, tool_turn());
    let events: Vec<_> = stream.by_ref().collect().await;
    assert_eq!(events.len(), 5);
}

// ---- Mid-stream abort ----

/// An abort after the second delta ends the call with `error(aborted)` and
/// the text so far.
pub async fn abort_after_two_deltas(rt: Rt) {
    let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let (mut stream, producer) = rt.spawn_model(model.stream(&context("x"), options));
    let consuming = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            if event.type_name() == "text_delta" && events.len() == 2 {
                controller.abort();
            }
            events.push(event);
        }
        events
    };
    let (events, ()) = join(consuming, producer).await;
    assert_eq!(
        types(&events),
        ["start", "text_delta", "text_delta", "error"]
    );
    assert_valid(&events);
    let result = stream.result().await;
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(result.text(), "abcd");
}

/// Another task aborts the call while its producer is paused.
pub async fn abort_from_another_task(rt: Rt) {
    let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(0));
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let (mut stream, producer) = rt.spawn_model(model.stream(&context("x"), options));
    // The core's event stream doubles as a one-shot "go" signal.
    let (go, gate) = EventStream::<(), (), ()>::channel();
    let gate = gate.result();
    let aborter = rt.spawn(async move {
        gate.await.unwrap();
        controller.abort();
    });
    let consuming = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            if event.type_name() == "text_delta" {
                go.finish(()).unwrap();
            }
            events.push(event);
        }
        events
    };
    let (events, ((), ())) = join(consuming, join(aborter, producer)).await;
    assert_eq!(types(&events), ["start", "text_delta", "error"]);
    assert_valid(&events);
    let result = stream.result().await;
    assert_eq!(result.text(), "ab");
    assert_eq!(result.stop_reason, StopReason::Aborted);
}
