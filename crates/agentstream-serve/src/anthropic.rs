//! Anthropic Messages, sans IO: a request body to a Pi
//! [`Context`](agentstream::message::Context), and model events to the SSE
//! events (or the one JSON message) Anthropic sends.
//!
//! # Requests
//!
//! `messages` is required (an array); `model`, `max_tokens` and the rest
//! are accepted but not checked. `system` (a string or text blocks) is the
//! system prompt. `user` content is a string or blocks: `text`, `image`
//! (base64 sources), and `tool_result` blocks, which become Pi tool-result
//! messages (named after the call they answer) placed before the rest of
//! that user turn. `assistant` blocks `text`, `thinking` (with its
//! `signature`), `redacted_thinking` (its `data` kept as the signature of a
//! thinking block marked `redacted`) and `tool_use` become Pi blocks.
//! `tools` become Pi tools (`input_schema` as the parameters). Decoded
//! messages have timestamp 0 and zero usage.
//!
//! # Streams
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

use agentstream::message::{
    AssistantMessage, ContentBlock, ThinkingContent, ToolCall, Usage, UserContent,
};
use agentstream::model::{DoneReason, ModelEvent};
use serde_json::{json, Value};

use crate::error::{Api, ApiError};
use crate::frames::{self, sse, sse_text};
use crate::options;
use crate::request::{self, image_block, joined_text, str_at, text_block, DecodedRequest, History};

const PROVIDER: &str = "anthropic";

/// Decodes a Messages request body.
///
/// ```
/// use agentstream_serve::anthropic::decode_request;
/// use serde_json::json;
///
/// let body = json!({"model": "claude", "max_tokens": 100, "system": "Be brief.",
///                   "messages": [{"role": "user", "content": "Hi"}]});
/// let request = decode_request(&body).unwrap();
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert!(!request.stream);
///
/// let error = decode_request(&json!({"model": "claude"})).unwrap_err();
/// assert_eq!(error.message, "messages: Field required");
/// ```
///
/// # Errors
/// The 400 [`ApiError`] Anthropic answers with (`invalid_request_error`).
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ApiError> {
    decode(request::common(body, messages_error)?)
}

/// [`decode_request`] from the body's bytes, with memory proportional to
/// the body: the messages are parsed one at a time.
///
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    decode(request::common_bytes(body, messages_error)?)
}

fn messages_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(_) => ApiError::new(400, "messages: Input should be a valid list"),
        None => ApiError::new(400, "messages: Field required"),
    }
}

fn decode(request: request::Common<'_>) -> Result<DecodedRequest, ApiError> {
    let mut history = History::new(Api::Anthropic, PROVIDER, &request.model);
    request.messages.each(|i, message| {
        let blocks = blocks_of(message.get("content").unwrap_or(&Value::Null));
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let mut rest = Vec::new();
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_result") => history.tool_result(
                            str_at(&block, &["tool_use_id"]),
                            blocks_of(block.get("content").unwrap_or(&Value::Null))
                                .iter()
                                .filter_map(user_block)
                                .collect(),
                            block.get("is_error").and_then(Value::as_bool) == Some(true),
                        ),
                        _ => rest.extend(user_block(&block)),
                    }
                }
                match message.get("content") {
                    Some(Value::String(text)) => history.user(UserContent::Text(text.clone())),
                    _ if rest.is_empty() => {}
                    _ => history.user(UserContent::Blocks(rest)),
                }
            }
            Some("assistant") => {
                history.assistant(blocks.iter().filter_map(assistant_block).collect());
            }
            _ => {
                return Err(ApiError::new(
                    400,
                    format!("messages.{i}.role: Input should be 'user' or 'assistant'"),
                ))
            }
        }
        Ok(())
    })?;
    let system = Some(joined_text(
        request.object.get("system").unwrap_or(&Value::Null),
        "\n\n",
    ))
    .filter(|system| !system.is_empty());
    let tools = request::tools(
        &request.object,
        None,
        "input_schema",
        &json!({"type": "object"}),
    );
    let options = options::anthropic(&request.object);
    Ok(history.finish(request, system, tools, true, options))
}

/// A content as blocks: a string is one text block.
fn blocks_of(content: &Value) -> Vec<Value> {
    match content {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn user_block(block: &Value) -> Option<ContentBlock> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => Some(text_block(str_at(block, &["text"]))),
        "image" => {
            let source = block.get("source")?;
            Some(image_block(
                str_at(source, &["data"]),
                str_at(source, &["media_type"]),
            ))
        }
        _ => None,
    }
}

