//! [`BedrockProjector`]: Amazon Bedrock's `ConverseStream` events to the
//! event protocol, as pi-ai's `bedrock-converse-stream` provider reads
//! them.
//!
//! The body is AWS event-stream framing, not SSE: the
//! [`Framing::EventStream`] of this
//! projection makes [`SseStream`](crate::sse::SseStream) decode it with
//! [`EventStreamDecoder`](crate::eventstream::EventStreamDecoder) and hand
//! each message on as an [`SseEvent`] whose `event` is the message's
//! `:event-type` (or `:exception-type`) and whose `data` is its JSON
//! payload. The projection then reads:
//!
//! - `messageStart` (`role` must be `assistant`): `start`.
//! - `contentBlockStart` with `start.toolUse {toolUseId, name}`: a tool
//!   call opens; any other start is ignored (text and reasoning blocks
//!   open with their first delta).
//! - `contentBlockDelta`: `delta.text` appends to the text block of that
//!   `contentBlockIndex` (opening one), `delta.toolUse.input` to its tool
//!   call, `delta.reasoningContent.text` to its thinking block (opening
//!   one) and `delta.reasoningContent.signature` to that block's
//!   `thinkingSignature`.
//! - `contentBlockStop`: the block of that index ends.
//! - `messageStop.stopReason`: `end_turn` and `stop_sequence` are `stop`,
//!   `max_tokens` and `model_context_window_exceeded` `length`,
//!   `tool_use` `toolUse`; any other value ends the call in `error`.
//! - `metadata.usage`: `inputTokens`, `outputTokens`,
//!   `cacheReadInputTokens`, `cacheWriteInputTokens`, `totalTokens`
//!   (their sum when absent).
//! - `internalServerException`, `modelStreamErrorException`,
//!   `validationException`, `throttlingException`,
//!   `serviceUnavailableException`: `error`, the message prefixed as
//!   pi-ai prefixes it (`Throttling error: …`), the exception's name as
//!   the provider code. A message of type `error` ends in `error` with
//!   its `:error-message` and `:error-code`.
//!
//! As pi-ai, the call ends when the body ends (the `metadata` event comes
//! after `messageStop`). Where this differs from pi-ai (the goldens'
//! comparison in `tests/bedrock_projector.rs` applies each): a body that
//! ends without `messageStop` is truncated and ends in `error` (pi-ai
//! ends in `done` with `stop`); `start` is always the first event, also
//! when the body has no `messageStart`; an empty delta emits no delta
//! event, but a tool call whose input is empty streams `{}` (its deltas
//! join to its arguments' JSON object); an unknown stop reason's message
//! names it (pi-ai: "An unknown error occurred").

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};
use serde::Deserialize;

use crate::cause::Failure;
use crate::event_writer::{read_payload, EventWriter, Kind};
use crate::sse::{Fail, Frame, Framing, Projection, Projector, SseEvent};
use crate::surrogates::mark_lone_surrogates;

/// Pi's api id of the protocol.
pub const BEDROCK_API: &str = "bedrock-converse-stream";

/// The `ConverseStream` projector. See [`bedrock`](crate::bedrock).
///
/// ```
/// use agentstream::model::validate_events;
/// use agentstream_wire::bedrock::BedrockProjector;
/// use agentstream_wire::sse::SseEvent;
///
/// let mut projector = BedrockProjector::new("anthropic.claude-sonnet-4-5", "amazon-bedrock");
/// let mut events = Vec::new();
/// for (event, data) in [
///     ("messageStart", r#"{"role":"assistant"}"#),
///     ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#),
///     ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
///     ("messageStop", r#"{"stopReason":"end_turn"}"#),
///     ("metadata", r#"{"usage":{"inputTokens":5,"outputTokens":1,"totalTokens":6}}"#),
/// ] {
///     projector.push_event(&SseEvent::message(data).with_event(event), &mut events);
/// }
/// projector.finish(&mut events);
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_start", "text_delta", "text_end", "done"]);
/// assert!(validate_events(&events).is_empty());
/// ```
pub type BedrockProjector = Projector<BedrockProjection>;

