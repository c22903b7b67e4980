//! [`AnthropicProjector`]: from Anthropic Messages stream payloads to
//! [`ModelEvent`]s.
//!
//! The projector is a sans-IO state machine, like the OpenAI
//! [`OpenAiProjector`](crate::openai::OpenAiProjector). It is given the
//! `data` of each SSE event ([`push_data`](AnthropicProjector::push_data); the
//! payload's own `type` names the event, so the SSE `event:` line is not
//! needed), told when the body ends ([`finish`](AnthropicProjector::finish)) or
//! the call is aborted ([`abort`](AnthropicProjector::abort)), and appends the
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
//! - **Protocol violations** end the stream in `error` naming them: a
//!   second `message_start` (two messages are never glued into one), and a
//!   `content_block_*`, `message_delta` or `message_stop` before
//!   `message_start` (a lone `error`, so a stream that is only
//!   `message_stop` is not an empty success). An `error` event before it
//!   also gives a lone `error`; `ping` and unknown event types are ignored
//!   wherever they come.
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
//!   up), must be a JSON object, or the stream ends in `error` (see
//!   [Cut-off tool calls](#cut-off-tool-calls) for the one exception).
//! - **Routing by `index`.** Every delta and stop goes to the block its
//!   `index` names. A delta or stop for an index that is not open, a
//!   `content_block_start` for an index that is open, and a known delta
//!   type on a block of another kind (`text_delta` on a `tool_use` block,
//!   `input_json_delta` on a text block, `thinking_delta` or
//!   `signature_delta` outside a thinking block) end the stream in `error`
//!   naming the index and the kinds. A delta or stop without a numeric
//!   `index` goes to the live block (below), and is an error when there is
//!   none. An index may be reused once its block stopped.
//! - Blocks open at once each keep their own deltas. The event protocol
//!   needs content indices that never decrease, so one block at a time is
//!   *live* and streams; a block started while another is open waits (its
//!   deltas kept), and when the blocks before it end it goes out whole: its
//!   `*_start`, one delta with what it received, and its `*_end` if it
//!   already stopped. Content indices follow that order. `message_stop`
//!   with blocks still open ends them in order.
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
//! - `message_delta`'s `stop_details` (`{"type": "refusal", "category",
//!   "explanation"}`, either may be `null`) is kept in that error: the
//!   message reads `the provider ended the response with stop_reason
//!   "refusal" (category "cyber"): EXPLANATION`, each part only when it
//!   is a non-empty string. *Differs from Pi:* Pi 0.73.1 throws "An
//!   unknown error occurred" for a refusal, which loses both.
//! - A body that ends without `message_stop` ends in `error` (truncated,
//!   naming the stop reason if one came), even after `max_tokens`:
//!   Anthropic always sends `message_stop`, and so does Pi.
//!
//! # Cut-off tool calls
//!
//! When the output runs out inside a tool call, its argument text is the
//! start of a JSON object. With `stop_reason` `max_tokens` the message
//! still ends in `done` with `length`, as Pi's does: text and completed
//! calls are kept, and the cut call is kept with its arguments completed
//! leniently (by the one lenient reader that every projector shares):
//! the shortest suffix that makes the text JSON goes out as its
//! last `toolcall_delta`, then its `toolcall_end`, so the deltas still add
//! up to the arguments. An escape cut before its end (a `\` or a `\u`
//! with fewer than four digits) is dropped, and a high surrogate half
//! whose low half never came becomes U+FFFD. The agent loop does not
//! execute the calls of a `length` turn.
//!
//! - The call may be cut with or without its `content_block_stop`. A
//!   stopped call whose text is not JSON waits for the stop reason: any
//!   other content event after it, another stop reason, or none, ends the
//!   stream in `error` naming the call, as before.
//! - *Differs from Pi:* Pi's partial-json parse drops a member whose value
//!   never started (`{"a":1,"b":` gives `{"a":1}`); the completion here
//!   cannot take back what the deltas said, so it is `null` (`"":null`
//!   after a trailing comma), and a number cut after `-`, `.` or `e` is
//!   finished with `0` where Pi gives `{}`. Pi sends no `toolcall_end` for a
//!   call cut without `content_block_stop` and leaves its scratch fields
//!   (`partialJson`, `index`) on the final message.
//! - Usage: `input_tokens` → `input`, `output_tokens` → `output`,
//!   `cache_read_input_tokens` → `cacheRead`,
//!   `cache_creation_input_tokens` → `cacheWrite`, and `totalTokens` is
//!   their sum, as Pi computes it. Costs are zero unless the projector has
//!   a [`Pricing`](crate::pricing::Pricing) ([`set_pricing`](AnthropicProjector::set_pricing)).
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
//! - The same rule holds outside the text: a lone surrogate in the
//!   message `id`, the `model`, a tool call's `id` or `name`, or a
//!   signature becomes U+FFFD, and so does an escaped one inside a tool
//!   call's argument JSON (`\\ud800` in `partial_json`), even when the
//!   escape is cut between two deltas.
//! - Usage counts that are not plain integers: fractions round (halves
//!   up), negative counts are 0, counts past `u64::MAX` (even `1e400`, which serde_json
//!   cannot parse) saturate at it; a usage field never loses the answer.
//! - On error or abort, open blocks get no `*_end`; the live text or
//!   thinking block keeps its text so far, and a live tool call is kept
//!   only if its argument text is already a JSON object. Waiting blocks
//!   are left out.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};

