//! [`MistralProjector`]: the chunks of a Mistral chat-completions stream
//! to the event protocol, as pi-ai's `mistral-conversations` provider
//! reads them.
//!
//! - The first chunk's `id` is the message's `responseId`.
//! - `delta.content`: a string is text; a list holds `text` items and
//!   `thinking` items (their text parts joined; an empty one is skipped).
//!   A content of another kind than the open block closes it and opens
//!   one; an empty string still opens a text block, as in pi-ai.
//! - `delta.tool_calls`: a call whose id (or, without one, the id pi-ai
//!   derives from its `index`) and `index` differ from the open call's
//!   opens one; its `function.arguments`, a string or an object (written
//!   as JSON), are appended. pi-ai keeps every call open until the stream
//!   ends and ends them then; here a call ends when the next block
//!   starts, so with several calls the `toolcall_end` events come earlier
//!   (the blocks and the final message are the same).
//! - `usage`: `prompt_tokens`, `completion_tokens`, `total_tokens` (their
//!   sum when absent); no cache counts.
//! - `finish_reason`: `stop` (and any other) → `stop`, `length` and
//!   `model_length` → `length`, `tool_calls` → `toolUse`; `error` ends in
//!   `error`. The stream ends at `[DONE]` or at the end of the body.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};
use serde::Deserialize;
use serde_json::Value;

use super::request::derive_id;
use crate::cause::Failure;
use crate::event_writer::{read_payload, EventWriter, Kind};
use crate::sse::{Fail, Frame, Projection, Projector, SseEvent};
use crate::surrogates::mark_lone_surrogates;

/// Pi's `api` id of Mistral.
pub const MISTRAL_API: &str = "mistral-conversations";

/// The projector of a Mistral stream. See the [module documentation](self).
///
/// ```
/// use agentstream::model::validate_events;
/// use agentstream_wire::mistral::MistralProjector;
///
/// let mut projector = MistralProjector::new("magistral-medium-latest", "mistral");
/// let mut events = Vec::new();
/// for data in [
///     r#"{"id":"a","choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hm."}]}]}}]}"#,
///     r#"{"id":"a","choices":[{"delta":{"content":[{"type":"text","text":"4"}]},"finish_reason":"stop"}]}"#,
///     "[DONE]",
/// ] {
///     projector.push_data(data, &mut events);
/// }
/// assert!(validate_events(&events).is_empty());
/// let message = events.last().unwrap().terminal_message().unwrap();
/// assert_eq!((message.content.len(), message.text().as_str()), (2, "4"));
/// ```
pub type MistralProjector = Projector<MistralProjection>;

/// What a Mistral stream says beyond the [`Frame`]: the blocks written, the
/// open call's key and the stop reason so far.
#[derive(Debug)]
pub struct MistralProjection {
    writer: EventWriter,
    /// The open tool call's id and index.
    open_call: Option<(String, u64)>,
    reason: DoneReason,
    /// A `finish_reason` of `error` was read.
    failed: bool,
    has_id: bool,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChunkUsage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Items(Vec<Item>),
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<Vec<Part>>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

impl Projection for MistralProjection {
    const API: &'static str = MISTRAL_API;

    fn for_header(_header: &AssistantMessage) -> Self {
        Self {
            writer: EventWriter::new(),
            open_call: None,
            reason: DoneReason::Stop,
            failed: false,
            has_id: false,
        }
    }

    /// One SSE event: its data (Mistral names no events).
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.on_data(frame, &event.data, out);
    }

