//! Amazon Bedrock, the server's writing of an answer: model events to
//! `ConverseStream`'s event-stream messages (what the client's
//! [`BedrockProjector`](super::BedrockProjector) reads), and the one JSON
//! answer of a `Converse` call.
//!
//! # What is written
//!
//! Each event is one binary message with the headers AWS sends
//! (`:event-type`, `:content-type: application/json`, `:message-type:
//! event`) and a JSON payload: `messageStart {"role": "assistant"}`; per
//! block, numbered from 0 in the order they open, a `contentBlockStart`
//! with `start.toolUse {toolUseId, name}` for a tool call (text and
//! reasoning blocks open with their first delta, as Bedrock sends them),
//! `contentBlockDelta`s (`delta.text`, `delta.reasoningContent.text`,
//! `delta.toolUse.input`; a thinking block's signature is one last
//! `delta.reasoningContent.signature`) and a `contentBlockStop`; then
//! `messageStop {stopReason}` (`end_turn`, `tool_use`, `max_tokens`) and
//! `metadata {usage, metrics}` (see [`usage_json`]). A redacted thinking
//! block is not sent. A model error after HTTP 200 is an exception
//! message (`:message-type: exception`, `:exception-type` such as
//! `internalServerException` or `throttlingException`, see
//! [`exception_type`]) with the payload `{"message"}`.

use crate::server::prelude::*;
use agentstream::message::{AssistantMessage, ContentBlock, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent};
use bytes::Bytes;
use serde_json::{json, Value};

use super::request::normalize_tool_call_id;
use crate::eventstream::{encode_event, encode_message, EncodeError, Header, HeaderValue};
use crate::server::error::ApiError;
use crate::server::events::{self as frames, Events};
use crate::server::steps::{block_step, Kind, OneBlockAtATime, Wire};

/// Bedrock's `usage`: `inputTokens`, `outputTokens`, `totalTokens` (Pi's,
/// else the sum of the four counts), and `cacheReadInputTokens` and
/// `cacheWriteInputTokens` when not 0.
///
/// ```
/// use agentstream::message::Usage;
/// use agentstream_wire::bedrock::encode::usage_json;
///
/// let usage = Usage { input: 5, output: 2, cache_read: 3, ..Usage::default() };
/// let json = usage_json(&usage);
/// assert_eq!((json["inputTokens"].as_u64(), json["totalTokens"].as_u64()), (Some(5), Some(10)));
/// ```
pub fn usage_json(usage: &Usage) -> Value {
    let total = usage.total_tokens.unwrap_or_else(|| {
        usage
            .input
            .saturating_add(usage.output)
            .saturating_add(usage.cache_read)
            .saturating_add(usage.cache_write)
    });
    let mut json = json!({
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "totalTokens": total,
    });
    if usage.cache_read > 0 {
        json["cacheReadInputTokens"] = usage.cache_read.into();
    }
    if usage.cache_write > 0 {
        json["cacheWriteInputTokens"] = usage.cache_write.into();
    }
    json
}

/// Bedrock's `stopReason` for a turn that ended well.
fn stop_reason(reason: DoneReason) -> &'static str {
    match reason {
        DoneReason::Length => "max_tokens",
        DoneReason::ToolUse => "tool_use",
        _ => "end_turn",
    }
}

/// The stream exception Bedrock sends for an error of HTTP `status`
/// (the `:exception-type` header, in lower camel case as the stream names
/// it): `validationException` (400), `throttlingException` (429),
/// `serviceUnavailableException` (503), `modelStreamErrorException`
/// (424), `internalServerException` otherwise.
pub fn exception_type(status: u16) -> &'static str {
    match status {
        400 | 413 | 422 => "validationException",
        424 => "modelStreamErrorException",
        429 => "throttlingException",
        503 | 529 => "serviceUnavailableException",
        _ => "internalServerException",
    }
}

/// An error type that names a Bedrock exception (`ThrottlingException`
/// or `throttlingException`) as the stream names it, in lower camel case;
/// `None` for another type.
fn exception_name(error_type: &str) -> Option<String> {
    let mut chars = error_type.chars();
    let first = chars.next()?;
    (error_type.len() > "Exception".len()
        && error_type.ends_with("Exception")
        && error_type.chars().all(|c| c.is_ascii_alphanumeric()))
    .then(|| format!("{}{}", first.to_ascii_lowercase(), chars.as_str()))
}

