//! [`OpenAiProjector`]: from `chat.completion.chunk` payloads to
//! [`ModelEvent`]s.
//!
//! The projector is a sans-IO state machine. It is given the `data` of each
//! SSE event ([`push_data`](OpenAiProjector::push_data)), told when the body
//! ends ([`finish`](OpenAiProjector::finish)) or the call is aborted
//! ([`abort`](OpenAiProjector::abort)), and appends the events of the full
//! protocol to a `Vec`: `start`, each block's `*_start`, `*_delta` and
//! `*_end`, then one `done` or `error`. Every sequence it produces passes
//! [`validate_events`](agentstream::model::validate_events).
//!
//! # Blocks
//!
//! - `start` is emitted with the first payload that is a chunk. A first
//!   payload that is an error gives a lone `error`.
//! - Reasoning comes from the first non-empty of `delta.reasoning_content`,
//!   `delta.reasoning` and `delta.reasoning_text` (servers that fill two of
//!   them with the same text are read once). The thinking block records the
//!   field's name as its `thinkingSignature`, as Pi does, and the
//!   [request builder](super::request) sends same-model thinking back in
//!   that field. Within one chunk, reasoning is taken before `content`, and
//!   `content` before `tool_calls`. Empty strings open nothing.
//! - At most one block is open at a time. A switch between text, thinking
//!   and tool call closes the open block (`*_end`) and opens a new one.
//!   *Differs from Pi:* Pi 0.73.1 keeps every block open until the stream
//!   ends and then emits all the `*_end` events, in block order (a text, a
//!   thinking and each tool call can be open at once, their deltas
//!   interleaved). Here each `*_end` comes before the next block's
//!   `*_start` and content indices never decrease, which the protocol
//!   checker requires and a consumer rendering blocks one after the other
//!   relies on; parallel calls are ordered as described under
//!   [Tool calls](#tool-calls). The final message is the same.
//! - The message's `model` is the requested one. When a chunk names
//!   another `model` (a router that picked a model, an alias resolved),
//!   the first such name is kept as `responseModel`, as Pi 0.73.1 does:
//!   in the `start` partial when it came with the first chunk, else in
//!   the final message.
//! - One choice is followed: the one with `index` 0 in a chunk (else its
//!   first), and once a chunk named the followed choice's `index`, chunks
//!   whose choice has another `index` are ignored (a server answering with
//!   `n` > 1 choices is not mixed into one message). A choice without an
//!   `index` is always read.
//! - `delta.role` is not read: a role chunk in the middle of the stream
//!   (some servers repeat it) changes nothing.
//!
//! # Tool calls
//!
//! - A fragment belongs to the call with the same `index`; without an
//!   `index`, to the call with the same non-empty `id`; otherwise to the
//!   latest call (a late `id` is adopted by the latest call that has none).
//!   Indices are keys, not positions: they may start at 1 or skip. A
//!   fragment whose non-empty `id` differs from its index's call's is
//!   another call on the same index (some servers send every parallel
//!   call on `index: 0`, told apart by id): the call with that id, or a
//!   new one, which then owns the index.
//! - An `id` or `name` is taken from the first fragment that has a
//!   non-empty one; repeats and `""` change nothing. A call without any id
//!   at its end gets `call_N` (N its position among the message's calls).
//! - **Ordering of parallel calls.** Calls take content indices in the
//!   order they first appear, and the protocol needs those indices to never
//!   decrease, so one call at a time is *live*: its fragments stream at once
//!   as `toolcall_delta`s carrying the raw fragment. Fragments of other
//!   calls are buffered. When a fragment of another call arrives and the
//!   live call's argument text is already a complete JSON value, the live
//!   call ends (`toolcall_end`) and the next call in order becomes live:
//!   its `toolcall_start` is followed by one `toolcall_delta` with all its
//!   buffered text. Calls that arrive one after another thus all stream
//!   live; interleaved calls stream the first one live and the others when
//!   their turn comes. A call opens only once it has a name (its text is
//!   buffered until then).
//! - Calls end at the end of the message (or when text or thinking
//!   follows), in order. A fragment with non-blank argument text for a call
//!   that already ended ends the stream in `error`; blank ones are ignored.
//! - `toolcall_end` carries the parsed arguments. An empty (or blank)
//!   argument text means `{}`, and a synthetic `{}` delta is emitted before
//!   the end so the deltas always add up to the arguments.
//! - **Unparsable arguments.** A call whose argument text is not a JSON
//!   object when it ends is never handed on: no `toolcall_end` is emitted
//!   and the stream ends in `error`, naming the call, the parse error and
//!   the start of the text. The call is left out of the error's message
//!   (its raw text is in its `toolcall_delta` events); a call without a
//!   name at the end is treated the same way. The exception is a call the
//!   provider cut off: see [Cut-off tool calls](#cut-off-tool-calls).
//!   *Differs from Pi:* Pi 0.73.1 parses every call's text leniently at
//!   the end, whatever the finish reason, and never fails on it.
//!
//! - Every lookup is by map (`index` and `id`) and the next call to open is
//!   a cursor, so a message with many calls costs linear time in its
//!   fragments (times a logarithm).
//!
//! # Limits
//!
//! A message with more content blocks or tool calls than its
//! [`Limits`](crate::limits::Limits)
//! allow, or a call whose argument text grows past
//! [`Limits::max_tool_argument_bytes`](crate::limits::Limits::max_tool_argument_bytes),
//! ends in `error` with the
//! [`LimitExceeded`](crate::limits::LimitExceeded) message, keeping what
//! came before.
//!
//! # End of the message
//!
//! - `finish_reason` may come on its own chunk, more than once (the first
//!   non-empty value counts) or not at all. The message ends at `[DONE]`,
//!   or at the end of input when a `finish_reason` was seen; payloads after
//!   `[DONE]` are ignored. A body that ends with neither ends in `error`:
//!   a truncated stream is never a silent success.
//! - `stop` and `end` give `stop`, `length` gives `length`, `tool_calls`
//!   and `function_call` give `toolUse`, and so does `stop` (or no reason
//!   at all) when the message has tool calls; `tool_calls` without any
//!   call gives `stop`. `content_filter` and any other value end in
//!   `error`, naming the value.
//! - With `finish_reason` `length`, every call still open at the end is
//!   completed leniently (below): the message ends in `done` with
//!   `length`, not in `error`.
//! - Usage is read from the top-level `usage` of any chunk (with or without
//!   `choices`) and from `choices[0].usage`; the last one with token counts
//!   wins and `{}` or `null` are skipped. Into [`Usage`]:
//!   cached prompt tokens become `cacheRead`, cache writes (OpenRouter's
//!   `prompt_tokens_details.cache_write_tokens`) `cacheWrite`, reasoning
//!   tokens are counted once in `output`, `totalTokens` is the provider's
//!   `total_tokens`, and costs are zero unless the stream has a
//!   [`Pricing`](crate::pricing::Pricing).
//!   *Differs from Pi:* Pi 0.73.1 takes `completion_tokens` alone (they
//!   include reasoning for OpenAI and most providers), which leaves out
//!   the reasoning of a provider that reports it beside them (xAI, whose
//!   total is prompt plus completion plus reasoning); Pi 0.58 added
//!   `reasoning_tokens` always, counting them twice for the others. Here
//!   they are added only when `total_tokens` shows they were left out, so
//!   `output` is the billed output count either way.
//! - Counts that are not plain integers: fractions round (halves up),
//!   negative counts are 0, counts past `u64::MAX` (even `1e400`, which
//!   serde_json cannot parse: such a number is rewritten before the chunk
//!   is read again) saturate at it. A usage field never loses the answer.
//!
//! # Cut-off tool calls
//!
//! When the output runs out inside a tool call (`finish_reason`
//! `length`), its argument text is the start of a JSON object. The message
//! ends in `done` with `length`, as Pi's does: text and completed calls are
//! kept, and each call that is still open is kept with its arguments
//! completed leniently (by the one lenient reader that every
//! projector shares): the shortest suffix that makes the text JSON goes
//! out as its last `toolcall_delta` before its `toolcall_end`, so the
//! deltas still add up to the arguments. An escape cut before its end (a
//! `\` or a `\u` with fewer than four digits) is dropped, and a high
//! surrogate half whose low half never came becomes U+FFFD. The agent
//! loop does not execute the calls of a `length` turn. A body that ends
//! with neither a `finish_reason` nor `[DONE]` is still an `error`.
//!
//! *Differs from Pi:* Pi's partial-json parse drops a member whose value
//! never started (`{"a":1,"b":` gives `{"a":1}`); the completion here
//! cannot take back what the deltas said, so it is `null` (`"":null`
//! after a trailing comma), and a number cut after `-`, `.` or `e` is
//! finished with `0` where Pi gives `{}`.
//!
//! # Lone surrogates
//!
//! One rule everywhere: a lone UTF-16 surrogate becomes U+FFFD, in the
//! text and reasoning (halves split across two chunks are joined), in the
//! chunk's `id` and `model`, in a tool call's `id` and `name`, and in the
//! argument text, where an escaped one (`\\ud800` in the chunk, so
//! `\ud800` in the JSON arguments) is rewritten as `\ufffd`, even when
//! the escape is cut between two fragments. See
//! [`surrogates`](crate::surrogates).
//!
//! # Errors and abort
//!
//! - A chunk with an `error` member, data that is not JSON, or JSON that is
//!   not a chunk ends in `error` with the provider's message (or the start
//!   of the data).
//! - [`abort`](OpenAiProjector::abort) ends in `error` with reason `aborted`
//!   and [`ABORTED_MESSAGE`](agentstream::model::ABORTED_MESSAGE).
//! - **Open blocks on error or abort get no `*_end`**: the terminal event
//!   follows the last delta. Its message holds everything received so far:
//!   ended blocks, the open text or thinking block with its text so far,
//!   and the open tool call only if its argument text is already a JSON
//!   object (otherwise it is left out, as above). Buffered calls that never
//!   opened are not included. Usage is included when known.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::calls::{Calls, QUOTE};
use super::wire::{clip, error_text, map_usage, trim_json, Choice, Chunk};
use crate::cause::Failure;
use crate::json::saturate_numbers;
use crate::surrogates::{mark_lone_surrogates, replace_markers, SurrogateJoiner};
use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};

