//! Anthropic Messages, the server's writing of an answer: model events to
//! the SSE events the provider sends (what the
//! client's projector reads), and the one JSON answer of a call that did
//! not stream.
//!
//! # What is written
//!
//! As the recordings of api.anthropic.com show: `message_start` (the
//! message with empty content and the input usage), optionally one `ping`,
//! then per block `content_block_start`, its deltas (`text_delta`,
//! `thinking_delta` then a `signature_delta` when the block has a
//! signature, `input_json_delta`) and `content_block_stop`, then
//! `message_delta` with the `stop_reason` (`end_turn`, `max_tokens`,
//! `tool_use`) and the cumulative usage (`input_tokens`, `output_tokens`,
//! `cache_read_input_tokens`, `cache_creation_input_tokens`), and
//! `message_stop`. A model `error` becomes an `error` event and the body
//! ends without `message_stop`, as Anthropic does after HTTP 200.
//!
//! The events are written as JSON text with the keys in the order
//! serde_json's maps write them (sorted), the same bytes a JSON tree
//! gives (tested against the tree form).

use crate::server::prelude::*;
use agentstream::message::{AssistantMessage, ContentBlock, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent};
use serde_json::{json, Value};

use crate::server::error::{Api, ApiError};
use crate::server::events::{self as frames, Events};
use crate::server::steps::{block_step, Kind as WireKind, OneBlockAtATime, Wire};

/// Anthropic's `usage` object for a Pi usage.
pub fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    })
}

/// [`usage_json`] as JSON text, with `output` as its output tokens.
fn write_usage(usage: &Usage, output: u64, out: &mut Events) {
    out.raw(r#"{"cache_creation_input_tokens":"#)
        .number(usage.cache_write)
        .raw(r#","cache_read_input_tokens":"#)
        .number(usage.cache_read)
        .raw(r#","input_tokens":"#)
        .number(usage.input)
        .raw(r#","output_tokens":"#)
        .number(output)
        .raw("}");
}

fn stop_reason(reason: DoneReason) -> &'static str {
    match reason {
        DoneReason::Length => "max_tokens",
        DoneReason::ToolUse => "tool_use",
        _ => "end_turn",
    }
}

/// A Pi block as an Anthropic content block (`None` for images and
/// unknown blocks, which an assistant turn cannot carry).
fn content_block(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text(t) => json!({"type": "text", "text": t.text}),
        ContentBlock::Thinking(t) if t.redacted == Some(true) => json!({
            "type": "redacted_thinking",
            "data": t.thinking_signature.clone().unwrap_or_default(),
        }),
        ContentBlock::Thinking(t) => json!({
            "type": "thinking",
            "thinking": t.thinking,
            "signature": t.thinking_signature.clone().unwrap_or_default(),
        }),
        ContentBlock::ToolCall(c) => json!({
            "type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments,
        }),
        _ => return None,
    })
}

/// The non-streaming answer: one `message` object.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_wire::anthropic::encode::message;
///
/// let reply = assistant([text("hi")], StopReason::Stop);
/// let body = message("msg_1", "claude", DoneReason::Stop, &reply);
/// assert_eq!(body["content"][0]["text"], "hi");
/// assert_eq!(body["stop_reason"], "end_turn");
/// ```
pub fn message(id: &str, model: &str, reason: DoneReason, message: &AssistantMessage) -> Value {
    let content: Vec<Value> = message.content.iter().filter_map(content_block).collect();
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(reason),
        "stop_sequence": null,
        "usage": usage_json(&message.usage),
    })
}

/// The kind of the block that is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Thinking,
    Redacted,
    ToolUse,
}

#[derive(Debug)]
struct Open {
    /// The Pi content index.
    pi: usize,
    /// Anthropic's block index.
    index: usize,
    kind: Kind,
    signature: Option<String>,
    /// Whether an argument fragment was sent (tool use).
    fragments: bool,
}