/// What the `ConverseStream` events say beyond the [`Frame`]: the open
/// block's `contentBlockIndex`, its signature so far, the stop reason.
#[derive(Debug)]
pub struct BedrockProjection {
    writer: EventWriter,
    /// The `contentBlockIndex` of the open block.
    open_index: Option<u64>,
    /// The open thinking block's signature so far.
    signature: String,
    /// The mapped `messageStop` reason (`Err` holds an unknown one).
    stop: Option<Result<DoneReason, String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStart<'a> {
    #[serde(borrow)]
    role: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    content_block_index: Option<u64>,
    start: Option<Start>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    tool_use: Option<ToolUseStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    tool_use_id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta {
    content_block_index: Option<u64>,
    delta: Option<Delta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    text: Option<String>,
    tool_use: Option<ToolUseDelta>,
    reasoning_content: Option<Reasoning>,
}

#[derive(Deserialize)]
struct ToolUseDelta {
    input: Option<String>,
}

#[derive(Deserialize)]
struct Reasoning {
    text: Option<String>,
    signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    content_block_index: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Metadata {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_write_input_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    message: Option<String>,
    code: Option<String>,
}

#[derive(Deserialize)]
struct Exception {
    message: Option<String>,
}

/// The exceptions a `ConverseStream` body carries, with the prefix pi-ai
/// gives each one's message and its SDK name (the provider code).
const EXCEPTIONS: [(&str, &str, &str); 5] = [
    (
        "internalServerException",
        "Internal server error",
        "InternalServerException",
    ),
    (
        "modelStreamErrorException",
        "Model stream error",
        "ModelStreamErrorException",
    ),
    (
        "validationException",
        "Validation error",
        "ValidationException",
    ),
    (
        "throttlingException",
        "Throttling error",
        "ThrottlingException",
    ),
    (
        "serviceUnavailableException",
        "Service unavailable",
        "ServiceUnavailableException",
    ),
];

/// A `messageStop` reason as pi-ai maps it; `None` for a failure.
pub(crate) fn done_reason(stop_reason: &str) -> Option<DoneReason> {
    match stop_reason {
        "end_turn" | "stop_sequence" => Some(DoneReason::Stop),
        "max_tokens" | "model_context_window_exceeded" => Some(DoneReason::Length),
        "tool_use" => Some(DoneReason::ToolUse),
        _ => None,
    }
}

impl Projection for BedrockProjection {
    const API: &'static str = BEDROCK_API;
    fn framing() -> Framing {
        Framing::EventStream
    }

    fn for_header(_header: &AssistantMessage) -> Self {
        Self {
            writer: EventWriter::new(),
            open_index: None,
            signature: String::new(),
            stop: None,
        }
    }

    /// One event-stream message: its event type and JSON payload.
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        let marked = mark_lone_surrogates(&event.data);
        self.writer.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(&event.data);
        if let Err(failure) = self.push_event(frame, event.event_type(), data, out) {
            self.fail(frame, failure, out);
        }
    }

    /// The end of the body: `done` with the `messageStop` reason, or
    /// `error` without one.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        let result = match self.stop.take() {
            Some(Ok(reason)) => {
                self.open_index = None;
                self.writer.done(frame, reason, out)
            }
            Some(Err(reason)) => Err(Failure::stop("stopReason", &reason)),
            None => Err(String::from(
                "the stream ended before messageStop: the response is truncated",
            )
            .into()),
        };
        if let Err(failure) = result {
            self.fail(frame, failure, out);
        }
    }

    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.writer.settle(frame, message);
    }
}

fn read<'a, T: Deserialize<'a>>(
    data: &'a str,
    saturated: &'a mut Option<String>,
    event: &str,
) -> Result<T, Failure> {
    read_payload(data, saturated, &format!("a ConverseStream {event} event")).map_err(Failure::from)
}

impl BedrockProjection {
    /// The open block's kind when it is the block of `index`.
    fn open_at(&self, index: Option<u64>) -> Option<Kind> {
        match self.writer.open_block() {
            Some((kind, _)) if self.open_index == index => Some(kind),
            _ => None,
        }
    }