use crate::error_body::BODY_QUOTE;
use crate::sse::{Fail, Frame, Projection, Projector, SseEvent};

/// The `api` of messages from an OpenAI-compatible Chat Completions
/// endpoint, as Pi names it.
pub const OPENAI_COMPLETIONS_API: &str = "openai-completions";

/// The block that is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Open {
    None,
    Text(usize),
    Thinking(usize),
    /// A tool call, by its position in `calls`.
    Tool(usize),
}

/// The projector: the shared [`Projector`] over the
/// [`OpenAiProjection`]. See the [module documentation](self) for every
/// rule.
///
/// ```
/// use agentstream_wire::openai::OpenAiProjector;
/// use agentstream::model::validate_events;
///
/// let mut projector = OpenAiProjector::new("gpt-4o", "openai");
/// let mut events = Vec::new();
/// projector.push_data(r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#, &mut events);
/// projector.push_data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, &mut events);
/// projector.push_data("[DONE]", &mut events);
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_start", "text_delta", "text_end", "done"]);
/// assert!(validate_events(&events).is_empty());
/// ```
pub type OpenAiProjector = Projector<OpenAiProjection>;

/// What the Chat Completions chunks say beyond the [`Frame`]: the open
/// block, the calls, the followed choice, the finish reason, the usage
/// and the served model. See the [module documentation](self).
#[derive(Debug)]
pub struct OpenAiProjection {
    pub(super) open: Open,
    pub(super) calls: Calls,
    /// How many content blocks have started.
    pub(super) blocks: usize,
    /// Joins surrogate halves split across the open block's deltas.
    pub(super) joiner: SurrogateJoiner,
    /// The payload being projected had lone surrogate escapes.
    pub(super) marked: bool,
    /// The `index` of the choice followed, once a chunk named one.
    choice_index: Option<u64>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// The requested model id, compared with the chunks' `model`.
    model: String,
    /// The first `model` of a chunk that differs from the requested one.
    response_model: Option<String>,
    /// The provider stopped for length: calls ended now complete their
    /// cut argument text (see [`cut_json`](crate::cut_json)).
    pub(super) cut: bool,
}

