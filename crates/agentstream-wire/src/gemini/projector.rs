//! [`GeminiProjector`]: from Gemini `streamGenerateContent` payloads
//! (`GenerateContentResponse`s, one per SSE `data:`) to [`ModelEvent`]s.
//!
//! A sans-IO state machine with the methods of the other projectors
//! ([`AnthropicProjector`](crate::anthropic::AnthropicProjector)). Every sequence
//! it produces passes
//! [`validate_events`](agentstream::model::validate_events).
//!
//! # Parts
//!
//! Only `candidates[0]` is read; its `content.parts` in order:
//!
//! - A `text` part streams into a text block, a `text` part with
//!   `thought: true` into a thinking block; a part of the other kind closes
//!   the open block and opens a new one. An empty text part opens nothing
//!   unless it carries a signature.
//! - A `thoughtSignature` on a text or thought part becomes the block's
//!   `textSignature` / `thinkingSignature` (the last non-empty one of the
//!   block, as Pi keeps it); on a `functionCall` part, the call's
//!   `thoughtSignature` (one `agentstream serve` wrapped in base64 read
//!   back as the text it wrapped, see [`signature`](super::signature)).
//!   The [request builder](super::request) sends each back on its part.
//! - A `functionCall` part with a `name` is a tool call: with its whole
//!   `args` (none meaning `{}`), `toolcall_start`, one delta with the
//!   arguments' JSON text and `toolcall_end`. With `willContinue: true` it
//!   is a Gemini 3 streamed call: the `partialArgs` entries of the
//!   following `functionCall` parts without a name (each a `jsonPath` such
//!   as `$.a.b[0]` and one of `stringValue`, `numberValue`, `boolValue`,
//!   `nullValue`, `structValue`, `listValue`; a string whose entry had
//!   `willContinue: true` goes on in the next entry for the same path) are
//!   assembled into the arguments, and the first such part without
//!   `willContinue: true` ends the call, which then sends its assembled
//!   arguments as one delta. A call never ended this way is ended by the
//!   next part of another kind or by the end of the response.
//! - Tool-call ids: the `functionCall.id` when Gemini sends one not used
//!   before in the message; otherwise `NAME_RESPONSEID_N` (`NAME_N`
//!   without a `responseId`), N counting the message's calls from 1, so a
//!   replayed stream gives the same ids.
//! - Other parts (`inlineData`, `executableCode`, …) are skipped.
//!
//! # End of the response
//!
//! Gemini has no end event: the body ends. Then the last `finishReason`
//! decides: `STOP` gives `stop`, or `toolUse` when the message has tool
//! calls; `MAX_TOKENS` gives `length` (a streamed call cut off is kept
//! with the arguments assembled so far); any other reason (`SAFETY`,
//! `RECITATION`, `PROHIBITED_CONTENT`, `MALFORMED_FUNCTION_CALL`, …) ends
//! in `error` naming it, with the candidate's `finishMessage` when there is
//! one. A body without any `finishReason` ends in `error` (truncated). A
//! payload with `promptFeedback.blockReason` ends in `error` at once,
//! naming the reason (and `blockReasonMessage`). A payload with an `error`
//! member (an error after HTTP 200) ends in `error` with its status and
//! message. [`error_cause`](GeminiProjector::error_cause) keeps the
//! reason or the error's code.
//!
//! # Hostile input
//!
//! Unknown fields and part types are ignored. Data that is not JSON, or a
//! payload whose known fields have the wrong types, ends in `error`
//! quoting it. Lone UTF-16 surrogate escapes are accepted as in the other
//! projectors. A `jsonPath` this client cannot read, that crosses a value
//! of another shape, skips an array index or has more than 64 steps ends
//! in `error`, and so do arguments that would nest deeper than 127 levels
//! of arrays and objects (more than a JSON parser reads back); the
//! assembled arguments count against
//! `max_tool_argument_bytes`. On error or abort the open block keeps its
//! text so far (an open streamed call is left out).
//!
//! # Usage
//!
//! Usage (`usageMetadata`, cumulative: each payload with a count replaces
//! the known usage): `input` is `promptTokenCount` less
//! `cachedContentTokenCount`, which is `cacheRead`; `output` is
//! `candidatesTokenCount` **plus** `thoughtsTokenCount` (Gemini counts
//! thoughts outside the candidates; Pi adds them, since they are billed as
//! output); `totalTokens` is `totalTokenCount`, or the sum when that is
//! missing or smaller. The first `responseId` is the message's
//! `responseId`.
//!
//! # Where this differs from Pi
//!
//! - Pi does not know `willContinue`/`partialArgs`: it makes every piece of
//!   a streamed call a call of its own with empty arguments.
//! - Pi's ids carry the clock (`NAME_TIMESTAMP_COUNTER`); these are
//!   deterministic.
//! - Pi opens a text block for an empty text part; Pi ends a
//!   `MAX_TOKENS` or safety stop with tool calls as `toolUse`, a blocked
//!   prompt and a body without `finishReason` as `done` with `stop`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};