use crate::sse::{Fail, Frame, Projection, Projector, SseEvent};

use super::blocks::Blocks;
use super::payload::{error_text, quick_delta, Payload, QUOTE};
use crate::cause::Failure;
use crate::json::{clip, count, saturate_numbers};
use crate::surrogates::{mark_lone_surrogates, replace_markers};

/// The `api` of messages from the Anthropic Messages API, as Pi names it.
pub const ANTHROPIC_MESSAGES_API: &str = "anthropic-messages";

/// The projector: the shared [`Projector`] over the
/// [`AnthropicProjection`]. See the [module documentation](self) for
/// every rule.
///
/// ```
/// use agentstream_wire::anthropic::AnthropicProjector;
/// use agentstream::model::validate_events;
///
/// let mut projector = AnthropicProjector::new("claude-sonnet-4-5", "anthropic");
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
pub type AnthropicProjector = Projector<AnthropicProjection>;

/// What the Messages stream events say beyond the [`Frame`]: the blocks
/// (a front-end feeding the frame), the stop reason and its details, the
/// usage. See the [module documentation](self).
#[derive(Debug)]
pub struct AnthropicProjection {
    blocks: Blocks,
    stop_reason: Option<String>,
    usage: Usage,
    usage_seen: bool,
    /// The payload being projected had lone surrogate escapes.
    marked: bool,
    /// What `stop_details` says (a refusal's category and explanation),
    /// as the end of the error message.
    stop_details: Option<String>,
}

impl Projection for AnthropicProjection {
    const API: &'static str = ANTHROPIC_MESSAGES_API;

    fn for_header(_header: &AssistantMessage) -> Self {
        Self {
            blocks: Blocks::default(),
            stop_reason: None,
            usage: Usage::default(),
            usage_seen: false,
            marked: false,
            stop_details: None,
        }
    }

    /// One SSE event: its data, whatever its `event:` name (the payload's
    /// `type` names it).
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.on_data(frame, &event.data, out);
    }

    /// The `data` of one SSE event: one event payload's JSON.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        // Most of a stream is content block deltas in one exact shape: read
        // those without serde (the text is borrowed, and a text without
        // `\u` escapes has no lone surrogate to mark).
        if let Some((index, delta)) = quick_delta(data) {
            self.marked = false;
            let payload = Payload {
                kind: Cow::Borrowed("content_block_delta"),
                index: Some(index),
                delta: Some(delta),
                message: None,
                content_block: None,
                usage: None,
                error: None,
            };
            if let Err(failure) = self.push_event(frame, &payload, out) {
                self.fail(frame, failure, out);
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
            if let Err(failure) = self.push_event(frame, &payload, out) {
                self.fail(frame, failure, out);
            }
            return;
        }
        // A number too large for an `f64` (a usage count of `1e400`) fails
        // every parse: such numbers saturate (see
        // [Numbers](crate::json#numbers)).
        let saturated = saturate_numbers(data);
        let data = saturated.as_deref().unwrap_or(data);
        let value = match serde_json::from_str::<Value>(data) {
            Ok(value) => value,
            Err(_) => {
                let message = format!(
                    "the provider sent data that is not JSON: {}",
                    clip(data, QUOTE)
                );
                self.fail(frame, message.into(), out);
                return;
            }
        };
        let Some(payload) = Payload::from_value(&value) else {
            let message = format!(
                "the provider sent JSON that is not a Messages stream event: {}",
                clip(data, QUOTE)
            );
            self.fail(frame, message.into(), out);
            return;
        };
        if let Err(failure) = self.push_event(frame, &payload, out) {
            self.fail(frame, failure, out);
        }
    }

    /// The end of the body. Without `message_stop` the response is
    /// truncated and ends in `error`.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        let message = match &self.stop_reason {
            Some(reason) => format!(
                "the stream ended before message_stop (after stop_reason \"{}\"): the response is truncated",
                clip(reason, QUOTE)
            ),
            None => "the stream ended before message_stop: the response is truncated".into(),
        };
        self.fail(frame, message.into(), out);
    }

    /// The open block's part of an `error`'s message, and its usage.
    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.blocks.settle_live(&mut message.content);
        self.settle_usage(frame, message);
    }
}

