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
//! - `message_start` gives `start`; its `id` becomes `responseId` (as Pi
//!   0.73.1 does), its `model` becomes `responseModel` when it differs
//!   from the requested one, and its usage is the starting usage.
//!   *Differs from Pi:* Pi 0.73.1 sets `responseModel` only for OpenAI
//!   Chat Completions; here both protocols record the model that served
//!   the call (an alias resolves to a dated id), by the same rule.
//!   Any other payload before `message_start` also starts the message (an
//!   `error` before it gives a lone `error`).
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
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::Value;

use agentstream::message::{
    assistant, AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall,
    Usage,
};
use agentstream::model::{DoneReason, ErrorReason, ModelEvent, PartialBuilder, ABORTED_MESSAGE};

use crate::pricing::Pricing;

use crate::json::{borrowed_str, clip, is_json_blank, parse_arguments};
use crate::limits::{Limit, LimitExceeded, Limits};
use crate::surrogates::{mark_lone_surrogates, SurrogateJoiner};

/// The `api` of messages from the Anthropic Messages API, as Pi names it.
pub const ANTHROPIC_MESSAGES_API: &str = "anthropic-messages";

/// How many characters of offending data an error message quotes.
const QUOTE: usize = 200;

/// The block that is open, by its content index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Open {
    None,
    Text(usize),
    Thinking {
        index: usize,
        signature: Option<String>,
    },
    Tool {
        index: usize,
        id: String,
        name: String,
        args: String,
    },
    /// A block of a type we do not know: its deltas are skipped.
    Skipped,
}

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
    builder: PartialBuilder,
    started: bool,
    finished: bool,
    open: Open,
    has_tool_calls: bool,
    stop_reason: Option<String>,
    usage: Usage,
    usage_seen: bool,
    /// Prices that fill the cost of the final usage.
    pricing: Option<Pricing>,
    limits: Limits,
    /// Content blocks and tool calls started so far, for the limits.
    blocks: usize,
    tool_calls: usize,
    /// Joins surrogate halves split across the open block's deltas.
    joiner: SurrogateJoiner,
    /// The payload being projected had lone surrogate escapes.
    marked: bool,
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

    fn exceeded(&self, limit: Limit) -> String {
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

    fn open_block(
        &mut self,
        block: Option<&Value>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let kind = block.and_then(|b| b.get("type")).and_then(Value::as_str);
        if matches!(
            kind,
            Some("text" | "thinking" | "redacted_thinking" | "tool_use")
        ) {
            if self.blocks >= self.limits.max_content_blocks {
                return Err(self.exceeded(Limit::ContentBlocks));
            }
            self.blocks += 1;
        }
        if kind == Some("tool_use") {
            if self.tool_calls >= self.limits.max_tool_calls {
                return Err(self.exceeded(Limit::ToolCalls));
            }
            self.tool_calls += 1;
        }
        let text_of = |name: &str| {
            block
                .and_then(|b| b.get(name))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        match kind {
            Some("text") => {
                let index = self.builder.start_text(TextContent::default());
                self.open = Open::Text(index);
                out.push(ModelEvent::TextStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let initial = text_of("text");
                if !initial.is_empty() {
                    self.append(index, initial, DeltaKind::Text, out);
                }
            }
            Some("thinking") => {
                let index = self.builder.start_thinking(ThinkingContent::default());
                let signature = Some(text_of("signature"))
                    .filter(|s| !s.is_empty())
                    .map(String::from);
                self.open = Open::Thinking { index, signature };
                out.push(ModelEvent::ThinkingStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let initial = text_of("thinking");
                if !initial.is_empty() {
                    self.append(index, initial, DeltaKind::Thinking, out);
                }
            }
            Some("redacted_thinking") => {
                let index = self.builder.start_thinking(ThinkingContent::default());
                out.push(ModelEvent::ThinkingStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let block = ThinkingContent {
                    thinking_signature: Some(text_of("data").into()),
                    redacted: Some(true),
                    ..ThinkingContent::default()
                };
                self.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: String::new(),
                    partial: self.builder.snapshot(),
                });
            }
            Some("tool_use") => {
                let id = String::from(text_of("id"));
                let name = String::from(text_of("name"));
                let index = self.builder.start_tool_call(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    ..ToolCall::default()
                });
                self.has_tool_calls = true;
                self.open = Open::Tool {
                    index,
                    id,
                    name,
                    args: String::new(),
                };
                out.push(ModelEvent::ToolCallStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
            }
            _ => self.open = Open::Skipped,
        }
        Ok(())
    }

    fn push_delta(&mut self, delta: &Delta<'_>, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        let max_arguments = self.limits.max_tool_argument_bytes;
        let kind = delta.kind.as_deref();
        let field = |name: &str| {
            let value = match name {
                "text" => &delta.text,
                "thinking" => &delta.thinking,
                "signature" => &delta.signature,
                _ => &delta.partial_json,
            };
            value.as_deref().unwrap_or("")
        };
        match (&mut self.open, kind) {
            (Open::Text(index), Some("text_delta")) => {
                let index = *index;
                let text = field("text");
                if !text.is_empty() {
                    self.append(index, text, DeltaKind::Text, out);
                }
            }
            (Open::Thinking { index, .. }, Some("thinking_delta")) => {
                let index = *index;
                let text = field("thinking");
                if !text.is_empty() {
                    self.append(index, text, DeltaKind::Thinking, out);
                }
            }
            (Open::Thinking { signature, .. }, Some("signature_delta")) => {
                let part = field("signature");
                match signature {
                    Some(s) => s.push_str(part),
                    None => *signature = Some(part.into()),
                }
            }
            (Open::Tool { index, args, .. }, Some("input_json_delta")) => {
                let index = *index;
                let part = field("partial_json");
                if args.len().saturating_add(part.len()) > max_arguments {
                    return Err(self.exceeded(Limit::ToolArgumentBytes));
                }
                if !part.is_empty() {
                    args.push_str(part);
                    self.append(index, part, DeltaKind::Tool, out);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn append(&mut self, index: usize, text: &str, kind: DeltaKind, out: &mut Vec<ModelEvent>) {
        let joined = match kind {
            DeltaKind::Text | DeltaKind::Thinking => self.joiner.join(text, self.marked),
            DeltaKind::Tool => None,
        };
        let text = joined.as_deref().unwrap_or(text);
        if text.is_empty() {
            return;
        }
        self.push_delta_event(index, text, kind, out);
    }

    /// A surrogate half held back at the end of text or thinking block
    /// `index` becomes a last U+FFFD delta.
    fn flush_surrogate(&mut self, index: usize, kind: DeltaKind, out: &mut Vec<ModelEvent>) {
        if let Some(replacement) = self.joiner.finish() {
            let mut buf = [0; 4];
            self.push_delta_event(index, replacement.encode_utf8(&mut buf), kind, out);
        }
    }

    fn push_delta_event(
        &mut self,
        index: usize,
        text: &str,
        kind: DeltaKind,
        out: &mut Vec<ModelEvent>,
    ) {
        let delta: Arc<str> = Arc::from(text);
        self.builder.append(index, delta.clone());
        let partial = self.builder.snapshot();
        out.push(match kind {
            DeltaKind::Text => ModelEvent::TextDelta {
                content_index: index,
                delta,
                partial,
            },
            DeltaKind::Thinking => ModelEvent::ThinkingDelta {
                content_index: index,
                delta,
                partial,
            },
            DeltaKind::Tool => ModelEvent::ToolCallDelta {
                content_index: index,
                delta,
                partial,
            },
        });
    }

    fn block_text(&self, index: usize) -> String {
        match self.builder.snapshot().content_block(index) {
            Some(ContentBlock::Text(t)) => t.text,
            Some(ContentBlock::Thinking(t)) => t.thinking,
            _ => String::new(),
        }
    }

    /// Ends the open block, if any.
    fn close(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        match core::mem::replace(&mut self.open, Open::None) {
            Open::None | Open::Skipped => Ok(()),
            Open::Text(index) => {
                self.flush_surrogate(index, DeltaKind::Text, out);
                let content = self.block_text(index);
                out.push(ModelEvent::TextEnd {
                    content_index: index,
                    content,
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
            Open::Thinking { index, signature } => {
                self.flush_surrogate(index, DeltaKind::Thinking, out);
                let thinking = self.block_text(index);
                let block = ThinkingContent {
                    thinking: thinking.clone(),
                    thinking_signature: signature,
                    ..ThinkingContent::default()
                };
                self.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: thinking,
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
            Open::Tool {
                index,
                id,
                name,
                args,
            } => {
                let arguments = match parse_arguments(&args) {
                    Ok(arguments) => arguments,
                    Err(e) => {
                        let message = format!(
                            "the arguments of tool call \"{id}\" ({name}) are not a JSON object: {e}; received: {}",
                            clip(&args, QUOTE)
                        );
                        // Kept open so the error leaves the call out.
                        self.open = Open::Tool {
                            index,
                            id,
                            name,
                            args,
                        };
                        return Err(message);
                    }
                };
                if is_json_blank(&args) {
                    self.append(index, "{}", DeltaKind::Tool, out);
                }
                let tool_call = ToolCall {
                    id,
                    name,
                    arguments,
                    ..ToolCall::default()
                };
                self.builder
                    .complete(index, ContentBlock::ToolCall(tool_call.clone()));
                out.push(ModelEvent::ToolCallEnd {
                    content_index: index,
                    tool_call: Box::new(tool_call),
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
        }
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

/// One event payload: the fields the projector reads. Deltas are typed and
/// borrow their text; the rare events keep their parts as `Value`s.
#[derive(Debug, Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    content_block: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// A `delta`: of a content block (`type` and its text field) or of the
/// message (`stop_reason`).
#[derive(Debug, Default, Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed_str")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    stop_reason: Option<Cow<'a, str>>,
}

impl<'a> Payload<'a> {
    /// The lenient reading of a payload whose fields have unexpected
    /// types: a field that is not what it should be counts as absent.
    /// `None` when it is not an object with a string `type`.
    fn from_value(value: &'a Value) -> Option<Self> {
        let kind = value.get("type")?.as_str()?;
        let string = |v: Option<&'a Value>, name: &str| {
            v.and_then(|v| v.get(name))
                .and_then(Value::as_str)
                .map(Cow::Borrowed)
        };
        let delta = value.get("delta").filter(|d| d.is_object());
        let object = |name: &str| value.get(name).filter(|v| v.is_object()).cloned();
        Some(Self {
            kind: Cow::Borrowed(kind),
            delta: delta.map(|_| Delta {
                kind: string(delta, "type"),
                text: string(delta, "text"),
                thinking: string(delta, "thinking"),
                partial_json: string(delta, "partial_json"),
                signature: string(delta, "signature"),
                stop_reason: string(delta, "stop_reason"),
            }),
            message: object("message"),
            content_block: object("content_block"),
            usage: object("usage"),
            error: object("error"),
        })
    }
}

/// The delta types the quick path reads, with their text field.
const QUICK_DELTAS: [(&str, &str); 4] = [
    ("text_delta", "text"),
    ("thinking_delta", "thinking"),
    ("input_json_delta", "partial_json"),
    ("signature_delta", "signature"),
];

/// A content block delta in the exact shape Anthropic writes,
/// `{"type":"content_block_delta","index":N,"delta":{"type":KIND,FIELD:TEXT}}`
/// with no whitespace, read without serde; `None` for anything else (the
/// general path then reads it, errors included). Gives what the typed parse
/// would: the delta type and its one text field. A text with a `\u` escape
/// is left to the general path (it may hold a lone surrogate); other
/// escapes are decoded by serde_json on the string alone.
fn quick_delta(data: &str) -> Option<Delta<'_>> {
    let rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // A JSON number: no leading zero unless it is `0` itself.
    if digits == 0 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
    let (kind, field, rest) = QUICK_DELTAS.iter().find_map(|&(kind, field)| {
        let rest = rest
            .strip_prefix(kind)?
            .strip_prefix(r#"",""#)?
            .strip_prefix(field)?
            .strip_prefix(r#"":""#)?;
        Some((kind, field, rest))
    })?;
    // `rest` is the text's content, its closing quote and `}}`.
    let content = rest.strip_suffix(r#""}}"#)?;
    // The text with its quotes.
    let quoted = &data[data.len() - rest.len() - 1..data.len() - 2];
    let plain = content
        .bytes()
        .all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    let text = if plain {
        Cow::Borrowed(content)
    } else if content.contains("\\u") || content.bytes().any(|b| b < 0x20) {
        return None;
    } else {
        // Escapes: serde_json decodes the quoted string, and refuses one
        // that ends early (an unescaped quote inside).
        Cow::Owned(serde_json::from_str::<String>(quoted).ok()?)
    };
    let mut delta = Delta {
        kind: Some(Cow::Borrowed(kind)),
        ..Delta::default()
    };
    let slot = match field {
        "text" => &mut delta.text,
        "thinking" => &mut delta.thinking,
        "partial_json" => &mut delta.partial_json,
        _ => &mut delta.signature,
    };
    *slot = Some(text);
    Some(delta)
}

/// Which delta event an appended fragment produces.
#[derive(Debug, Clone, Copy)]
enum DeltaKind {
    Text,
    Thinking,
    Tool,
}

/// The message of an `error` event's `error` member.
fn error_text(error: Option<&Value>) -> String {
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the provider sent an error event");
    format!("{kind}: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed parse's reading of a delta, as the quick path gives it.
    fn typed(data: &str) -> Option<(Option<String>, [Option<String>; 4])> {
        let payload = serde_json::from_str::<Payload<'_>>(data).ok()?;
        (payload.kind == "content_block_delta").then_some(())?;
        Some(fields(&payload.delta?))
    }

    fn fields(delta: &Delta<'_>) -> (Option<String>, [Option<String>; 4]) {
        let own = |v: &Option<Cow<'_, str>>| v.as_deref().map(String::from);
        (
            own(&delta.kind),
            [
                own(&delta.text),
                own(&delta.thinking),
                own(&delta.partial_json),
                own(&delta.signature),
            ],
        )
    }

    #[test]
    fn the_quick_delta_path_reads_what_the_typed_parse_reads_or_declines() {
        let cases = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"naïve → 🙂"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb \"q\" \\ \/ \t"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","x":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\","x":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tab	raw"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\q"}}"#,
            r#"{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} "#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}"#,
            r#"{"type": "content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}"#,
        ];
        let mut quick = 0;
        for data in cases {
            if let Some(delta) = quick_delta(data) {
                quick += 1;
                assert_eq!(Some(fields(&delta)), typed(data), "{data}");
            }
        }
        // Declined: `\u` escapes, a quote or backslash that ends the text
        // early, raw control characters, bad numbers, anything around the
        // object, other shapes.
        assert_eq!(quick, 7);
    }

    #[test]
    fn the_quick_delta_path_agrees_with_the_typed_parse_on_mangled_texts() {
        let pieces = [
            "a", "é", "🙂", "\"", "\\", "\\n", "\\\"", "\\u00e9", "\\ud83d", "}", "}}", "\"}}",
            "\t", "\u{1}", "0", ",", ":", " ",
        ];
        let heads = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""#,
            r#"{"type":"content_block_delta","index":7,"delta":{"type":"input_json_delta","partial_json":""#,
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut quick = 0;
        for round in 0..20_000 {
            let mut data = String::from(heads[round % heads.len()]);
            for _ in 0..next() % 6 {
                data.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            if next() % 4 != 0 {
                data.push_str("\"}}");
            }
            if let Some(delta) = quick_delta(&data) {
                quick += 1;
                assert_eq!(Some(fields(&delta)), typed(&data), "{data}");
            }
        }
        assert!(quick > 1_000, "{quick}");
    }
}