/// The message field that names the model that answered, when the chunks
/// name another one than the request (Pi's `responseModel`).
pub const RESPONSE_MODEL: &str = "responseModel";

impl Projection for OpenAiProjection {
    const API: &'static str = OPENAI_COMPLETIONS_API;

    fn for_header(header: &AssistantMessage) -> Self {
        Self {
            model: header.model.clone(),
            response_model: None,
            open: Open::None,
            calls: Calls::default(),
            blocks: 0,
            joiner: SurrogateJoiner::default(),
            marked: false,
            choice_index: None,
            finish_reason: None,
            usage: None,
            cut: false,
        }
    }

    /// One SSE event: a `message`'s data is a chunk (or `[DONE]`), an
    /// `error` ends the stream with the provider's message; other named
    /// events are skipped.
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        match event.event_type() {
            "message" => self.on_data(frame, &event.data, out),
            "error" => {
                let value = serde_json::from_str::<Value>(&event.data).ok();
                let message = match &value {
                    Some(value) => error_text(value.get("error").unwrap_or(value)),
                    None => clip(&event.data, BODY_QUOTE),
                };
                self.fail(frame, Failure::in_payload(message, value.as_ref()), out);
            }
            _ => {}
        }
    }

    /// The `data` of one SSE event: a chunk's JSON, or `[DONE]`.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        if trim_json(data) == "[DONE]" {
            self.end(frame, out);
            return;
        }
        // Lone UTF-16 surrogates (JavaScript writes them) would fail the
        // parse: they become markers that the deltas join or replace.
        let marked = mark_lone_surrogates(data);
        self.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(data);
        let parsed = serde_json::from_str::<Chunk<'_>>(data);
        if let Ok(chunk) = parsed {
            self.push_chunk(frame, chunk, out);
            return;
        }
        // A number too large for an `f64` (a usage count of `1e400`) fails
        // the parse: such numbers saturate (see
        // [Numbers](crate::json#numbers)).
        let saturated = saturate_numbers(data);
        let data = saturated.as_deref().unwrap_or(data);
        let parsed = match &saturated {
            Some(data) => serde_json::from_str::<Chunk<'_>>(data),
            None => parsed,
        };
        match parsed {
            Ok(chunk) => self.push_chunk(frame, chunk, out),
            Err(e) => {
                let message: String =
                    if serde_json::from_str::<serde::de::IgnoredAny>(data).is_err() {
                        format!(
                            "the provider sent data that is not JSON: {}",
                            clip(data, QUOTE)
                        )
                    } else {
                        format!(
                            "the provider sent JSON that is not a chat.completion.chunk ({e}): {}",
                            clip(data, QUOTE)
                        )
                    };
                self.fail(frame, message.into(), out);
            }
        }
    }

    /// Ends the input. Without `[DONE]` or a `finish_reason` so far, the
    /// stream was truncated and ends in `error`.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        if self.finish_reason.is_some() {
            self.end(frame, out);
        } else {
            let message =
                "the stream ended before [DONE] or a finish_reason: the response is truncated";
            self.fail(frame, String::from(message).into(), out);
        }
    }

    /// The open call's part of an `error`'s message, and its usage.
    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        if let Open::Tool(live) = self.open {
            self.calls.settle(live, &mut message.content);
        }
        self.settle_usage(frame, message);
    }
}