    /// Opens a text or thinking block for `index` unless one is open
    /// there; whether the block there is of `kind`.
    fn text_block(
        &mut self,
        frame: &mut Frame,
        index: Option<u64>,
        kind: Kind,
        out: &mut Vec<ModelEvent>,
    ) -> Result<bool, Failure> {
        match self.open_at(index) {
            Some(open) => Ok(open == kind),
            None => {
                self.writer.open_text(frame, kind, out)?;
                self.open_index = index;
                self.signature.clear();
                Ok(true)
            }
        }
    }

    fn push_event(
        &mut self,
        frame: &mut Frame,
        event: &str,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let mut saturated = None;
        match event {
            "messageStart" => {
                let start: MessageStart<'_> = read(data, &mut saturated, event)?;
                if start.role.is_some_and(|role| role != "assistant") {
                    return Err(String::from(
                        "Unexpected assistant message start but got user message start instead",
                    )
                    .into());
                }
                self.writer.start(frame, out);
            }
            "contentBlockStart" => {
                let start: BlockStart = read(data, &mut saturated, event)?;
                if let Some(tool) = start.start.and_then(|start| start.tool_use) {
                    let id = tool.tool_use_id.unwrap_or_default();
                    let name = tool.name.unwrap_or_default();
                    self.writer.open_tool(frame, id, name, None, out)?;
                    self.open_index = start.content_block_index;
                }
            }
            "contentBlockDelta" => {
                let delta: BlockDelta = read(data, &mut saturated, event)?;
                let index = delta.content_block_index;
                let Some(delta) = delta.delta else {
                    return Ok(());
                };
                if let Some(text) = delta.text {
                    if self.text_block(frame, index, Kind::Text, out)? && !text.is_empty() {
                        self.writer.append(frame, &text, out)?;
                    }
                } else if let Some(tool) = delta.tool_use {
                    if self.open_at(index) == Some(Kind::Tool) {
                        let input = tool.input.unwrap_or_default();
                        if !input.is_empty() {
                            self.writer.append(frame, &input, out)?;
                        }
                    }
                } else if let Some(reasoning) = delta.reasoning_content {
                    if self.text_block(frame, index, Kind::Thinking, out)? {
                        if let Some(text) = reasoning.text.filter(|text| !text.is_empty()) {
                            self.writer.append(frame, &text, out)?;
                        }
                        if let Some(signature) = reasoning.signature.filter(|s| !s.is_empty()) {
                            self.signature.push_str(&signature);
                            self.writer.set_signature(self.signature.clone());
                        }
                    }
                }
            }
            "contentBlockStop" => {
                let stop: BlockStop = read(data, &mut saturated, event)?;
                if self.open_at(stop.content_block_index).is_some() {
                    self.writer.close(frame, out)?;
                    self.open_index = None;
                }
            }
            "messageStop" => {
                let stop: MessageStop = read(data, &mut saturated, event)?;
                let reason = stop.stop_reason.unwrap_or_default();
                self.stop = Some(done_reason(&reason).ok_or(reason));
            }
            "metadata" => {
                let metadata: Metadata = read(data, &mut saturated, event)?;
                if let Some(usage) = metadata.usage {
                    let input = usage.input_tokens.unwrap_or(0);
                    let output = usage.output_tokens.unwrap_or(0);
                    let total = match usage.total_tokens {
                        Some(total) if total > 0 => total,
                        _ => input.saturating_add(output),
                    };
                    self.writer.usage = Some(Usage {
                        input,
                        output,
                        cache_read: usage.cache_read_input_tokens.unwrap_or(0),
                        cache_write: usage.cache_write_input_tokens.unwrap_or(0),
                        total_tokens: Some(total),
                        ..Usage::default()
                    });
                }
            }
            "error" => {
                // A message of type `error` (its `:error-code` and
                // `:error-message` headers, as the framing hands them on).
                let error: WireError = read(data, &mut saturated, event)?;
                let message = error.message.unwrap_or_default();
                return Err(Failure::provider(message, error.code));
            }
            other => {
                if let Some((_, prefix, name)) = EXCEPTIONS.iter().find(|(wire, ..)| *wire == other)
                {
                    let exception: Exception = read(data, &mut saturated, event)?;
                    let message = exception.message.unwrap_or_default();
                    return Err(Failure::provider(
                        format!("{prefix}: {message}"),
                        Some(String::from(*name)),
                    ));
                }
            }
        }
        Ok(())
    }
}
