//! The protocol checker rejects each kind of malformed sequence.
#![cfg(not(loom))]

use agentstream::message::{assistant, text, tool_call, StopReason, TextContent, ToolCall};
use agentstream::model::{validate_events, DoneReason, ErrorReason, ModelEvent, PartialBuilder};
use serde_json::json;

fn codes(events: &[ModelEvent]) -> Vec<&'static str> {
    validate_events(events).iter().map(|d| d.code).collect()
}

fn start() -> ModelEvent {
    ModelEvent::Start {
        partial: assistant([], StopReason::Stop).into(),
    }
}

fn done(message: agentstream::message::AssistantMessage) -> ModelEvent {
    ModelEvent::done(DoneReason::Stop, message)
}

/// A text_delta event whose partial holds `so_far` in block `index`.
fn text_delta(index: usize, delta: &str, so_far: &str) -> ModelEvent {
    let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
    for _ in 0..index {
        builder.push_complete(text("earlier"));
    }
    builder.start_text(TextContent::default());
    builder.append(index, so_far.into());
    ModelEvent::TextDelta {
        content_index: index,
        delta: delta.into(),
        partial: builder.snapshot(),
    }
}

#[test]
fn structural_errors() {
    assert_eq!(codes(&[]), ["empty-stream"]);
    let message = assistant([text("a")], StopReason::Stop);
    assert_eq!(
        codes(&[text_delta(0, "a", "a"), done(message.clone())]),
        ["missing-start"]
    );
    assert_eq!(
        codes(&[start(), text_delta(0, "a", "a")]),
        ["missing-terminal"]
    );
    assert_eq!(
        codes(&[
            start(),
            text_delta(0, "a", "a"),
            done(message.clone()),
            done(message.clone())
        ]),
        ["event-after-terminal"]
    );
    assert_eq!(
        codes(&[start(), start(), text_delta(0, "a", "a"), done(message)]),
        ["misplaced-start"]
    );
}

#[test]
fn block_errors() {
    let two = assistant([text("x"), text("y")], StopReason::Stop);
    assert_eq!(
        codes(&[
            start(),
            text_delta(1, "y", "y"),
            text_delta(0, "x", "x"),
            done(two)
        ]),
        ["content-index-decreased"]
    );
    let message = assistant([text("ab")], StopReason::Stop);
    assert_eq!(
        codes(&[
            start(),
            text_delta(0, "a", "a"),
            text_delta(0, "b", "a"),
            done(message.clone())
        ]),
        ["partial-mismatch"]
    );
    assert_eq!(
        codes(&[start(), text_delta(0, "a", "a"), done(message)]),
        ["delta-mismatch"]
    );
}

#[test]
fn tool_call_and_terminal_errors() {
    let call = || {
        let mut builder = PartialBuilder::new(assistant([], StopReason::ToolUse));
        builder.start_tool_call(ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            ..Default::default()
        });
        builder
    };
    let mut builder = call();
    builder.append(0, "{\"a\":1}".into());
    let delta = ModelEvent::ToolCallDelta {
        content_index: 0,
        delta: "{\"a\":1}".into(),
        partial: builder.snapshot(),
    };
    let final_message = assistant(
        [tool_call("c1", "ls", json!({"a": 2}))],
        StopReason::ToolUse,
    );
    let ModelEvent::ToolCallDelta { .. } = &delta else {
        unreachable!()
    };
    let end = ModelEvent::ToolCallEnd {
        content_index: 0,
        tool_call: match &final_message.content[0] {
            agentstream::message::ContentBlock::ToolCall(call) => std::sync::Arc::new(call.clone()),
            _ => unreachable!(),
        },
        partial: final_message.clone().into(),
    };
    let finished = ModelEvent::done(DoneReason::ToolUse, final_message);
    assert_eq!(
        codes(&[start(), delta.clone(), end, finished]),
        ["tool-arguments-mismatch", "tool-arguments-mismatch"]
    );

    let mut builder = call();
    builder.append(0, "{\"a\":".into());
    let broken = ModelEvent::ToolCallDelta {
        content_index: 0,
        delta: "{\"a\":".into(),
        partial: builder.snapshot(),
    };
    let message = assistant([tool_call("c1", "ls", json!({}))], StopReason::ToolUse);
    assert_eq!(
        codes(&[
            start(),
            broken,
            ModelEvent::done(DoneReason::ToolUse, message)
        ]),
        ["invalid-tool-arguments"]
    );

    let stop = assistant([], StopReason::Stop);
    assert_eq!(
        codes(&[start(), ModelEvent::done(DoneReason::Length, stop.clone())]),
        ["terminal-reason-mismatch"]
    );
    let errored = assistant([], StopReason::Error);
    assert_eq!(
        codes(&[ModelEvent::error(ErrorReason::Error, errored)]),
        ["missing-error-message"]
    );
}

#[test]
fn a_total_below_its_parts_is_implausible_usage() {
    let mut message = assistant([], StopReason::Stop);
    message.usage.input = 10;
    message.usage.output = 5;
    message.usage.total_tokens = Some(14);
    let events = [start(), done(message.clone())];
    assert_eq!(codes(&events), ["implausible-usage"]);
    message.usage.total_tokens = Some(15);
    assert!(codes(&[start(), done(message)]).is_empty());
}