use crate::cause::Failure;

use crate::event_writer::{read_payload, EventWriter, Kind};
use crate::json::clip;
use crate::limits::Limit;
use crate::sse::{Fail, Frame, Projection, Projector, SseEvent};
use crate::surrogates::mark_lone_surrogates;

use super::partial_args::{nesting, parse_path, slot_at, unmark_value};
use super::payload::{Chunk, FunctionCall, Part, PartialArg, UsageMetadata};

/// The `api` of messages from the Gemini API, as Pi names it.
pub const GEMINI_API: &str = "google-generative-ai";

/// The `api` of messages from Gemini on Vertex AI, as Pi's
/// `google-vertex` provider names it.
pub const GEMINI_VERTEX_API: &str = "google-vertex";

/// Which of Google's two APIs serves Gemini: the `api` its messages
/// record and the one a request checks for "the same model" (see
/// [`transform`](agentstream::message::transform)). The wire format is the
/// same.
///
/// ```
/// use agentstream_wire::gemini::GeminiApi;
///
/// assert_eq!(GeminiApi::GenerativeAi.name(), "google-generative-ai");
/// assert_eq!(GeminiApi::Vertex.name(), "google-vertex");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeminiApi {
    /// The Gemini API ([`GEMINI_API`]).
    #[default]
    GenerativeAi,
    /// Vertex AI ([`GEMINI_VERTEX_API`]).
    Vertex,
}

impl GeminiApi {
    /// The `api` name Pi records: [`GEMINI_API`] or [`GEMINI_VERTEX_API`].
    pub fn name(self) -> &'static str {
        match self {
            Self::GenerativeAi => GEMINI_API,
            Self::Vertex => GEMINI_VERTEX_API,
        }
    }
}

/// How many characters of offending data an error message quotes.
const QUOTE: usize = 200;

/// The deepest a streamed call's assembled arguments may nest (objects
/// and arrays, the arguments' own object included): the most
/// `serde_json` parses back (it refuses a 128th level), so arguments this
/// projector writes always read back as they were assembled.
pub(crate) const MAX_ARGUMENT_DEPTH: usize = 127;

/// A Gemini 3 streamed call being assembled.
#[derive(Debug, Default)]
struct Streamed {
    args: Map<String, Value>,
    /// The path of the string the last entry left open.
    open_string: Option<String>,
    /// Bytes of argument values received, for the limit.
    bytes: usize,
}

/// The projector: the shared [`Projector`] over the
/// [`GeminiProjection`]. See the [module documentation](self) for every
/// rule.
///
/// ```
/// use agentstream::model::validate_events;
/// use agentstream_wire::gemini::GeminiProjector;
///
/// let mut projector = GeminiProjector::new("gemini-2.5-flash", "google");
/// let mut events = Vec::new();
/// projector.push_data(r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],"responseId":"r1"}"#, &mut events);
/// projector.push_data(r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}"#, &mut events);
/// projector.finish(&mut events);
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]);
/// assert!(validate_events(&events).is_empty());
/// ```
pub type GeminiProjector = Projector<GeminiProjection>;