    /// One chunk's JSON, or `[DONE]`.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        if data.trim() == "[DONE]" {
            self.on_end(frame, out);
            return;
        }
        let marked = mark_lone_surrogates(data);
        self.writer.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(data);
        let mut saturated = None;
        let chunk = match read_payload::<Chunk>(data, &mut saturated, "a Mistral chunk") {
            Ok(chunk) => chunk,
            Err(message) => return self.fail(frame, message.into(), out),
        };
        if let Err(failure) = self.push_chunk(frame, chunk, out) {
            self.fail(frame, failure, out);
        }
    }

    /// The end of the body: `done` with the last stop reason, or `error`
    /// after a `finish_reason` of `error`.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        if frame.is_finished() {
            return;
        }
        let result = if self.failed {
            Err(Failure::stop("finish_reason", "error"))
        } else {
            self.writer.done(frame, self.reason, out)
        };
        if let Err(failure) = result {
            self.fail(frame, failure, out);
        }
    }

    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.writer.settle(frame, message);
    }
}

impl MistralProjection {
    fn push_chunk(
        &mut self,
        frame: &mut Frame,
        chunk: Chunk,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        if let Some(id) = chunk.id.filter(|id| !id.is_empty() && !self.has_id) {
            self.has_id = true;
            self.writer
                .set_extra(frame, "responseId", Value::String(id));
        }
        self.writer.start(frame, out);
        if let Some(usage) = chunk.usage {
            let input = usage.prompt_tokens.unwrap_or(0);
            let output = usage.completion_tokens.unwrap_or(0);
            let total = usage.total_tokens.filter(|t| *t > 0);
            self.writer.usage = Some(Usage {
                input,
                output,
                total_tokens: Some(total.unwrap_or(input.saturating_add(output))),
                ..Usage::default()
            });
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        match choice.finish_reason.as_deref() {
            None => {}
            Some("length" | "model_length") => self.reason = DoneReason::Length,
            Some("tool_calls") => self.reason = DoneReason::ToolUse,
            Some("error") => self.failed = true,
            Some(_) => self.reason = DoneReason::Stop,
        }
        let Some(delta) = choice.delta else {
            return Ok(());
        };
        match delta.content {
            Some(Content::Text(text)) => self.push_text(frame, Kind::Text, &text, out)?,
            Some(Content::Items(items)) => {
                for item in items {
                    match item.kind.as_str() {
                        "text" => {
                            let text = item.text.unwrap_or_default();
                            self.push_text(frame, Kind::Text, &text, out)?;
                        }
                        "thinking" => {
                            let text: String = item
                                .thinking
                                .unwrap_or_default()
                                .into_iter()
                                .filter_map(|part| part.text)
                                .collect();
                            if !text.is_empty() {
                                self.push_text(frame, Kind::Thinking, &text, out)?;
                            }
                        }
                        _ => {}
                    }
                }
            }
            None => {}
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.push_call(frame, call, out)?;
        }
        Ok(())
    }

    /// Appends `text` to the open block of `kind`, opening one first.
    fn push_text(
        &mut self,
        frame: &mut Frame,
        kind: Kind,
        text: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        if self.writer.open_block().map(|(k, _)| k) != Some(kind) {
            self.open_call = None;
            self.writer.open_text(frame, kind, out)?;
        }
        self.writer.append(frame, text, out)
    }

    fn push_call(
        &mut self,
        frame: &mut Frame,
        call: CallDelta,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let index = call.index.unwrap_or(0);
        let id = match call.id.filter(|id| id != "null") {
            Some(id) => id,
            None => derive_id(&alloc::format!("toolcall:{index}"), 0),
        };
        let function = call.function;
        let key = (id, index);
        if self.open_call.as_ref() != Some(&key)
            || self.writer.open_block().map(|(k, _)| k) != Some(Kind::Tool)
        {
            let name = function
                .as_ref()
                .and_then(|f| f.name.clone())
                .unwrap_or_default();
            self.writer
                .open_tool(frame, key.0.clone(), name, None, out)?;
            self.open_call = Some(key);
        }
        let arguments = match function.and_then(|f| f.arguments) {
            Some(Value::String(text)) => text,
            Some(Value::Null) | None => String::from("{}"),
            Some(other) => other.to_string(),
        };
        self.writer.append(frame, &arguments, out)
    }
}