/// The `Converse` answer (a call that did not stream): `output.message`
/// with every block, the `stopReason`, `usage` and `metrics`.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_wire::bedrock::encode::converse_response;
///
/// let body = converse_response(DoneReason::Stop, &assistant([text("hi")], StopReason::Stop));
/// assert_eq!(body["output"]["message"]["content"][0]["text"], "hi");
/// assert_eq!(body["stopReason"], "end_turn");
/// ```
pub fn converse_response(reason: DoneReason, message: &AssistantMessage) -> Value {
    let content: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(json!({"text": t.text})),
            ContentBlock::Thinking(t) if t.redacted == Some(true) => None,
            ContentBlock::Thinking(t) => {
                let mut text = json!({"text": t.thinking});
                if let Some(signature) = t.thinking_signature.as_deref() {
                    text["signature"] = signature.into();
                }
                Some(json!({"reasoningContent": {"reasoningText": text}}))
            }
            ContentBlock::ToolCall(c) => Some(json!({
                "toolUse": {
                    "toolUseId": normalize_tool_call_id(&c.id),
                    "name": c.name,
                    "input": c.arguments,
                }
            })),
            _ => None,
        })
        .collect();
    json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason(reason),
        "usage": usage_json(&message.usage),
        "metrics": {"latencyMs": 0},
    })
}

/// One event-stream message with `headers` and the JSON `payload`, as one
/// event of `out`.
fn message(headers: &[Header<'_>], payload: &Value, out: &mut Events) {
    framed(payload, out, |payload, frame| {
        encode_message(headers, payload, frame)
    });
}

/// One `event` message of type `event_type` (the headers AWS sends with
/// an event, written by [`encode_event`]).
fn event(event_type: &str, payload: &Value, out: &mut Events) {
    framed(payload, out, |payload, frame| {
        encode_event(event_type, payload, frame)
    });
}

/// The frame `encode` makes of the JSON `payload`, as one event of `out`.
fn framed(
    payload: &Value,
    out: &mut Events,
    encode: impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), EncodeError>,
) {
    let payload = payload.to_string();
    let mut frame = Vec::with_capacity(payload.len() + 96);
    // Header names and values here are constants, far under the limits;
    // a payload past 4 GiB is not built in memory.
    if encode(payload.as_bytes(), &mut frame).is_ok() {
        out.frame(&frame);
    }
}

/// The block being streamed.
struct Open {
    /// Its Pi index.
    pi: usize,
    /// Its `contentBlockIndex`.
    index: usize,
    kind: Kind,
    /// A thinking block's signature, sent as it ends.
    signature: Option<String>,
    /// Whether an input delta was sent (a tool call).
    fragments: bool,
    /// A redacted thinking block: nothing is sent.
    hidden: bool,
}

/// Turns model events into `ConverseStream` event-stream messages, one
/// call at a time (see the [module documentation](self)).
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream_wire::bedrock::encode::StreamEncoder;
/// use agentstream_wire::eventstream::EventStreamDecoder;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let stream = model.stream(&Context::from_messages([user("hello").into()]), StreamOptions::default());
/// let events: Vec<_> = futures_executor::block_on(stream.collect());
/// let mut encoder = StreamEncoder::new();
/// let mut body = Vec::new();
/// for event in &events {
///     encoder.encode(event, &mut body);
/// }
/// let mut decoder = EventStreamDecoder::new();
/// decoder.feed(&body.concat());
/// let first = decoder.next_message().unwrap().unwrap();
/// assert_eq!(first.header(":event-type").and_then(|v| v.as_str()), Some("messageStart"));
/// ```
#[derive(Default)]
pub struct StreamEncoder {
    chunks: usize,
    open: Option<Open>,
    next_index: usize,
}

