//! What the hostile-input tests share: payloads run through a projector
//! and checked by the protocol checker, and the terminal message.

#![allow(dead_code)]

use agentstream::message::AssistantMessage;
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::sse::{SseEvent, SseProjector};

/// `events`, after asserting that they pass the protocol checker.
pub fn checked(events: Vec<ModelEvent>) -> Vec<ModelEvent> {
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    events
}

/// The events of a `P` for `model` from `provider` fed `payloads` (each
/// one event's data) and then the end of the body, checked.
pub fn project<P: SseProjector>(model: &str, provider: &str, payloads: &[&str]) -> Vec<ModelEvent> {
    let mut projector = P::for_model(model.into(), provider.into());
    let mut events = Vec::new();
    for payload in payloads {
        projector.push_event(&SseEvent::message(*payload), &mut events);
    }
    projector.finish(&mut events);
    checked(events)
}

/// The message of the last event, which must be terminal.
pub fn terminal(events: &[ModelEvent]) -> &AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("a terminal event")
}

/// The terminal message of `events`, after asserting that it stopped for
/// tool use and that no event holds a lone surrogate's marker (every one
/// became U+FFFD).
pub fn tool_use_without_markers(events: &[ModelEvent]) -> &AssistantMessage {
    let message = terminal(events);
    assert_eq!(
        message.stop_reason,
        agentstream::message::StopReason::ToolUse,
        "{:?}",
        message.error_message
    );
    assert!(!has_private_use(&format!("{events:?}")), "{events:#?}");
    message
}

/// Asserts what the tool call every lone-surrogate test sends comes out
/// as: named `read\udfff`, with arguments `path` holding `a\ud800b`,
/// `pair` a surrogate pair split across two fragments and `cut` a lone
/// escape cut between two fragments.
pub fn assert_replaced_call(call: &agentstream::message::ToolCall) {
    assert_eq!(call.name, "read\u{fffd}");
    assert_eq!(call.arguments["path"], "a\u{fffd}b");
    assert_eq!(call.arguments["pair"], "😀");
    assert_eq!(call.arguments["cut"], "\u{fffd}");
}

/// Whether `text` holds a character of the Supplementary Private Use
/// Areas (where lone surrogates are marked while a payload is parsed).
pub fn has_private_use(text: &str) -> bool {
    text.chars().any(|c| u32::from(c) >= 0xF_0000)
}