fn assistant_block(block: &Value) -> Option<ContentBlock> {
    Some(match block.get("type").and_then(Value::as_str)? {
        "text" => text_block(str_at(block, &["text"])),
        "thinking" => ContentBlock::Thinking(ThinkingContent {
            thinking: str_at(block, &["thinking"]),
            thinking_signature: block
                .get("signature")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(Into::into),
            ..ThinkingContent::default()
        }),
        "redacted_thinking" => ContentBlock::Thinking(ThinkingContent {
            thinking_signature: Some(str_at(block, &["data"])),
            redacted: Some(true),
            ..ThinkingContent::default()
        }),
        "tool_use" => ContentBlock::ToolCall(ToolCall {
            id: str_at(block, &["id"]),
            name: str_at(block, &["name"]),
            arguments: block
                .get("input")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            ..ToolCall::default()
        }),
        _ => return None,
    })
}

/// Anthropic's `usage` object for a Pi usage.
pub fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    })
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
/// use agentstream_serve::anthropic::message;
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
enum Kind {
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
/// use agentstream_serve::anthropic::StreamEncoder;
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

    fn close(&mut self, out: &mut Vec<String>) {
        let Some(open) = self.open.take() else {
            return;
        };
        if open.kind == Kind::ToolUse && !open.fragments {
            out.push(delta_event(
                open.index,
                json!({"type": "input_json_delta", "partial_json": ""}),
            ));
        }
        if let (Kind::Thinking, Some(signature)) = (open.kind, &open.signature) {
            out.push(delta_event(
                open.index,
                json!({"type": "signature_delta", "signature": signature}),
            ));
        }
        out.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": open.index}),
        ));
    }

    /// Makes the block of Pi index `pi` the open one.
    fn open(
        &mut self,
        pi: usize,
        block: Option<ContentBlock>,
        fallback: Kind,
        out: &mut Vec<String>,
    ) {
        if self.open.as_ref().is_some_and(|open| open.pi == pi) {
            return;
        }
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        let (kind, start, signature) = match block {
            Some(ContentBlock::Thinking(t)) if t.redacted == Some(true) => (
                Kind::Redacted,
                json!({"type": "redacted_thinking",
                       "data": t.thinking_signature.clone().unwrap_or_default()}),
                None,
            ),
            Some(ContentBlock::Thinking(t)) => (
                Kind::Thinking,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                t.thinking_signature,
            ),
            Some(ContentBlock::ToolCall(c)) => (
                Kind::ToolUse,
                json!({"type": "tool_use", "id": c.id, "name": c.name, "input": {}}),
                None,
            ),
            _ if fallback == Kind::ToolUse => (
                Kind::ToolUse,
                json!({"type": "tool_use", "id": "", "name": "", "input": {}}),
                None,
            ),
            _ if fallback == Kind::Thinking => (
                Kind::Thinking,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                None,
            ),
            _ => (Kind::Text, json!({"type": "text", "text": ""}), None),
        };
        out.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if self.ping && !self.pinged {
            self.pinged = true;
            out.push(sse(Some("ping"), &json!({"type": "ping"})));
        }
        self.open = Some(Open {
            pi,
            index,
            kind,
            signature,
            fragments: false,
        });
    }

    fn deltas(&mut self, text: &str, out: &mut Vec<String>) {
        let Some(open) = &mut self.open else {
            return;
        };
        let (kind, field) = match open.kind {
            Kind::Text => ("text_delta", "text"),
            Kind::Thinking => ("thinking_delta", "thinking"),
            Kind::ToolUse => ("input_json_delta", "partial_json"),
            Kind::Redacted => return,
        };
        open.fragments = true;
        let index = open.index;
        for piece in frames::split(text, self.chunks) {
            // Sorted keys, as serde_json's maps write them.
            let delta = format!(
                r#"{{"{field}":{},"type":"{kind}"}}"#,
                frames::json_str(piece)
            );
            out.push(delta_text(index, &delta));
        }
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// `event: …\ndata: …\n\n`).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        let kind = match event {
            ModelEvent::TextStart { .. }
            | ModelEvent::TextDelta { .. }
            | ModelEvent::TextEnd { .. } => Kind::Text,
            ModelEvent::ThinkingStart { .. }
            | ModelEvent::ThinkingDelta { .. }
            | ModelEvent::ThinkingEnd { .. } => Kind::Thinking,
            _ => Kind::ToolUse,
        };
        match event {
            ModelEvent::Start { partial } => {
                let header = partial.to_message();
                let mut usage = usage_json(&header.usage);
                usage["output_tokens"] = 0.into();
                out.push(sse(
                    Some("message_start"),
                    &json!({"type": "message_start", "message": {
                        "id": self.id, "type": "message", "role": "assistant",
                        "model": self.model, "content": [], "stop_reason": null,
                        "stop_sequence": null, "usage": usage,
                    }}),
                ));
            }
            ModelEvent::TextStart {
                content_index,
                partial,
            }
            | ModelEvent::ThinkingStart {
                content_index,
                partial,
            }
            | ModelEvent::ToolCallStart {
                content_index,
                partial,
            } => self.open(
                *content_index,
                partial.content_block(*content_index),
                kind,
                out,
            ),
            ModelEvent::TextDelta {
                content_index,
                delta,
                partial,
            }
            | ModelEvent::ThinkingDelta {
                content_index,
                delta,
                partial,
            }
            | ModelEvent::ToolCallDelta {
                content_index,
                delta,
                partial,
            } => {
                self.open(
                    *content_index,
                    partial.content_block(*content_index),
                    kind,
                    out,
                );
                self.deltas(delta, out);
            }
            ModelEvent::TextEnd {
                content_index,
                partial,
                ..
            }
            | ModelEvent::ThinkingEnd {
                content_index,
                partial,
                ..
            } => {
                self.open(
                    *content_index,
                    partial.content_block(*content_index),
                    kind,
                    out,
                );
                self.close(out);
            }
            ModelEvent::ToolCallEnd {
                content_index,
                tool_call,
                ..
            } => {
                let fresh = self
                    .open
                    .as_ref()
                    .is_none_or(|open| open.pi != *content_index);
                self.open(
                    *content_index,
                    Some(ContentBlock::ToolCall(ToolCall::clone(tool_call))),
                    Kind::ToolUse,
                    out,
                );
                if fresh {
                    let text =
                        serde_json::to_string(&tool_call.arguments).unwrap_or_else(|_| "{}".into());
                    self.deltas(&text, out);
                }
                self.close(out);
            }
            ModelEvent::Done { reason, message } => {
                self.close(out);
                out.push(sse(
                    Some("message_delta"),
                    &json!({"type": "message_delta",
                            "delta": {"stop_reason": stop_reason(*reason), "stop_sequence": null},
                            "usage": usage_json(&message.usage)}),
                ));
                out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
            }
            ModelEvent::Error { error, .. } => self.error(&ApiError::model_failure(error), out),
        }
    }

    /// Appends a mid-stream `error` event.
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        out.push(sse(Some("error"), &error.body(Api::Anthropic)));
    }
}

