//! [`EventProjector`]: from Anthropic Messages stream payloads to
//! [`ModelEvent`]s.
//!
//! The projector is a sans-IO state machine, like the OpenAI
//! [`ChunkProjector`](crate::openai::ChunkProjector). It is given the
//! `data` of each SSE event ([`push_data`](EventProjector::push_data); the
//! payload's own `type` names the event, so the SSE `event:` line is not
//! needed), told when the body ends ([`finish`](EventProjector::finish)) or
//! the call is aborted ([`abort`](EventProjector::abort)), and appends the
//! events of the full protocol to a `Vec`. Every sequence it produces
//! passes [`validate_events`](agentstream::model::validate_events).
//!
//! # Blocks
//!
//! - `message_start` gives `start`; its `id` becomes `responseId`, its
//!   `model` becomes `responseModel` when it differs from the requested
//!   one (as Pi does), and its usage is the starting usage. Any other payload before it also starts
//!   the message (an `error` before it gives a lone `error`).
//! - `content_block_start` opens a block: `text` → `text_start`,
//!   `thinking` → `thinking_start`, `tool_use` → `toolcall_start` (with the
//!   block's `id` and `name`). `redacted_thinking` is kept as a complete
//!   thinking block marked `redacted`, its opaque `data` as the
//!   `thinkingSignature`. Unknown block types (`server_tool_use`, …) are
//!   skipped with their deltas.
//! - Deltas: `text_delta`, `thinking_delta`, `signature_delta` (kept as the
//!   block's `thinkingSignature`, emits no event), `input_json_delta`
//!   (empty `partial_json` emits nothing). Unknown delta types are ignored.
//! - `content_block_stop` ends the block. A tool call's argument text,
//!   blank meaning `{}` (a synthetic `{}` delta is emitted so the deltas add
//!   up), must be a JSON object, or the stream ends in `error`.
//! - Only one block is open at a time: a `content_block_start` while
//!   another is open closes it first.
//!
//! # End of the message
//!
//! - `message_delta` carries the stop reason and cumulative usage: each
//!   count present replaces the known one, absent ones are kept.
//! - `message_stop` ends the message. `end_turn`, `stop_sequence` and
//!   `pause_turn` give `stop` (a paused turn is a complete message the
//!   caller may continue by sending it back), `max_tokens` gives `length`,
//!   `tool_use` gives `toolUse`. `refusal`,
//!   `model_context_window_exceeded` and any unknown reason end in `error`
//!   naming the reason. No stop reason at all gives `toolUse` when the
//!   message has tool calls and `stop` otherwise.
//! - A body that ends without `message_stop` ends in `error` (truncated),
//!   even after a stop reason: Anthropic always sends `message_stop`.
//! - Usage: `input_tokens` → `input`, `output_tokens` → `output`,
//!   `cache_read_input_tokens` → `cacheRead`,
//!   `cache_creation_input_tokens` → `cacheWrite`, and `totalTokens` is
//!   their sum, as Pi computes it. Costs are zero unless the projector has
//!   a [`Pricing`] ([`set_pricing`](EventProjector::set_pricing)).
//!
//! # Errors and abort
//!
//! - An `error` event (for example `overloaded_error` after HTTP 200) ends
//!   in `error` with `"{type}: {message}"`.
//! - `ping`, unknown event types and unknown fields are ignored. Data that
//!   is not JSON, or JSON that is not an object with a `type`, ends in
//!   `error`. Whitespace around the JSON is accepted.
//! - Lone UTF-16 surrogate escapes (`\ud83d`, as JavaScript writes half
//!   an emoji) are accepted: halves split across two deltas of a text or
//!   thinking block are joined into one character, and any other lone half
//!   becomes U+FFFD (see [`surrogates`](crate::surrogates)).
//! - On error or abort, open blocks get no `*_end`; the open text or
//!   thinking block keeps its text so far, and an open tool call is kept
//!   only if its argument text is already a JSON object.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use agentstream::message::{
    assistant, AssistantMessage, ContentBlock, StopReason, ToolCall, Usage,
};
use agentstream::model::{DoneReason, ErrorReason, ModelEvent, PartialBuilder, ABORTED_MESSAGE};