impl AnthropicProjection {
    fn push_event(
        &mut self,
        frame: &mut Frame,
        payload: &Payload<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let kind = &*payload.kind;
        match kind {
            "ping" => return Ok(()),
            "error" => {
                let message = error_text(payload.error.as_ref());
                return Err(match payload.error.as_ref() {
                    Some(error) => Failure::reported(message, Some(error), None),
                    // An error event without its `error`: its type is the code.
                    None => Failure::provider(message, Some("error".into())),
                });
            }
            "message_start" if frame.is_started() => {
                return Err(String::from("the provider sent a second message_start").into())
            }
            "message_start" => {
                self.start(frame, payload.message.as_ref(), out);
                return Ok(());
            }
            "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
                if !frame.is_started() =>
            {
                return Err(format!("the provider sent {kind} before message_start").into());
            }
            "content_block_start" | "content_block_delta" | "content_block_stop"
                if self.blocks.take_cut_candidate() =>
            {
                // More content after a tool call that stopped unparsable:
                // it was not cut off, and its end fails as usual.
                self.blocks.end_live(frame, out)?;
            }
            _ => {}
        }
        match kind {
            "content_block_start" => {
                let block = payload.content_block.as_ref();
                (self.blocks).open_block(frame, self.marked, payload.index, block, out)
            }
            "content_block_delta" => match &payload.delta {
                Some(delta) => {
                    (self.blocks).push_delta(frame, self.marked, payload.index, delta, out)
                }
                None => Ok(()),
            },
            "content_block_stop" => self.blocks.stop_block(frame, payload.index, out),
            "message_delta" => {
                if let Some(reason) = payload
                    .delta
                    .as_ref()
                    .and_then(|d| d.stop_reason.as_deref())
                {
                    self.stop_reason = Some(reason.into());
                }
                if let Some(details) = payload
                    .delta
                    .as_ref()
                    .and_then(|d| d.stop_details.as_ref())
                    .filter(|d| d.is_object())
                {
                    self.stop_details = Some(stop_details_text(details, self.marked));
                }
                if let Some(usage) = &payload.usage {
                    self.merge_usage(usage);
                }
                Ok(())
            }
            "message_stop" => self.end(frame, out),
            _ => Ok(()),
        }
    }

    /// `message_start`: the message's id, served model and first usage,
    /// then `start`.
    fn start(&mut self, frame: &mut Frame, message: Option<&Value>, out: &mut Vec<ModelEvent>) {
        let marked = self.marked;
        let string = |name: &str| {
            message
                .and_then(|m| m.get(name))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| replace_markers(s, marked).into_owned())
        };
        frame.edit_header(|header| {
            if let Some(id) = string("id") {
                header.extra.insert("responseId".into(), Value::String(id));
            }
            if let Some(served) = string("model").filter(|served| *served != header.model) {
                header
                    .extra
                    .insert("responseModel".into(), Value::String(served));
            }
        });
        if let Some(usage) = message.and_then(|m| m.get("usage")) {
            self.merge_usage(usage);
        }
        frame.start(out);
    }

    fn merge_usage(&mut self, usage: &Value) {
        let fields: [(&str, &mut u64); 4] = [
            ("input_tokens", &mut self.usage.input),
            ("output_tokens", &mut self.usage.output),
            ("cache_read_input_tokens", &mut self.usage.cache_read),
            ("cache_creation_input_tokens", &mut self.usage.cache_write),
        ];
        for (name, slot) in fields {
            if let Some(n) = count(usage.get(name)) {
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

    fn end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        let reason = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence" | "pause_turn") => Some(DoneReason::Stop),
            Some("max_tokens") => Some(DoneReason::Length),
            Some("tool_use") => Some(DoneReason::ToolUse),
            None => None,
            Some(other) => {
                let mut failure = Failure::stop("stop_reason", other);
                failure
                    .message
                    .push_str(self.stop_details.as_deref().unwrap_or(""));
                return Err(failure);
            }
        };
        self.blocks
            .set_cut(matches!(reason, Some(DoneReason::Length)));
        self.blocks.close_all(frame, out)?;
        let reason = reason.unwrap_or(if self.blocks.has_tool_calls() {
            DoneReason::ToolUse
        } else {
            DoneReason::Stop
        });
        let mut message = frame.builder.snapshot().to_message();
        message.stop_reason = reason.stop_reason();
        self.settle_usage(frame, &mut message);
        frame.end_done(reason, message, out);
        Ok(())
    }

    /// The final message's usage, with its cost, once the provider sent
    /// any.
    fn settle_usage(&self, frame: &Frame, message: &mut AssistantMessage) {
        if self.usage_seen {
            message.usage = self.usage.clone();
            frame.price(&mut message.usage);
        }
    }
}

/// How many characters of a refusal's explanation an error message keeps
/// (Anthropic's are one sentence).
const EXPLANATION: usize = 1000;

/// The end of an error message for a stop reason with `stop_details`:
/// ` (category "C"): EXPLANATION`, each part only when the provider sent
/// it as a non-empty string.
fn stop_details_text(details: &Value, marked: bool) -> String {
    let field = |name: &str| {
        details
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(|s| replace_markers(s, marked))
    };
    let mut text = String::new();
    if let Some(category) = field("category") {
        text.push_str(&format!(" (category \"{}\")", clip(&category, QUOTE)));
    }
    if let Some(explanation) = field("explanation") {
        text.push_str(": ");
        text.push_str(&clip(&explanation, EXPLANATION));
    }
    text
}
