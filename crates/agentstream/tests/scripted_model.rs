//! ScriptedModel beyond chapter 04 (chunking, the full sequence, pacing,
//! sharing, parsing), the model stream's semantics and the
//! protocol checker, polled by hand with no runtime. The chapter's own
//! cases are in `chapter04.rs`.
#![cfg(not(loom))]

mod support;

use std::num::NonZeroUsize;
use std::task::Poll;

use agentstream::message::{
    assistant, text, thinking, tool_call, user, AssistantMessage, Context, StopReason,
};
use agentstream::model::{
    validate_events, AbortController, BlockShape, DoneReason, ErrorReason, Model, ModelEvent,
    ModelStream, ScriptedModel, ScriptedTurn, StreamOptions, ABORTED_MESSAGE,
    PRODUCER_DROPPED_MESSAGE,
};
use futures_util::StreamExt;
use serde_json::json;
use support::{run_local, CountingWaker};

/// Plays one call to its end: every event, then the result.
fn play(stream: &mut ModelStream) -> (Vec<ModelEvent>, AssistantMessage) {
    run_local(async {
        let events: Vec<ModelEvent> = stream.by_ref().collect().await;
        let result = stream.result().await;
        (events, result)
    })
}

fn types(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(ModelEvent::type_name).collect()
}

fn indexes(events: &[ModelEvent]) -> Vec<usize> {
    events
        .iter()
        .filter_map(ModelEvent::content_index)
        .collect()
}

fn context(text: &str) -> Context {
    Context::from_messages([user(text).into()])
}

fn tool_turn() -> AssistantMessage {
    assistant(
        [
            text("Let me look"),
            tool_call("c1", "read", json!({"path": "README.md"})),
        ],
        StopReason::ToolUse,
    )
}

fn assert_valid(events: &[ModelEvent]) {
    let diagnostics = validate_events(events);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn a_model_not_asked_to_record_keeps_no_request_but_counts_the_calls() {
    let model = ScriptedModel::new([
        assistant([text("first")], StopReason::Stop),
        assistant([text("second")], StopReason::Stop),
    ]);
    assert!(!model.is_recording_requests());
    for request in ["one", "two"] {
        play(&mut model.stream(&context(request), StreamOptions::default()));
    }
    assert_eq!(model.calls(), 2);
    assert!(model.requests().is_empty());
    let recording =
        ScriptedModel::new([assistant([text("x")], StopReason::Stop)]).recording_requests();
    assert!(recording.is_recording_requests());
    play(&mut recording.stream(&context("kept"), StreamOptions::default()));
    assert_eq!(recording.requests(), [context("kept")]);
}

#[test]
fn old_snapshots_never_change() {
    let model = ScriptedModel::new([tool_turn()]);
    let (events, _) = play(&mut model.stream(&context("x"), StreamOptions::default()));
    let start = events[0].partial().unwrap().to_message();
    assert!(start.content.is_empty());
    assert_eq!(start.stop_reason, StopReason::Stop);
    assert_eq!(events[1].partial().unwrap().content_len(), 1);
}

#[test]
fn an_assistant_turn_with_stop_reason_aborted_ends_in_error() {
    let mut message = assistant([text("half")], StopReason::Aborted);
    message.error_message = Some("cut".into());
    let model = ScriptedModel::new([message.clone()]);
    let (events, result) = play(&mut model.stream(&context("x"), StreamOptions::default()));
    assert_eq!(types(&events), ["start", "text_delta", "error"]);
    assert!(matches!(
        events[2],
        ModelEvent::Error {
            reason: ErrorReason::Aborted,
            ..
        }
    ));
    assert_eq!(result, message);
}

#[test]
fn result_drives_the_producer_without_consuming_the_events() {
    let model = ScriptedModel::new([tool_turn()]);
    let mut stream = model.stream(&context("x"), StreamOptions::default());
    let result = run_local(stream.result());
    assert_eq!(result, tool_turn());
    let events: Vec<_> = run_local(stream.by_ref().collect::<Vec<_>>());
    assert_eq!(events.len(), 5);
    assert!(events.last().unwrap().is_terminal());
}

#[test]
fn the_terminal_message_and_the_tool_call_are_shared_not_copied() {
    let model = ScriptedModel::new([tool_turn()]);
    let mut stream = model.stream(&context("x"), StreamOptions::default());
    let events: Vec<_> = run_local(stream.by_ref().collect::<Vec<_>>());
    // `toolcall_end`'s call is the one in its snapshot.
    let (call, partial) = events
        .iter()
        .find_map(|event| match event {
            ModelEvent::ToolCallEnd {
                tool_call, partial, ..
            } => Some((tool_call, partial)),
            _ => None,
        })
        .expect("a toolcall_end");
    let Some(BlockShape::ToolCall(in_partial)) = partial.block_shape(1) else {
        panic!("block 1 is the call");
    };
    assert!(std::ptr::eq(in_partial, &**call));
    // `done`'s message is the turn's own, and the result's: three holders
    // (the script, the event, the result), no copy.
    let Some(ModelEvent::Done { message, .. }) = events.last() else {
        panic!("ends with done");
    };
    assert_eq!(std::sync::Arc::strong_count(message), 3);
    let handle = stream.result_handle();
    drop(stream);
    assert_eq!(run_local(handle), tool_turn());
}

#[test]
fn chunked_turns_split_text_and_arguments_and_stay_valid() {
    let model = ScriptedModel::new([
        ScriptedTurn::message(tool_turn()).chunked(NonZeroUsize::new(4).unwrap())
    ]);
    let (events, result) = play(&mut model.stream(&context("x"), StreamOptions::default()));
    assert_valid(&events);
    let text_deltas: Vec<_> = events
        .iter()
        .filter(|e| e.type_name() == "text_delta")
        .map(|e| e.delta().unwrap())
        .collect();
    assert_eq!(text_deltas.len(), 4);
    assert_eq!(text_deltas.concat(), "Let me look");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.type_name() == "toolcall_delta")
            .count(),
        4
    );
    assert_eq!(result, tool_turn());
}