impl OpenAiProjection {
    fn push_chunk(&mut self, frame: &mut Frame, chunk: Chunk<'_>, out: &mut Vec<ModelEvent>) {
        if let Some(error) = &chunk.error {
            let message = error_text(error);
            let failure = Failure::reported(message, Some(error), chunk.code.as_ref());
            self.fail(frame, failure, out);
            return;
        }
        let unmark = |text: &str| replace_markers(text, self.marked).into_owned();
        // Every chunk names the model: compared borrowed, copied only
        // the once it is kept.
        if self.response_model.is_none() {
            let served = chunk.model.as_deref().filter(|m| !m.is_empty());
            let served = served.map(|m| replace_markers(m, self.marked));
            if served.as_deref().is_some_and(|m| m != self.model) {
                self.response_model = served.map(Cow::into_owned);
            }
        }
        if !frame.is_started() {
            let id = chunk.id.as_deref().filter(|id| !id.is_empty()).map(unmark);
            if id.is_some() || self.response_model.is_some() {
                let served = &self.response_model;
                frame.edit_header(|header| {
                    if let Some(id) = id {
                        header.extra.insert("responseId".into(), Value::String(id));
                    }
                    if let Some(served) = served {
                        header
                            .extra
                            .insert(RESPONSE_MODEL.into(), Value::String(served.clone()));
                    }
                });
            }
            frame.start(out);
        }
        if let Some(usage) = chunk.usage.as_ref().and_then(map_usage) {
            self.usage = Some(usage);
        }
        let choice = chunk.choices.and_then(|choices| choices.chosen);
        if let Some(choice) = choice.as_ref().filter(|c| self.follows(c.index)) {
            if let Err(failure) = self.push_choice(frame, choice, out) {
                self.fail(frame, failure, out);
            }
        }
    }