/// What the `GenerateContentResponse`s say beyond the [`Frame`]: the
/// blocks and usage they wrote, a streamed call being assembled, the
/// finish reason. See the [module documentation](self).
#[derive(Debug)]
pub struct GeminiProjection {
    writer: EventWriter,
    streamed: Option<Streamed>,
    response_id: Option<String>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
    /// The ids of the message's calls, for duplicates.
    ids: Vec<String>,
}

impl GeminiProjector {
    /// A projector for messages of `model` from `provider` through `api`
    /// (whose [`name`](GeminiApi::name) they record), with timestamp 0.
    pub fn for_api(api: GeminiApi, model: impl Into<String>, provider: impl Into<String>) -> Self {
        let mut header = GeminiProjection::header(model.into(), provider.into());
        header.api = api.name().into();
        Self::with_header(header)
    }
}

impl Projection for GeminiProjection {
    const API: &'static str = GEMINI_API;

    fn for_header(_header: &AssistantMessage) -> Self {
        Self {
            writer: EventWriter::new(),
            streamed: None,
            response_id: None,
            finish_reason: None,
            finish_message: None,
            ids: Vec::new(),
        }
    }

    /// One SSE event: its data, whatever its `event:` name.
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.on_data(frame, &event.data, out);
    }

    /// The `data` of one SSE event: one `GenerateContentResponse`.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        let marked = mark_lone_surrogates(data);
        self.writer.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(data);
        let mut saturated = None;
        let chunk =
            match read_payload::<Chunk<'_>>(data, &mut saturated, "a GenerateContentResponse") {
                Ok(value) => value,
                Err(message) => {
                    self.fail(frame, message.into(), out);
                    return;
                }
            };
        if let Err(failure) = self.push_chunk(frame, chunk, out) {
            self.fail(frame, failure, out);
        }
    }

    /// The end of the body: the last `finishReason` decides how the
    /// message ends (see the [module documentation](self)).
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        let result = match self.finish_reason.clone().as_deref() {
            None => Err(String::from(
                "the stream ended without a finishReason: the response is truncated",
            )
            .into()),
            Some("STOP") => self.end_streamed(frame, out).and_then(|()| {
                let reason = if self.writer.has_tool_calls() {
                    DoneReason::ToolUse
                } else {
                    DoneReason::Stop
                };
                self.writer.done(frame, reason, out)
            }),
            Some("MAX_TOKENS") => self
                .end_streamed(frame, out)
                .and_then(|()| self.writer.close_cut(frame, out))
                .and_then(|()| self.writer.done(frame, DoneReason::Length, out)),
            Some(other) => {
                let detail = self.finish_message.clone();
                Err(self.stop_failure("finishReason", other, detail.as_deref()))
            }
        };
        if let Err(failure) = result {
            self.fail(frame, failure, out);
        }
    }

    /// What the writer adds to the message of an `error`.
    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.writer.settle(frame, message);
    }
}