impl core::fmt::Debug for StreamEncoder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamEncoder")
            .field("chunks", &self.chunks)
            .field("next_index", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl StreamEncoder {
    /// An encoder for one call.
    pub fn new() -> Self {
        Self {
            chunks: 1,
            open: None,
            next_index: 0,
        }
    }

    /// Splits every delta into up to `chunks` messages (at least 1).
    #[must_use]
    pub fn with_chunks(mut self, chunks: usize) -> Self {
        self.chunks = chunks.max(1);
        self
    }

    /// Appends the messages for `event` to `out`, each one binary message.
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<Bytes>) {
        let mut events = Events::default();
        self.encode_into(Wire::from(event), &mut events);
        while !events.is_empty() {
            out.push(events.take(1));
        }
    }

    /// [`encode`](Self::encode) into one buffer, from a step.
    pub(crate) fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        if block_step(self, step, out) {
            return;
        }
        match step {
            Wire::Start(_) => event("messageStart", &json!({"role": "assistant"}), out),
            Wire::Done { reason, message } => {
                self.close(out);
                event(
                    "messageStop",
                    &json!({"stopReason": stop_reason(reason)}),
                    out,
                );
                let metadata = json!({
                    "usage": usage_json(&message.usage),
                    "metrics": {"latencyMs": 0},
                });
                event("metadata", &metadata, out);
            }
            Wire::Error(error) => self.error_into(&ApiError::model_failure(error), out),
            _ => {}
        }
    }

    /// Appends a mid-stream error: an exception message whose payload is
    /// `{"message"}`, named by the error's type when that names a Bedrock
    /// exception (`ThrottlingException` is sent as `throttlingException`),
    /// else by its status (see [`exception_type`]).
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<Bytes>) {
        let mut events = Events::default();
        self.error_into(error, &mut events);
        out.push(events.take(events.len()));
    }

    /// [`error`](Self::error) into one buffer.
    pub(crate) fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        let named = error.error_type.as_deref().and_then(exception_name);
        let name = named.as_deref().unwrap_or(exception_type(error.status));
        let headers = [
            Header::new(":exception-type", HeaderValue::String(name)),
            Header::new(":content-type", HeaderValue::String("application/json")),
            Header::new(":message-type", HeaderValue::String("exception")),
        ];
        message(&headers, &json!({"message": error.message}), out);
    }
}

impl OneBlockAtATime for StreamEncoder {
    type Kind = Kind;

    fn kind_of(kind: Kind) -> Kind {
        kind
    }

    fn open_index(&self) -> Option<usize> {
        self.open.as_ref().map(|open| open.pi)
    }