use crate::pricing::Pricing;

use super::blocks::Open;
use super::payload::{error_text, quick_delta, Payload};
use crate::json::{clip, is_json_blank, parse_arguments};
use crate::limits::{Limit, LimitExceeded, Limits};
use crate::surrogates::{mark_lone_surrogates, SurrogateJoiner};

/// The `api` of messages from the Anthropic Messages API, as Pi names it.
pub const ANTHROPIC_MESSAGES_API: &str = "anthropic-messages";

/// How many characters of offending data an error message quotes.
pub(super) const QUOTE: usize = 200;

/// The projector. See the [module documentation](self) for every rule.
///
/// ```
/// use agentstream_wire::anthropic::EventProjector;
/// use agentstream::model::validate_events;
///
/// let mut projector = EventProjector::new("claude-sonnet-4-5", "anthropic");
/// let mut events = Vec::new();
/// for data in [
///     r#"{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5}}}"#,
///     r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
///     r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
///     r#"{"type":"content_block_stop","index":0}"#,
///     r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
///     r#"{"type":"message_stop"}"#,
/// ] {
///     projector.push_data(data, &mut events);
/// }
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_start", "text_delta", "text_end", "done"]);
/// assert!(validate_events(&events).is_empty());
/// ```
#[derive(Debug)]
pub struct EventProjector {
    pub(super) builder: PartialBuilder,
    pub(super) started: bool,
    pub(super) finished: bool,
    pub(super) open: Open,
    pub(super) has_tool_calls: bool,
    pub(super) stop_reason: Option<String>,
    pub(super) usage: Usage,
    pub(super) usage_seen: bool,
    /// Prices that fill the cost of the final usage.
    pub(super) pricing: Option<Pricing>,
    pub(super) limits: Limits,
    /// Content blocks and tool calls started so far, for the limits.
    pub(super) blocks: usize,
    pub(super) tool_calls: usize,
    /// Joins surrogate halves split across the open block's deltas.
    pub(super) joiner: SurrogateJoiner,
    /// The payload being projected had lone surrogate escapes.
    pub(super) marked: bool,
}

impl EventProjector {
    /// A projector for messages of `model` from `provider`, with `api`
    /// [`ANTHROPIC_MESSAGES_API`] and timestamp 0.
    pub fn new(model: impl Into<String>, provider: impl Into<String>) -> Self {
        let mut header = assistant([], StopReason::Stop);
        header.api = ANTHROPIC_MESSAGES_API.into();
        header.provider = provider.into();
        header.model = model.into();
        Self::with_header(header)
    }

    /// A projector whose messages start from `header` (its content is
    /// ignored; its usage and stop reason are replaced at the end).
    pub fn with_header(header: AssistantMessage) -> Self {
        Self {
            builder: PartialBuilder::new(header),
            started: false,
            finished: false,
            open: Open::None,
            has_tool_calls: false,
            stop_reason: None,
            usage: Usage::default(),
            usage_seen: false,
            pricing: None,
            limits: Limits::DEFAULT,
            blocks: 0,
            tool_calls: 0,
            joiner: SurrogateJoiner::default(),
            marked: false,
        }
    }

    /// Sets the prices that fill `usage.cost` of the final message (see
    /// [`Pricing`]). Without them the costs stay 0.
    pub fn set_pricing(&mut self, pricing: Option<Pricing>) {
        self.pricing = pricing;
    }

    /// Sets the timestamp (Unix milliseconds) of the messages. Only has an
    /// effect before `start`.
    pub fn set_timestamp(&mut self, timestamp_ms: u64) {
        if !self.started {
            let mut header = self.builder.snapshot().to_message();
            header.timestamp = timestamp_ms;
            self.builder = PartialBuilder::new(header);
        }
    }