/// Turns model events into Messages SSE events, one call at a time.
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream_wire::anthropic::encode::StreamEncoder;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let stream = model.stream(&Context::from_messages([user("hello").into()]), StreamOptions::default());
/// let events: Vec<_> = futures_executor::block_on(stream.collect());
/// let mut encoder = StreamEncoder::new("msg_1", "claude");
/// let mut sse = Vec::new();
/// for event in &events {
///     encoder.encode(event, &mut sse);
/// }
/// let names: Vec<_> = sse.iter().map(|e| e.lines().next().unwrap()).collect();
/// assert_eq!(names, ["event: message_start", "event: content_block_start",
///     "event: content_block_delta", "event: content_block_stop",
///     "event: message_delta", "event: message_stop"]);
/// ```
#[derive(Debug)]
pub struct StreamEncoder {
    id: String,
    model: String,
    chunks: usize,
    ping: bool,
    pinged: bool,
    open: Option<Open>,
    next_index: usize,
}

impl StreamEncoder {
    /// An encoder for the message `id` of `model`.
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            model: model.into(),
            chunks: 1,
            ping: false,
            pinged: false,
            open: None,
            next_index: 0,
        }
    }

    /// Splits every delta into up to `chunks` deltas (at least 1).
    #[must_use]
    pub fn with_chunks(mut self, chunks: usize) -> Self {
        self.chunks = chunks.max(1);
        self
    }

    /// Sends one `ping` after the first `content_block_start`, as the
    /// recorded streams show.
    #[must_use]
    pub fn with_ping(mut self, ping: bool) -> Self {
        self.ping = ping;
        self
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// `event: …\ndata: …\n\n`).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.encode_into(Wire::from(event), events));
    }

    /// [`encode`](Self::encode) into one buffer, from a step.
    pub(crate) fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        if block_step(self, step, out) {
            return;
        }
        match step {
            Wire::Start(blocks) => {
                out.start(Some("message_start"))
                    .raw(r#"{"message":{"content":[],"id":"#)
                    .string(&self.id)
                    .raw(r#","model":"#)
                    .string(&self.model)
                    .raw(r#","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":"#);
                write_usage(blocks.usage(), 0, out);
                out.raw(r#"},"type":"message_start"}"#).end();
            }
            Wire::Done { reason, message } => {
                self.close(out);
                out.start(Some("message_delta"))
                    .raw(r#"{"delta":{"stop_reason":"#)
                    .string(stop_reason(reason))
                    .raw(r#","stop_sequence":null},"type":"message_delta","usage":"#);
                write_usage(&message.usage, message.usage.output, out);
                out.raw("}").end();
                out.start(Some("message_stop"))
                    .raw(r#"{"type":"message_stop"}"#)
                    .end();
            }
            Wire::Error(error) => {
                self.error_into(&ApiError::model_failure(error), out);
            }
            // A block's steps: `block_step`'s.
            _ => {}
        }
    }

    /// Appends a mid-stream `error` event.
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.error_into(error, events));
    }

    /// [`error`](Self::error) into one buffer.
    pub(crate) fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        out.json(Some("error"), &error.body(Api::Anthropic));
    }
}

/// A `tool_use` content block with empty input.
fn write_tool_use(id: &str, name: &str, out: &mut Events) {
    out.raw(r#"{"id":"#)
        .string(id)
        .raw(r#","input":{},"name":"#)
        .string(name)
        .raw(r#","type":"tool_use"}"#);
}

/// Starts a `content_block_delta` whose delta begins with `field` (JSON
/// text up to the first value, which follows).
fn start_delta<'a>(out: &'a mut Events, field: &str) -> &'a mut Events {
    out.start(Some("content_block_delta"))
        .raw(r#"{"delta":"#)
        .raw(field)
}

/// Ends a delta started by `start_delta`: its `type` is `kind`.
fn end_delta(out: &mut Events, kind: &str, index: usize) {
    out.raw(r#","type":""#)
        .raw(kind)
        .raw(r#""},"index":"#)
        .number(index as u64)
        .raw(r#","type":"content_block_delta"}"#)
        .end();
}

impl OneBlockAtATime for StreamEncoder {
    type Kind = Kind;

    fn kind_of(kind: WireKind) -> Kind {
        match kind {
            WireKind::Text => Kind::Text,
            WireKind::Thinking => Kind::Thinking,
            WireKind::ToolCall => Kind::ToolUse,
        }
    }

    fn open_index(&self) -> Option<usize> {
        self.open.as_ref().map(|open| open.pi)
    }

    fn close(&mut self, out: &mut Events) {
        let Some(open) = self.open.take() else {
            return;
        };
        if open.kind == Kind::ToolUse && !open.fragments {
            start_delta(out, r#"{"partial_json":"#).string("");
            end_delta(out, "input_json_delta", open.index);
        }
        if let (Kind::Thinking, Some(signature)) = (open.kind, &open.signature) {
            start_delta(out, r#"{"signature":"#).string(signature);
            end_delta(out, "signature_delta", open.index);
        }
        out.start(Some("content_block_stop"))
            .raw(r#"{"index":"#)
            .number(open.index as u64)
            .raw(r#","type":"content_block_stop"}"#)
            .end();
    }

    /// Makes the block of Pi index `pi` the open one; `block` (its
    /// shape, borrowed) is looked up only when it opens.
    fn open<'a>(
        &mut self,
        pi: usize,
        block: impl FnOnce() -> Option<BlockShape<'a>>,
        fallback: Kind,
        out: &mut Events,
    ) {
        if self.open.as_ref().is_some_and(|open| open.pi == pi) {
            return;
        }
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        out.start(Some("content_block_start"))
            .raw(r#"{"content_block":"#);
        let (kind, signature) = match block() {
            Some(BlockShape::Thinking(t)) if t.redacted == Some(true) => {
                let data = t.thinking_signature.as_deref().unwrap_or_default();
                out.raw(r#"{"data":"#)
                    .string(data)
                    .raw(r#","type":"redacted_thinking"}"#);
                (Kind::Redacted, None)
            }
            Some(BlockShape::Thinking(t)) => {
                out.raw(r#"{"signature":"","thinking":"","type":"thinking"}"#);
                (Kind::Thinking, t.thinking_signature.clone())
            }
            Some(BlockShape::ToolCall(c)) => {
                write_tool_use(&c.id, &c.name, out);
                (Kind::ToolUse, None)
            }
            _ if fallback == Kind::ToolUse => {
                write_tool_use("", "", out);
                (Kind::ToolUse, None)
            }
            _ if fallback == Kind::Thinking => {
                out.raw(r#"{"signature":"","thinking":"","type":"thinking"}"#);
                (Kind::Thinking, None)
            }
            _ => {
                out.raw(r#"{"text":"","type":"text"}"#);
                (Kind::Text, None)
            }
        };
        out.raw(r#","index":"#)
            .number(index as u64)
            .raw(r#","type":"content_block_start"}"#)
            .end();
        if self.ping && !self.pinged {
            self.pinged = true;
            out.start(Some("ping")).raw(r#"{"type":"ping"}"#).end();
        }
        self.open = Some(Open {
            pi,
            index,
            kind,
            signature,
            fragments: false,
        });
    }

    fn deltas(&mut self, text: &str, out: &mut Events) {
        let Some(open) = &mut self.open else {
            return;
        };
        let (kind, field) = match open.kind {
            Kind::Text => ("text_delta", r#"{"text":"#),
            Kind::Thinking => ("thinking_delta", r#"{"thinking":"#),
            Kind::ToolUse => ("input_json_delta", r#"{"partial_json":"#),
            Kind::Redacted => return,
        };
        open.fragments = true;
        let index = open.index;
        for piece in frames::split(text, self.chunks) {
            start_delta(out, field).string(piece);
            end_delta(out, kind, index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::{assistant, text, thinking, tool_call, StopReason};
    use agentstream::model::PartialBuilder;

    fn delta_event(index: usize, delta: Value) -> String {
        frames::wire_event(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    }

    #[test]
    fn events_written_as_text_are_the_json_trees_values() {
        let mut encoder = StreamEncoder::new("msg \"1\"", "claude-ü").with_ping(true);
        let mut message = assistant([], StopReason::Stop);
        message.usage.input = 11;
        message.usage.cache_read = 3;
        message.usage.cache_write = 2;
        let partial = PartialBuilder::new(message.clone()).snapshot();
        let mut out = Events::default();
        encoder.encode_into(Wire::from(&ModelEvent::Start { partial }), &mut out);
        let mut usage = usage_json(&message.usage);
        usage["output_tokens"] = 0.into();
        let mut expected = vec![frames::wire_event(
            Some("message_start"),
            &json!({"type": "message_start", "message": {
                "id": "msg \"1\"", "type": "message", "role": "assistant",
                "model": "claude-ü", "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": usage,
            }}),
        )];
        let mut signed = thinking("hm");
        if let ContentBlock::Thinking(t) = &mut signed {
            t.thinking_signature = Some("sig\n".into());
        }
        let mut redacted = signed.clone();
        if let ContentBlock::Thinking(t) = &mut redacted {
            t.redacted = Some(true);
        }
        let call = tool_call("call_1", "weather", json!({"city": "Paris"}));
        let start = |block: Value, index: usize| {
            frames::wire_event(
                Some("content_block_start"),
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            )
        };
        let stop = |index: usize| {
            frames::wire_event(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": index}),
            )
        };
        // A text block, with the ping after the first start.
        let empty = text("");
        encoder.open(0, || Some((&empty).into()), Kind::Text, &mut out);
        encoder.deltas("a \"b\"\n é 😀", &mut out);
        expected.push(start(json!({"type": "text", "text": ""}), 0));
        expected.push(frames::wire_event(Some("ping"), &json!({"type": "ping"})));
        expected.push(delta_event(
            0,
            json!({"type": "text_delta", "text": "a \"b\"\n é 😀"}),
        ));
        // A signed thinking block: its signature closes it.
        encoder.open(1, || Some((&signed).into()), Kind::Thinking, &mut out);
        encoder.deltas("hm", &mut out);
        expected.push(stop(0));
        expected.push(start(
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            1,
        ));
        expected.push(delta_event(
            1,
            json!({"type": "thinking_delta", "thinking": "hm"}),
        ));
        encoder.open(2, || Some((&redacted).into()), Kind::Thinking, &mut out);
        expected.push(delta_event(
            1,
            json!({"type": "signature_delta", "signature": "sig\n"}),
        ));
        expected.push(stop(1));
        expected.push(start(
            json!({"type": "redacted_thinking", "data": "sig\n"}),
            2,
        ));
        // A tool call without fragments gets an empty one.
        encoder.open(3, || Some((&call).into()), Kind::ToolUse, &mut out);
        expected.push(stop(2));
        expected.push(start(
            json!({"type": "tool_use", "id": "call_1", "name": "weather", "input": {}}),
            3,
        ));
        let mut done = assistant([], StopReason::ToolUse);
        done.usage.output = 7;
        encoder.encode_into(
            Wire::Done {
                reason: DoneReason::ToolUse,
                message: &done,
            },
            &mut out,
        );
        expected.push(delta_event(
            3,
            json!({"type": "input_json_delta", "partial_json": ""}),
        ));
        expected.push(stop(3));
        expected.push(frames::wire_event(
            Some("message_delta"),
            &json!({"type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                    "usage": usage_json(&done.usage)}),
        ));
        expected.push(frames::wire_event(
            Some("message_stop"),
            &json!({"type": "message_stop"}),
        ));
        let written = out.into_strings();
        assert_eq!(written.len(), expected.len(), "{written:?}");
        for (written, expected) in written.iter().zip(&expected) {
            crate::server::events::assert_same_frames(written, expected);
        }
    }
}