    /// Whether a choice with `index` is the one followed: the first index
    /// seen is; a choice without one always is.
    fn follows(&mut self, index: Option<u64>) -> bool {
        match (index, self.choice_index) {
            (None, _) => true,
            (Some(index), None) => {
                self.choice_index = Some(index);
                true
            }
            (Some(index), Some(followed)) => index == followed,
        }
    }

    fn push_choice(
        &mut self,
        frame: &mut Frame,
        choice: &Choice<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        if let Some(delta) = &choice.delta {
            if let Some((field, reasoning)) = delta.reasoning() {
                self.push_prose(frame, Some(field), reasoning, out)?;
            }
            if let Some(content) = delta.content.as_deref().filter(|c| !c.is_empty()) {
                self.push_prose(frame, None, content, out)?;
            }
            for fragment in delta.tool_calls.iter().flatten() {
                self.push_tool_fragment(frame, fragment, out)?;
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref().filter(|r| !r.is_empty()) {
            if self.finish_reason.is_none() {
                self.finish_reason = Some(reason.into());
            }
        }
        if let Some(usage) = choice.usage.as_ref().and_then(map_usage) {
            self.usage = Some(usage);
        }
        Ok(())
    }

    /// `[DONE]`, or the end of input after a `finish_reason`.
    fn end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        frame.start(out);
        let reason = match self.finish_reason.as_deref() {
            None | Some("stop" | "end" | "tool_calls" | "function_call") => None,
            Some("length") => Some(DoneReason::Length),
            Some(other) => {
                self.fail(frame, Failure::stop("finish_reason", other), out);
                return;
            }
        };
        self.cut = matches!(reason, Some(DoneReason::Length));
        if let Err(failure) = self.close_all(frame, out) {
            self.fail(frame, failure, out);
            return;
        }
        let reason = reason.unwrap_or(if self.calls.is_empty() {
            DoneReason::Stop
        } else {
            DoneReason::ToolUse
        });
        let mut message = frame.builder.snapshot().to_message();
        message.stop_reason = reason.stop_reason();
        self.settle_usage(frame, &mut message);
        frame.end_done(reason, message, out);
    }

    /// The final message's usage (with its cost) and a served model
    /// learned after `start`.
    fn settle_usage(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        if let Some(usage) = self.usage.take() {
            message.usage = usage;
        }
        frame.price(&mut message.usage);
        if let Some(served) = &self.response_model {
            if !message.extra.contains_key(RESPONSE_MODEL) {
                message
                    .extra
                    .insert(RESPONSE_MODEL.into(), Value::String(served.clone()));
            }
        }
    }
}