    /// Sets the limits on content blocks, tool calls and argument text
    /// (see [`Limits`]); a message past one ends in `error` naming it, with
    /// what came before kept. Default: [`Limits::DEFAULT`]. The text and
    /// signatures are bounded by the response limit of the stream that
    /// feeds the projector.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    pub(super) fn exceeded(&self, limit: Limit) -> String {
        LimitExceeded::new(limit, &self.limits).to_string()
    }

    /// Whether a terminal event was produced; later input is ignored.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether `start` was produced.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Handles the `data` of one SSE event: one event payload's JSON.
    pub fn push_data(&mut self, data: &str, out: &mut Vec<ModelEvent>) {
        if self.finished {
            return;
        }
        // Most of a stream is content block deltas in one exact shape: read
        // those without serde (the text is borrowed, and a text without
        // `\u` escapes has no lone surrogate to mark).
        if let Some(delta) = quick_delta(data) {
            self.marked = false;
            let payload = Payload {
                kind: Cow::Borrowed("content_block_delta"),
                delta: Some(delta),
                message: None,
                content_block: None,
                usage: None,
                error: None,
            };
            if let Err(message) = self.push_event(&payload, out) {
                self.fail(message, out);
            }
            return;
        }
        // Lone UTF-16 surrogates (JavaScript writes them) would fail the
        // parse: they become markers that the deltas join or replace.
        let marked = mark_lone_surrogates(data);
        self.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(data);
        // The typed parse borrows the deltas' text; a payload whose fields
        // have unexpected types falls back to the lenient reading of a
        // `Value`, so odd shapes are tolerated as before.
        if let Ok(payload) = serde_json::from_str::<Payload<'_>>(data) {
            if let Err(message) = self.push_event(&payload, out) {
                self.fail(message, out);
            }
            return;
        }
        let value = match serde_json::from_str::<Value>(data) {
            Ok(value) => value,
            Err(_) => {
                let message = format!(
                    "the provider sent data that is not JSON: {}",
                    clip(data, QUOTE)
                );
                self.fail(message, out);
                return;
            }
        };
        let Some(payload) = Payload::from_value(&value) else {
            let message = format!(
                "the provider sent JSON that is not a Messages stream event: {}",
                clip(data, QUOTE)
            );
            self.fail(message, out);
            return;
        };
        if let Err(message) = self.push_event(&payload, out) {
            self.fail(message, out);
        }
    }

    fn push_event(
        &mut self,
        payload: &Payload<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        match &*payload.kind {
            "ping" => Ok(()),
            "error" => Err(error_text(payload.error.as_ref())),
            "message_start" => {
                if !self.started {
                    let message = payload.message.as_ref();
                    if let Some(id) = message
                        .and_then(|m| m.get("id"))
                        .and_then(Value::as_str)
                        .filter(|id| !id.is_empty())
                    {
                        let mut header = self.builder.snapshot().to_message();
                        header
                            .extra
                            .insert("responseId".into(), Value::String(id.into()));
                        self.builder = PartialBuilder::new(header);
                    }
                    if let Some(served) = message
                        .and_then(|m| m.get("model"))
                        .and_then(Value::as_str)
                        .filter(|m| !m.is_empty())
                    {
                        let mut header = self.builder.snapshot().to_message();
                        if served != header.model {
                            header
                                .extra
                                .insert("responseModel".into(), Value::String(served.into()));
                            self.builder = PartialBuilder::new(header);
                        }
                    }
                    if let Some(usage) = message.and_then(|m| m.get("usage")) {
                        self.merge_usage(usage);
                    }
                }
                self.ensure_started(out);
                Ok(())
            }
            "content_block_start" => {
                self.ensure_started(out);
                self.close(out)?;
                let block = payload.content_block.as_ref();
                self.open_block(block, out)?;
                Ok(())
            }
            "content_block_delta" => {
                self.ensure_started(out);
                if let Some(delta) = &payload.delta {
                    self.push_delta(delta, out)?;
                }
                Ok(())
            }
            "content_block_stop" => {
                self.ensure_started(out);
                self.close(out)
            }
            "message_delta" => {
                self.ensure_started(out);
                if let Some(reason) = payload
                    .delta
                    .as_ref()
                    .and_then(|d| d.stop_reason.as_deref())
                {
                    self.stop_reason = Some(reason.into());
                }
                if let Some(usage) = &payload.usage {
                    self.merge_usage(usage);
                }
                Ok(())
            }
            "message_stop" => {
                self.ensure_started(out);
                self.end(out)
            }
            _ => Ok(()),
        }
    }

    fn ensure_started(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::Start {
                partial: self.builder.snapshot(),
            });
        }
    }

    fn merge_usage(&mut self, usage: &Value) {
        let fields: [(&str, &mut u64); 4] = [
            ("input_tokens", &mut self.usage.input),
            ("output_tokens", &mut self.usage.output),
            ("cache_read_input_tokens", &mut self.usage.cache_read),
            ("cache_creation_input_tokens", &mut self.usage.cache_write),
        ];
        for (name, slot) in fields {
            if let Some(n) = usage.get(name).and_then(Value::as_u64) {
                *slot = n;
                self.usage_seen = true;
            }
        }
        let u = &self.usage;
        self.usage.total_tokens = Some(
            u.input
                .saturating_add(u.output)
                .saturating_add(u.cache_read)
                .saturating_add(u.cache_write),
        );
    }

    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        let reason = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence" | "pause_turn") => Some(DoneReason::Stop),
            Some("max_tokens") => Some(DoneReason::Length),
            Some("tool_use") => Some(DoneReason::ToolUse),
            None => None,
            Some(other) => {
                return Err(format!(
                    "the provider ended the response with stop_reason \"{other}\""
                ))
            }
        };
        self.close(out)?;
        let reason = reason.unwrap_or(if self.has_tool_calls {
            DoneReason::ToolUse
        } else {
            DoneReason::Stop
        });
        let mut message = self.builder.snapshot().to_message();
        message.stop_reason = reason.stop_reason();
        if self.usage_seen {
            message.usage = self.usage.clone();
            if let Some(pricing) = &self.pricing {
                pricing.apply(&mut message.usage);
            }
        }
        self.finished = true;
        out.push(ModelEvent::done(reason, message));
        Ok(())
    }

    /// Handles the end of the body. Without `message_stop` the response is
    /// truncated and ends in `error`.
    pub fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        self.fail(
            "the stream ended before message_stop: the response is truncated",
            out,
        );
    }

    /// Ends the stream in `error` with reason `aborted` and
    /// [`ABORTED_MESSAGE`].
    pub fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        self.terminate(ErrorReason::Aborted, ABORTED_MESSAGE.into(), out);
    }

    /// Ends the stream in `error` with reason `aborted` and `message`: the
    /// call was cut short by something other than the caller's signal,
    /// such as a timeout, and `message` says what.
    pub fn interrupt(&mut self, message: impl Into<String>, out: &mut Vec<ModelEvent>) {
        self.terminate(ErrorReason::Aborted, message.into(), out);
    }

    /// Ends the stream in `error` with `message`, unless it already ended.
    pub fn fail(&mut self, message: impl Into<String>, out: &mut Vec<ModelEvent>) {
        self.terminate(ErrorReason::Error, message.into(), out);
    }

    fn terminate(&mut self, reason: ErrorReason, text: String, out: &mut Vec<ModelEvent>) {
        if self.finished {
            return;
        }
        self.finished = true;
        let mut message = self.builder.to_error_message(reason.stop_reason(), text);
        match &self.open {
            Open::Tool {
                index,
                id,
                name,
                args,
            } => match parse_arguments(args) {
                Ok(arguments) if !is_json_blank(args) => {
                    if let Some(slot) = message.content.get_mut(*index) {
                        *slot = ContentBlock::ToolCall(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments,
                            ..ToolCall::default()
                        });
                    }
                }
                _ => message.content.truncate(*index),
            },
            Open::Thinking {
                index,
                signature: Some(signature),
            } => {
                if let Some(ContentBlock::Thinking(t)) = message.content.get_mut(*index) {
                    t.thinking_signature = Some(signature.clone());
                }
            }
            _ => {}
        }
        if self.usage_seen {
            message.usage = self.usage.clone();
            if let Some(pricing) = &self.pricing {
                pricing.apply(&mut message.usage);
            }
        }
        out.push(ModelEvent::error(reason, message));
    }
}