/// A `content_block_delta` of `delta` (JSON text), without a JSON tree:
/// the same bytes as [`delta_event`].
fn delta_text(index: usize, delta: &str) -> String {
    sse_text(
        Some("content_block_delta"),
        format!(r#"{{"delta":{delta},"index":{index},"type":"content_block_delta"}}"#),
    )
}

fn delta_event(index: usize, delta: Value) -> String {
    sse(
        Some("content_block_delta"),
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_written_as_text_are_the_json_trees_values() {
        let delta = json!({"text": "a \"b\"\n é 😀", "type": "text_delta"});
        crate::frames::assert_same_frames(
            &delta_text(3, &delta.to_string()),
            &delta_event(3, delta),
        );
        let mut encoder = StreamEncoder::new("msg", "m");
        encoder.open = Some(Open {
            pi: 0,
            index: 1,
            kind: Kind::ToolUse,
            signature: None,
            fragments: false,
        });
        let mut out = Vec::new();
        encoder.deltas("{\"city\": \"Paris\"}", &mut out);
        let tree = delta_event(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}),
        );
        crate::frames::assert_same_frames(&out.concat(), &tree);
    }
    use agentstream::message::Message;

    #[test]
    fn tool_results_split_out_of_user_turns() {
        let body = json!({"messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "18C"},
                {"type": "text", "text": "thanks"}]},
        ], "system": [{"type": "text", "text": "Be brief."}],
           "tools": [{"name": "weather", "input_schema": {"type": "object"}}]});
        let request = decode_request(&body).unwrap();
        let roles: Vec<_> = request.context.messages.iter().map(Message::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "user"]);
        let Message::ToolResult(result) = &request.context.messages[2] else {
            panic!()
        };
        assert_eq!(result.tool_name, "weather");
        let Message::Assistant(call) = &request.context.messages[1] else {
            panic!()
        };
        assert!(matches!(&call.content[0],
            ContentBlock::Thinking(t) if t.thinking_signature.as_deref() == Some("sig")));
        assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
    }

    #[test]
    fn bad_requests_get_anthropic_errors() {
        for body in [
            json!("text"),
            json!({"messages": 1}),
            json!({"messages": [{"role": "system", "content": "x"}]}),
        ] {
            let error = decode_request(&body).unwrap_err();
            assert_eq!(error.status, 400);
            let body = error.body(Api::Anthropic);
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "invalid_request_error");
        }
    }
}