    fn close(&mut self, out: &mut Events) {
        let Some(open) = self.open.take() else {
            return;
        };
        if open.hidden {
            return;
        }
        let index = open.index;
        if open.kind == Kind::ToolCall && !open.fragments {
            let delta = json!({"toolUse": {"input": "{}"}});
            event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": delta}),
                out,
            );
        }
        if let Some(signature) = open.signature.filter(|_| open.kind == Kind::Thinking) {
            let delta = json!({"reasoningContent": {"signature": signature}});
            event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": delta}),
                out,
            );
        }
        event(
            "contentBlockStop",
            &json!({"contentBlockIndex": index}),
            out,
        );
    }

    /// Makes the block of Pi index `pi` the open one; `shape` is looked
    /// up only when it opens.
    fn open<'a>(
        &mut self,
        pi: usize,
        shape: impl FnOnce() -> Option<BlockShape<'a>>,
        kind: Kind,
        out: &mut Events,
    ) {
        if self.open.as_ref().is_some_and(|open| open.pi == pi) {
            return;
        }
        self.close(out);
        let shape = shape();
        let hidden = matches!(&shape, Some(BlockShape::Thinking(t)) if t.redacted == Some(true));
        let index = self.next_index;
        if !hidden {
            self.next_index += 1;
        }
        let signature = match &shape {
            Some(BlockShape::Thinking(t)) => t.thinking_signature.clone(),
            _ => None,
        };
        if kind == Kind::ToolCall && !hidden {
            let (id, name) = match &shape {
                Some(BlockShape::ToolCall(c)) => (c.id.as_str(), c.name.as_str()),
                _ => ("", ""),
            };
            // A Pi id such as `call_1|fc_1` as Bedrock writes ids.
            let start = json!({"toolUse": {"toolUseId": normalize_tool_call_id(id), "name": name}});
            event(
                "contentBlockStart",
                &json!({"contentBlockIndex": index, "start": start}),
                out,
            );
        }
        self.open = Some(Open {
            pi,
            index,
            kind,
            signature,
            fragments: false,
            hidden,
        });
    }

    fn deltas(&mut self, text: &str, out: &mut Events) {
        let Some(open) = &mut self.open else {
            return;
        };
        if open.hidden {
            return;
        }
        open.fragments = true;
        let index = open.index;
        for piece in frames::split(text, self.chunks) {
            let delta = match open.kind {
                Kind::Text => json!({"text": piece}),
                Kind::Thinking => json!({"reasoningContent": {"text": piece}}),
                Kind::ToolCall => json!({"toolUse": {"input": piece}}),
            };
            event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": delta}),
                out,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eventstream::EventStreamDecoder;
    use agentstream::message::{assistant, text, thinking, StopReason, ToolCall};

    fn decoded(body: &[u8]) -> Vec<(String, String, Value)> {
        let mut decoder = EventStreamDecoder::new();
        decoder.feed(body);
        let mut out = Vec::new();
        while let Some(message) = decoder.next_message() {
            let message = message.unwrap();
            let name = |key: &str| {
                message
                    .header(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let kind = name(":message-type");
            let event = if kind == "event" {
                name(":event-type")
            } else {
                name(":exception-type")
            };
            assert_eq!(name(":content-type"), "application/json");
            out.push((
                kind,
                event,
                serde_json::from_slice(message.payload()).unwrap(),
            ));
        }
        out
    }

    #[test]
    fn a_message_is_written_as_bedrock_streams_it() {
        let mut signed = thinking("hm");
        if let ContentBlock::Thinking(t) = &mut signed {
            t.thinking_signature = Some("sig".into());
        }
        let call = ContentBlock::ToolCall(ToolCall {
            id: "t1".into(),
            name: "ls".into(),
            ..ToolCall::default()
        });
        let message = assistant([signed, text("ok"), call], StopReason::ToolUse);
        let mut encoder = StreamEncoder::new();
        let mut out = Events::default();
        crate::server::message_steps(&message, DoneReason::ToolUse, true, |step| {
            encoder.encode_into(step, &mut out);
        });
        let events = decoded(&out.take(out.len()));
        let names: Vec<&str> = events.iter().map(|(_, e, _)| e.as_str()).collect();
        assert_eq!(
            names,
            [
                "messageStart",
                "contentBlockDelta",
                "contentBlockDelta",
                "contentBlockStop",
                "contentBlockDelta",
                "contentBlockStop",
                "contentBlockStart",
                "contentBlockDelta",
                "contentBlockStop",
                "messageStop",
                "metadata"
            ]
        );
        assert_eq!(events[2].2["delta"]["reasoningContent"]["signature"], "sig");
        assert_eq!(events[6].2["start"]["toolUse"]["toolUseId"], "t1");
        assert_eq!(events[7].2["delta"]["toolUse"]["input"], "{}");
        assert_eq!(events[7].2["contentBlockIndex"], 2);
        assert_eq!(events[9].2["stopReason"], "tool_use");
    }

    #[test]
    fn errors_are_exception_messages() {
        let mut encoder = StreamEncoder::new();
        let mut out = Vec::new();
        encoder.error(&ApiError::new(429, "slow down"), &mut out);
        let events = decoded(&out.concat());
        assert_eq!(
            events,
            [(
                "exception".into(),
                "throttlingException".into(),
                json!({"message": "slow down"})
            )]
        );
        assert_eq!(exception_type(500), "internalServerException");
        let mut out = Vec::new();
        let typed = ApiError::new(500, "busy").with_type("ServiceUnavailableException");
        encoder.error(&typed, &mut out);
        assert_eq!(decoded(&out.concat())[0].1, "serviceUnavailableException");
        assert_eq!(exception_name("overloaded_error"), None);
        assert_eq!(exception_name("Exception"), None);
    }
}
