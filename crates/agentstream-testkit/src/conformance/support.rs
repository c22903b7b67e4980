//! Scripted turns, pacers and trace helpers the bodies share (and the
//! workspace's other tests reuse).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::num::NonZeroUsize;
use core::sync::atomic::{AtomicUsize, Ordering};

use agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
};
use agentstream::model::{validate_events, ModelEvent, ModelStream, ScriptedTurn};
use agentstream::rt::Pause;
use futures_util::StreamExt;
use serde_json::json;

/// A one-message context.
pub fn context(text: &str) -> Context {
    Context::from_messages([user(text).into()])
}

/// The seed tool-call turn: a text block, then a `read` tool call.
pub fn tool_turn() -> AssistantMessage {
    assistant(
        [
            text("Let me look"),
            tool_call("c1", "read", json!({"path": "README.md"})),
        ],
        StopReason::ToolUse,
    )
}

/// An eight-character text turn in four deltas ("ab", "cd", "ef", "gh").
pub fn slow_turn() -> ScriptedTurn {
    ScriptedTurn::message(assistant([text("abcdefgh")], StopReason::Stop))
        .chunked(NonZeroUsize::new(4).expect("4 is not zero"))
}

/// A pacer whose first `free` pauses end at once and later ones never end
/// by themselves: only an abort (or a timeout) ends them. It makes
/// mid-stream aborts deterministic on every executor, spawned producers
/// included.
pub fn stalling_pacer(free: usize) -> Pause {
    let calls = Arc::new(AtomicUsize::new(0));
    Pause::from_fn(move || {
        let call = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if call >= free {
                futures_util::future::pending::<()>().await;
            }
        }
    })
}

/// Panics unless the protocol checker accepts `events`.
pub fn assert_valid(events: &[ModelEvent]) {
    let diagnostics = validate_events(events);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

/// Reads every event, checks the trace, then awaits the result.
pub async fn play(stream: &mut ModelStream) -> (Vec<ModelEvent>, AssistantMessage) {
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert_valid(&events);
    (events, stream.result().await)
}

/// The event type names of a trace.
pub fn types(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(ModelEvent::type_name).collect()
}

/// The content indexes of a trace.
pub fn indexes(events: &[ModelEvent]) -> Vec<usize> {
    events
        .iter()
        .filter_map(ModelEvent::content_index)
        .collect()
}