impl GeminiProjection {
    fn push_chunk(
        &mut self,
        frame: &mut Frame,
        chunk: Chunk<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        if let Some(error) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return Err(self.error_payload(error));
        }
        if self.response_id.is_none() {
            if let Some(id) = chunk.response_id.as_deref().filter(|id| !id.is_empty()) {
                let id = self.writer.unmarked(String::from(id));
                self.response_id = Some(id.clone());
                frame.edit_header(|h| {
                    h.extra.insert("responseId".into(), Value::String(id));
                });
            }
        }
        self.writer.start(frame, out);
        if let Some(usage) = &chunk.usage_metadata {
            self.read_usage(usage);
        }
        let block = chunk
            .prompt_feedback
            .as_ref()
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str);
        if let Some(reason) = block {
            let detail = chunk
                .prompt_feedback
                .as_ref()
                .and_then(|f| f.get("blockReasonMessage"))
                .and_then(Value::as_str);
            return Err(self.stop_failure("blockReason", reason, detail));
        }
        let Some(candidate) = chunk.candidates.into_iter().flatten().next() else {
            return Ok(());
        };
        for part in candidate
            .content
            .and_then(|c| c.parts)
            .into_iter()
            .flatten()
        {
            self.push_part(frame, part, out)?;
        }
        // Kept for the end, after this payload's markers are forgotten.
        if let Some(reason) = candidate.finish_reason {
            self.finish_reason = Some(self.writer.unmarked(reason.into_owned()));
            self.finish_message = candidate.finish_message.map(|m| self.writer.unmarked(m));
        }
        Ok(())
    }

    fn push_part(
        &mut self,
        frame: &mut Frame,
        part: Part<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let signature = part
            .thought_signature
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(super::signature::from_wire);
        if let Some(call) = part.function_call {
            return self.push_call(frame, call, signature, out);
        }
        let Some(text) = part.text else {
            return Ok(());
        };
        let kind = if part.thought == Some(true) {
            Kind::Thinking
        } else {
            Kind::Text
        };
        if text.is_empty() && signature.is_none() {
            return Ok(());
        }
        self.end_streamed(frame, out)?;
        if self.writer.open_block().map(|(k, _)| k) != Some(kind) {
            self.writer.open_text(frame, kind, out)?;
        }
        self.writer.append(frame, &text, out)?;
        if let Some(signature) = signature {
            self.writer.set_signature(signature);
        }
        Ok(())
    }

    fn push_call(
        &mut self,
        frame: &mut Frame,
        call: FunctionCall,
        signature: Option<String>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let name = call
            .name
            .filter(|n| !n.is_empty())
            .map(|n| self.writer.unmarked(n));
        let continues = call.will_continue == Some(true);
        let Some(name) = name else {
            // A piece of the streamed call, if one is open.
            if self.streamed.is_some() {
                for entry in call.partial_args.into_iter().flatten() {
                    self.merge(frame, entry)?;
                }
                if !continues {
                    self.end_streamed(frame, out)?;
                }
            }
            return Ok(());
        };
        self.end_streamed(frame, out)?;
        let id = match call
            .id
            .map(|id| self.writer.unmarked(id))
            .filter(|id| !id.is_empty() && !self.ids.contains(id))
        {
            Some(id) => id,
            // Numbered after the calls so far, past any id the provider
            // sent that has the same form (at most one step per call).
            None => (self.writer.tool_call_count() + 1..)
                .map(|n| match &self.response_id {
                    Some(response) => format!("{name}_{response}_{n}"),
                    None => format!("{name}_{n}"),
                })
                .find(|id| !self.ids.contains(id))
                .unwrap_or_default(),
        };
        self.writer
            .open_tool(frame, id.clone(), name, signature, out)?;
        self.ids.push(id);
        if continues {
            self.streamed = Some(Streamed::default());
            for entry in call.partial_args.into_iter().flatten() {
                self.merge(frame, entry)?;
            }
            return Ok(());
        }
        let arguments = match call.args {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let text = Value::Object(arguments).to_string();
        self.writer.append(frame, &text, out)?;
        self.writer.close(frame, out)
    }

    /// Adds one `partialArgs` entry to the streamed call.
    fn merge(&mut self, frame: &mut Frame, entry: PartialArg) -> Result<(), Failure> {
        let max = frame.limits.max_tool_argument_bytes;
        let exceeded = self.writer.exceeded(frame, Limit::ToolArgumentBytes);
        let Some(streamed) = self.streamed.as_mut() else {
            return Ok(());
        };
        // The arguments are assembled across payloads: their lone
        // surrogates become U+FFFD now, while this payload's are known.
        let marked = self.writer.marked;
        let path_text = self.writer.unmarked(entry.json_path.unwrap_or_default());
        let path = parse_path(&path_text).ok_or_else(|| {
            format!(
                "the provider sent a partialArgs jsonPath this client cannot read: {}",
                clip(&path_text, QUOTE)
            )
        })?;
        let (value, is_string) = if let Some(s) = entry.string_value {
            (Value::String(self.writer.unmarked(s)), true)
        } else if let Some(v) = entry.number_value {
            (v, false)
        } else if let Some(b) = entry.bool_value {
            (Value::Bool(b), false)
        } else if let Some(v) = entry.struct_value.or(entry.list_value) {
            (if marked { unmark_value(v) } else { v }, false)
        } else {
            (Value::Null, false)
        };
        // The slot is inside one container per step of the path (the
        // arguments' object first); a `structValue` or `listValue` adds
        // its own levels. Deeper, the arguments' text would not parse back.
        if path.len().saturating_add(nesting(&value)) > MAX_ARGUMENT_DEPTH {
            return Err(format!(
                "the provider sent tool-call arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels (more than a JSON parser reads back) at partialArgs jsonPath {}",
                clip(&path_text, QUOTE)
            ).into());
        }
        let size = match &value {
            Value::String(s) => s.len(),
            other => other.to_string().len(),
        };
        streamed.bytes = streamed
            .bytes
            .saturating_add(size)
            .saturating_add(path_text.len());
        if streamed.bytes > max {
            return Err(exceeded);
        }
        let slot = slot_at(&mut streamed.args, &path).ok_or_else(|| {
            format!("the provider sent a partialArgs jsonPath that does not fit the arguments so far: {}", clip(&path_text, QUOTE))
        })?;
        let continuing = streamed.open_string.as_deref() == Some(path_text.as_str());
        match (slot, value) {
            (Value::String(existing), Value::String(more)) if continuing => {
                existing.push_str(&more)
            }
            (slot, value) => *slot = value,
        }
        streamed.open_string =
            (is_string && entry.will_continue == Some(true)).then_some(path_text);
        Ok(())
    }

    /// Ends the open streamed call: its assembled arguments as one delta.
    fn end_streamed(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(streamed) = self.streamed.take() else {
            return Ok(());
        };
        let text = Value::Object(streamed.args).to_string();
        self.writer.append(frame, &text, out)?;
        self.writer.close(frame, out)
    }

    fn read_usage(&mut self, usage: &UsageMetadata) {
        let counts = [
            usage.prompt_token_count,
            usage.candidates_token_count,
            usage.total_token_count,
            usage.thoughts_token_count,
        ];
        if counts.iter().all(Option::is_none) {
            return;
        }
        let prompt = usage.prompt_token_count.unwrap_or(0);
        let cached = usage.cached_content_token_count.unwrap_or(0);
        let output = usage
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(usage.thoughts_token_count.unwrap_or(0));
        let input = prompt.saturating_sub(cached);
        let sum = input.saturating_add(output).saturating_add(cached);
        self.writer.usage = Some(Usage {
            input,
            output,
            cache_read: cached,
            total_tokens: Some(usage.total_token_count.unwrap_or(0).max(sum)),
            ..Usage::default()
        });
    }

    fn error_payload(&mut self, error: &Value) -> Failure {
        let text = |key: &str| error.get(key).and_then(Value::as_str);
        let code = match error.get("code") {
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => text("status").map(String::from),
        };
        let message = text("message").unwrap_or("the provider sent an error");
        let message = match (text("status"), &code) {
            (Some(status), Some(code)) => format!("{status}: {message} (code: {code})"),
            (None, Some(code)) => format!("{message} (code: {code})"),
            (Some(status), None) => format!("{status}: {message}"),
            (None, None) => String::from(message),
        };
        Failure::provider(message, code)
    }

    /// The failure of a `field` (`finishReason`, `blockReason`) with
    /// `reason`, followed by the provider's `detail` when it gave one.
    fn stop_failure(&mut self, field: &str, reason: &str, detail: Option<&str>) -> Failure {
        let mut failure = Failure::stop(field, reason);
        if let Some(detail) = detail.filter(|d| !d.is_empty()) {
            failure.message.push_str(": ");
            failure.message.push_str(detail);
        }
        failure
    }
}