#[test]
fn an_abort_between_deltas_ends_in_aborted_error_with_the_text_so_far() {
    let model = ScriptedModel::new([ScriptedTurn::message(assistant(
        [text("abcdefgh"), tool_call("c1", "read", json!({}))],
        StopReason::ToolUse,
    ))
    .chunked(NonZeroUsize::new(4).unwrap())]);
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = model.stream(&context("x"), options);
    let events = run_local(async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            if event.type_name() == "text_delta" && events.len() == 2 {
                controller.abort(); // after the second delta ("ab", "cd")
            }
            events.push(event);
        }
        events
    });
    assert_eq!(
        types(&events),
        ["start", "text_delta", "text_delta", "error"]
    );
    assert_valid(&events);
    let result = run_local(stream.result());
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(result.text(), "abcd");
}

#[test]
fn full_sequence_mode_emits_start_and_end_events_around_the_deltas() {
    let turn = assistant(
        [
            thinking("hmm"),
            text("hi"),
            tool_call("c1", "ls", json!({"dir": "."})),
        ],
        StopReason::ToolUse,
    );
    let model = ScriptedModel::new([ScriptedTurn::message(turn.clone()).full_sequence()]);
    let (events, result) = play(&mut model.stream(&context("x"), StreamOptions::default()));
    assert_eq!(
        types(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    assert_eq!(indexes(&events), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    assert_valid(&events);
    assert_eq!(result, turn);
}

#[test]
fn events_serialize_in_pi_shape() {
    let model = ScriptedModel::new([tool_turn()]);
    let (events, _) = play(&mut model.stream(&context("x"), StreamOptions::default()));
    let delta = serde_json::to_value(&events[1]).unwrap();
    assert_eq!(delta["type"], "text_delta");
    assert_eq!(delta["contentIndex"], 0);
    assert_eq!(delta["delta"], "Let me look");
    assert_eq!(delta["partial"]["content"][0]["text"], "Let me look");
    assert_eq!(delta["partial"]["stopReason"], "stop");
    let end = serde_json::to_value(&events[3]).unwrap();
    assert_eq!(end["toolCall"]["arguments"]["path"], "README.md");
    let done = serde_json::to_value(&events[4]).unwrap();
    assert_eq!(done["reason"], "toolUse");
    assert_eq!(done["message"]["stopReason"], "toolUse");
}

#[test]
fn a_producer_dropped_before_its_terminal_event_still_ends_the_stream() {
    let mut stream = ModelStream::driven(|mut producer| async move {
        let header = assistant([], StopReason::Stop);
        let _ = producer.push(ModelEvent::Start {
            partial: header.into(),
        });
        // returns without done/error: the producer is dropped
    });
    let (events, result) = play(&mut stream);
    assert_eq!(types(&events), ["start", "error"]);
    assert_valid(&events);
    assert_eq!(
        result.error_message.as_deref(),
        Some(PRODUCER_DROPPED_MESSAGE)
    );
}

#[test]
fn closing_after_the_terminal_event_is_idempotent() {
    let (mut producer, mut stream) = ModelStream::channel();
    let message = assistant([text("x")], StopReason::Stop);
    producer
        .push(ModelEvent::Start {
            partial: message.clone().into(),
        })
        .unwrap();
    producer
        .push(ModelEvent::done(DoneReason::Stop, message.clone()))
        .unwrap();
    producer.close("ignored");
    producer.close("ignored");
    let refused = producer
        .push(ModelEvent::Start {
            partial: message.clone().into(),
        })
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "EventStream is already terminal (finished)"
    );
    drop(producer);
    let (events, result) = play(&mut stream);
    assert_eq!(types(&events), ["start", "done"]);
    assert_eq!(result, message);
}

#[test]
fn abort_wakes_a_parked_waiter_once_and_a_dropped_waiter_leaves_nothing() {
    let controller = AbortController::new();
    let signal = controller.signal();
    let waker = CountingWaker::new();
    let mut aborted = signal.aborted();
    assert_eq!(waker.poll(&mut aborted), Poll::Pending);
    let other = CountingWaker::new();
    let mut dropped = signal.aborted();
    assert_eq!(other.poll(&mut dropped), Poll::Pending);
    drop(dropped);
    assert_eq!(other.live_clones(), 0);
    controller.abort();
    controller.abort();
    assert_eq!(waker.wakes(), 1);
    assert_eq!(waker.poll(&mut aborted), Poll::Ready(()));
    assert!(signal.is_aborted() && controller.is_aborted());
}

#[test]
fn model_handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<ScriptedModel>();
    send_sync::<ModelEvent>();
    send_sync::<agentstream::model::AbortSignal>();
    send::<ModelStream>();
    send::<agentstream::model::ModelResult<'static>>();
}

#[test]
fn turns_parse_from_pi_json_with_clear_errors() {
    let ok = ScriptedTurn::from_value(json!({
        "role": "assistant", "content": [{"type": "text", "text": "hi"}], "api": "a",
        "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 1,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    }))
    .unwrap();
    assert_eq!(ok.final_message().text(), "hi");
    let failure = ScriptedTurn::from_value(
        json!({"stopReason": "aborted", "errorMessage": "cut", "partialText": "ha"}),
    )
    .unwrap();
    assert_eq!(failure.final_message().text(), "ha");

    let error = |value| ScriptedTurn::from_value(value).unwrap_err().to_string();
    assert!(error(json!(3)).contains("expected a turn"));
    assert!(error(json!({"stopReason": "stop", "errorMessage": "x"})).starts_with("$.stopReason"));
    assert!(error(json!({"role": "user", "content": "hi"})).starts_with("$.role"));
    let no_id = error(json!({
        "role": "assistant", "content": [{"type": "toolCall", "name": "read", "arguments": {}}],
        "api": "a", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    }));
    assert!(
        no_id.starts_with("$.content[0]") && no_id.contains("`id`"),
        "{no_id}"
    );
    let unknown = error(json!({
        "role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
        "stopReason": "pending", "timestamp": 1,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    }));
    assert!(
        unknown.starts_with("$.stopReason") && unknown.contains("pending"),
        "{unknown}"
    );
}

#[test]
fn script_turns_default_what_the_assistant_builder_sets() {
    use agentstream::message::{assistant, text, tool_call};
    // The short form: role, content and stopReason only.
    let short = ScriptedTurn::from_value(json!({
        "role": "assistant",
        "content": [{"type": "text", "text": "Let me look."},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}],
        "stopReason": "toolUse"
    }))
    .unwrap();
    let built = assistant(
        [
            text("Let me look."),
            tool_call("c1", "read", json!({"path": "a"})),
        ],
        StopReason::ToolUse,
    );
    assert_eq!(short, ScriptedTurn::message(built.clone()));
    let message = short.final_message();
    assert_eq!(
        (
            message.api.as_str(),
            message.provider.as_str(),
            message.model.as_str()
        ),
        ("scripted", "scripted", "scripted")
    );
    assert_eq!((message.timestamp, message.usage.clone()), (0, built.usage));

    // A plain string is a text turn that stops.
    let plain = ScriptedTurn::from_value(json!("Paris.")).unwrap();
    assert_eq!(
        plain,
        ScriptedTurn::message(assistant([text("Paris.")], StopReason::Stop))
    );
    assert_eq!(plain.final_message().stop_reason, StopReason::Stop);

    // Given fields are kept; only the missing ones are defaulted.
    let partial = ScriptedTurn::from_value(json!({
        "role": "assistant", "content": [], "stopReason": "stop",
        "model": "gpt-test", "timestamp": 7
    }))
    .unwrap()
    .final_message();
    assert_eq!(
        (
            partial.model.as_str(),
            partial.timestamp,
            partial.api.as_str()
        ),
        ("gpt-test", 7, "scripted")
    );
    // A given field of the wrong type is still an error, at its path.
    let error = ScriptedTurn::from_value(json!({
        "role": "assistant", "content": [], "stopReason": "stop", "usage": "none"
    }))
    .unwrap_err()
    .to_string();
    assert!(error.starts_with("$.usage"), "{error}");
    // stopReason stays required: without it the turn is ambiguous.
    let error = ScriptedTurn::from_value(json!({"role": "assistant", "content": []}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("stopReason"), "{error}");
}

#[test]
fn a_taken_driver_stops_as_soon_as_nobody_observes_the_stream() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let pushed = Arc::new(AtomicUsize::new(0));
    let counter = pushed.clone();
    let mut stream = ModelStream::driven(move |mut producer| async move {
        let _ = producer.push(ModelEvent::Start {
            partial: assistant([], StopReason::Stop).into(),
        });
        loop {
            // A producer that never ends on its own.
            counter.fetch_add(1, Ordering::SeqCst);
            agentstream::yield_now().await;
        }
    });
    let mut driver = stream.take_driver().expect("a driven stream has a driver");
    let waker = CountingWaker::new();
    assert_eq!(waker.poll(&mut driver), Poll::Pending);
    assert_eq!(
        run_local(stream.next()).map(|e| e.type_name()),
        Some("start")
    );
    drop(stream);
    assert_eq!(
        waker.poll(&mut driver),
        Poll::Ready(()),
        "the driver ends with its consumer"
    );
    let work = pushed.load(Ordering::SeqCst);
    drop(driver);
    assert_eq!(pushed.load(Ordering::SeqCst), work);
}

#[test]
fn a_paced_turn_is_aborted_during_its_pause() {
    let model =
        ScriptedModel::new([
            ScriptedTurn::message(assistant([text("abcdef")], StopReason::Stop))
                .chunked(NonZeroUsize::new(3).unwrap()),
        ])
        // A pause that never ends by itself: only the abort can end it.
        .with_pacer(agentstream::rt::Pause::from_fn(
            futures_util::future::pending::<()>,
        ));
    let controller = AbortController::new();
    let mut stream = model.stream(
        &context("x"),
        StreamOptions::default().with_signal(controller.signal()),
    );
    let waker = CountingWaker::new();
    let mut types = Vec::new();
    loop {
        match waker.poll(&mut stream.next()) {
            Poll::Ready(Some(event)) => types.push(event.type_name()),
            Poll::Ready(None) => break,
            Poll::Pending if types.len() == 2 => {
                let wakes = waker.wakes();
                controller.abort();
                assert_eq!(
                    waker.wakes(),
                    wakes + 1,
                    "the abort wakes the paused producer"
                );
            }
            Poll::Pending => {}
        }
    }
    assert_eq!(types, ["start", "text_delta", "error"]);
    let result = run_local(stream.result());
    assert_eq!(result.text(), "ab");
    assert_eq!(result.stop_reason, StopReason::Aborted);
}

#[test]
fn a_local_stream_plays_the_same_events_as_the_send_one() {
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let context = Context::from_messages([user("hello").into()]);
    let mut local = model
        .stream(&context, StreamOptions::default())
        .into_local();
    let (events, result) = run_local(async {
        let events: Vec<ModelEvent> = local.by_ref().collect().await;
        (events, local.result().await)
    });
    assert_eq!(types(&events), ["start", "text_delta", "done"]);
    assert_eq!(result.text(), "hi");
}

#[test]
fn a_local_driver_holding_an_rc_is_self_driven() {
    use std::rc::Rc;
    let counter = Rc::new(std::cell::Cell::new(0));
    let seen = counter.clone();
    let mut stream = ModelStream::driven_local(move |mut producer| async move {
        seen.set(seen.get() + 1);
        let message = assistant([text("local")], StopReason::Stop);
        let _ = producer.push(ModelEvent::done(DoneReason::Stop, message));
    });
    assert_eq!(counter.get(), 0, "nothing runs before the first poll");
    let (events, result) = run_local(async {
        let events: Vec<ModelEvent> = stream.by_ref().collect().await;
        (events, stream.result().await)
    });
    assert_eq!(types(&events), ["done"]);
    assert_eq!(result.text(), "local");
    assert_eq!(counter.get(), 1);
}
