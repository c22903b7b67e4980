//! What the server halves' tests share, and serve's HTTP round-trip
//! tests too (they include this file by its path): generators of Pi
//! values, and a body read by a projector.

// Each test binary uses its part.
#![allow(dead_code)]

use agentstream::message::{
    AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, Usage,
};
use agentstream::model::ModelEvent;
use agentstream_wire::sse::{SseDecoder, SseProjector};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// A short text with the characters JSON and SSE must take care of.
pub fn some_text() -> impl Strategy<Value = String> {
    // Characters JSON and SSE must escape or split with care: quotes,
    // backslashes, line breaks, multi-byte and astral characters.
    "[a-zA-Z0-9 .,:!?'\"\\\\/{}\\[\\]<>\n\t\r_é日本😀-]{1,30}"
}

/// A JSON value, a few levels deep.
pub fn json_value() -> impl Strategy<Value = Value> {
    // Integers only: serde_json's float parsing is not exact by default,
    // which would test serde_json rather than the protocols.
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z0-9 \"\\\\é😀]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A tool call's arguments.
pub fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-z_]{1,8}", json_value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

/// Token counts, with or without a total.
pub fn usage() -> impl Strategy<Value = Usage> {
    (
        0..1_000_000u64,
        0..1_000_000u64,
        0..1_000_000u64,
        0..1_000_000u64,
        any::<bool>(),
    )
        .prop_map(|(input, output, cache_read, cache_write, total)| Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: total.then(|| input + output + cache_read + cache_write),
            ..Usage::default()
        })
}

/// How a generated message ends: `length` can end any message; otherwise
/// the reason follows the content (`toolUse` when it calls tools).
pub fn stop_reason(blocks: &[ContentBlock], length: bool) -> StopReason {
    let calls = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolCall(_)));
    match (length, calls) {
        (true, _) => StopReason::Length,
        (false, true) => StopReason::ToolUse,
        (false, false) => StopReason::Stop,
    }
}

/// A text block, with its signature.
pub fn text_block(text: String, signature: Option<String>) -> ContentBlock {
    ContentBlock::Text(TextContent {
        text,
        text_signature: signature,
        ..TextContent::default()
    })
}

/// A thinking block, with its signature.
pub fn thinking_block(thinking: String, signature: Option<String>) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking,
        thinking_signature: signature,
        ..ThinkingContent::default()
    })
}

/// `body` (SSE) read by the wire crate's projector `P`: the terminal
/// message, after checking the events are a valid sequence.
pub fn read_with<P: SseProjector>(model: &str, provider: &str, body: &[u8]) -> AssistantMessage {
    let mut projector = P::for_model(model.into(), provider.into());
    let mut decoder = SseDecoder::new();
    let mut events = decoder.feed_to_vec(body).unwrap();
    events.extend(decoder.finish_to_vec());
    let mut out = Vec::new();
    for event in &events {
        projector.push_event(event, &mut out);
    }
    projector.finish(&mut out);
    assert!(
        agentstream::model::validate_events(&out).is_empty(),
        "{out:?}"
    );
    out.last()
        .and_then(ModelEvent::terminal_message)
        .unwrap_or_else(|| panic!("no terminal event in {out:?}"))
        .clone()
}
