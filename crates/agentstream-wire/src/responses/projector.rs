//! [`ResponsesProjector`]: from OpenAI Responses stream payloads to
//! [`ModelEvent`]s.
//!
//! A sans-IO state machine with the methods of the other projectors
//! ([`AnthropicProjector`](crate::anthropic::AnthropicProjector)): it is given the
//! `data` of each SSE event ([`push_data`](ResponsesProjector::push_data);
//! the payload's `type` names the event, the `event:` line is not needed),
//! told when the body ends ([`finish`](ResponsesProjector::finish)) or the
//! call is aborted, and appends events to a `Vec`. Every sequence it
//! produces passes [`validate_events`](agentstream::model::validate_events).
//!
//! # Output items
//!
//! Events are matched to items by `output_index`, never by `item_id`
//! (GitHub Copilot's proxy gives every event of one item a new id). An
//! event without `output_index` belongs to the open item. One item is
//! open at a time: `response.output_item.added` closes the open one, and
//! an item whose `output_index` is not above the last one is ignored, with
//! its events.
//!
//! - A `reasoning` item is a thinking block:
//!   `response.reasoning_summary_text.delta` and
//!   `response.reasoning_text.delta` stream into it; summary parts are
//!   separated by a blank line (`\n\n`, sent when the second part starts).
//!   At `response.output_item.done` the item as received, serialized as
//!   JSON (its `id`, `encrypted_content` and `summary`), is the block's
//!   `thinkingSignature`, which the [request builder](super::request) sends
//!   back unchanged to the same model.
//! - A `message` item is a text block: `response.output_text.delta` and
//!   `response.refusal.delta` stream into it. Its `textSignature` is
//!   `{"v":1,"id":ITEM_ID}` (plus `"phase"` when the item has one), as Pi
//!   writes it, with the id of the finished item.
//! - A `function_call` item is a tool call with id `CALL_ID|ITEM_ID` (Pi's
//!   form: the request builder splits it back into `call_id` and `id`) and
//!   the item's `name`; `response.function_call_arguments.delta` streams
//!   its arguments, and a `…arguments.done` or finished item whose text
//!   extends what was streamed sends the rest. At the end the text, blank
//!   meaning `{}`, must be a JSON object or the stream ends in `error`.
//! - A finished item whose final text extends the streamed text sends the
//!   rest as one last delta; a final text that differs otherwise is
//!   ignored (the deltas already sent are the block).
//! - Other item types (`web_search_call`, …) are skipped with their events.
//!
//! # End of the response
//!
//! - `response.completed`: usage, then its `status`: `completed` (or none)
//!   gives `stop`, or `toolUse` when the message has tool calls;
//!   `incomplete` gives `length`; `failed` and `cancelled` end in `error`.
//! - `response.incomplete` with `incomplete_details.reason`
//!   `max_output_tokens` (or none) gives `length`: an open tool call cut
//!   off is kept, its argument text completed leniently: the shortest
//!   suffix that makes it JSON (open strings closed, a dangling key or
//!   value `null`, open objects and arrays closed) is sent as its last
//!   delta. Reason `content_filter` ends in `error`
//!   naming it.
//! - `response.failed` ends in `error` with `CODE: MESSAGE` from
//!   `response.error` (Pi's wording), and an `error` event with
//!   `Error Code CODE: MESSAGE`; [`error_cause`](ResponsesProjector::error_cause)
//!   keeps the code.
//! - Usage (Pi's reading): `input` is `input_tokens` less
//!   `input_tokens_details.cached_tokens`, which are `cacheRead`;
//!   `output` is `output_tokens` (reasoning tokens included, as OpenAI
//!   counts them); `totalTokens` is `total_tokens`, or the sum when that is
//!   missing or smaller.
//! - `response.id` of `response.created` (and `response.in_progress`) is
//!   the message's `responseId`; the one of `response.completed` replaces
//!   it, as Pi does (proxies that rotate ids give a new one there).
//! - A body that ends without a terminal event ends in `error`
//!   (truncated).
//!
//! # Hostile input
//!
//! Unknown event types and fields are ignored. Data that is not JSON, not
//! an object with a string `type`, or whose known fields have the wrong
//! types, ends in `error` quoting it. Lone UTF-16
//! surrogate escapes are accepted as in the other projectors. On error or
//! abort the open block keeps its text so far; an open tool call is kept
//! only if its argument text is already a JSON object.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{json, Value};

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ModelEvent};

use crate::cause::Failure;
use crate::event_writer::{read_payload, EventWriter, Kind};
use crate::json::{borrowed_str, count};
use crate::sse::{Fail, Frame, Projection, Projector, SseEvent};
use crate::surrogates::mark_lone_surrogates;

/// The `api` of messages from the OpenAI Responses API, as Pi names it.
pub const OPENAI_RESPONSES_API: &str = "openai-responses";

/// The item that is open.
#[derive(Debug)]
struct Current {
    output_index: u64,
    kind: ItemKind,
    /// Summary parts started (reasoning).
    summary_parts: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Reasoning,
    Message,
    Call,
}

/// The projector: the shared [`Projector`] over the
/// [`ResponsesProjection`]. See the [module documentation](self) for
/// every rule.
///
/// ```
/// use agentstream::model::validate_events;
/// use agentstream_wire::responses::ResponsesProjector;
///
/// let mut projector = ResponsesProjector::new("gpt-5", "openai");
/// let mut events = Vec::new();
/// for data in [
///     r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
///     r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1"}}"#,
///     r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}"#,
///     r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi"}]}}"#,
///     r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}"#,
/// ] {
///     projector.push_data(data, &mut events);
/// }
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_start", "text_delta", "text_end", "done"]);
/// assert!(validate_events(&events).is_empty());
/// ```
pub type ResponsesProjector = Projector<ResponsesProjection>;

/// What the Responses stream events say beyond the [`Frame`]: the open
/// output item, the blocks and usage its events wrote. See the
/// [module documentation](self).
#[derive(Debug)]
pub struct ResponsesProjection {
    writer: EventWriter,
    current: Option<Current>,
    /// The highest `output_index` seen in `response.output_item.added`.
    last_index: Option<u64>,
}

impl Projection for ResponsesProjection {
    const API: &'static str = OPENAI_RESPONSES_API;

    fn for_header(_header: &AssistantMessage) -> Self {
        Self {
            writer: EventWriter::new(),
            current: None,
            last_index: None,
        }
    }

    /// One SSE event: its data, whatever its `event:` name (the payload's
    /// `type` names it).
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.on_data(frame, &event.data, out);
    }

    /// The `data` of one SSE event: one event payload's JSON.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        let marked = mark_lone_surrogates(data);
        self.writer.marked = marked.is_some();
        let data = marked.as_deref().unwrap_or(data);
        let mut saturated = None;
        let payload =
            match read_payload::<Payload<'_>>(data, &mut saturated, "a Responses stream event") {
                Ok(value) => value,
                Err(message) => {
                    self.fail(frame, message.into(), out);
                    return;
                }
            };
        if let Err(failure) = self.push_event(frame, &payload, out) {
            self.fail(frame, failure, out);
        }
    }

    /// The end of the body. Without a terminal event the response is
    /// truncated and ends in `error`.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        let message = "the stream ended before response.completed: the response is truncated";
        self.fail(frame, String::from(message).into(), out);
    }

    /// What the writer adds to the message of an `error`.
    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.writer.settle(frame, message);
    }
}

impl ResponsesProjection {
    /// Whether an event addressed to `index` belongs to the open item.
    fn addressed(&self, index: Option<u64>, kind: ItemKind) -> bool {
        self.current
            .as_ref()
            .is_some_and(|c| c.kind == kind && index.map_or(true, |i| i == c.output_index))
    }

    fn push_event(
        &mut self,
        frame: &mut Frame,
        p: &Payload<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let delta = p.delta.as_deref().unwrap_or("");
        match &*p.kind {
            "response.created" | "response.in_progress" => {
                self.read_id(frame, p);
                self.writer.start(frame, out);
            }
            "response.output_item.added" => self.item_added(frame, p, out)?,
            "response.reasoning_summary_part.added"
                if self.addressed(p.output_index, ItemKind::Reasoning) =>
            {
                if let Some(current) = &mut self.current {
                    current.summary_parts += 1;
                    if current.summary_parts > 1 {
                        self.writer.append(frame, "\n\n", out)?;
                    }
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta"
                if self.addressed(p.output_index, ItemKind::Reasoning) =>
            {
                if let Some(current) = &mut self.current {
                    current.summary_parts = current.summary_parts.max(1);
                }
                self.writer.append(frame, delta, out)?;
            }
            "response.output_text.delta" | "response.refusal.delta"
                if self.addressed(p.output_index, ItemKind::Message) =>
            {
                self.writer.append(frame, delta, out)?;
            }
            "response.function_call_arguments.delta"
                if self.addressed(p.output_index, ItemKind::Call) =>
            {
                self.writer.append(frame, delta, out)?;
            }
            "response.function_call_arguments.done"
                if self.addressed(p.output_index, ItemKind::Call) =>
            {
                if let Some(full) = p.arguments.as_deref() {
                    self.extend_to(frame, full, out)?;
                }
            }
            "response.output_item.done" => self.item_done(frame, p, out)?,
            "response.completed" => {
                self.read_id(frame, p);
                self.writer.start(frame, out);
                let response = p.response.as_ref();
                self.read_usage(response);
                let status = response
                    .and_then(|r| r.get("status"))
                    .and_then(Value::as_str);
                match status {
                    None | Some("completed" | "in_progress" | "queued") => self.stop(frame, out)?,
                    Some("incomplete") => self.length(frame, out)?,
                    Some(other) => return Err(Failure::stop("status", other)),
                }
            }
            "response.incomplete" => {
                self.writer.start(frame, out);
                let response = p.response.as_ref();
                self.read_usage(response);
                let reason = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str);
                match reason {
                    Some("content_filter") => {
                        return Err(Failure::stop("incomplete_details.reason", "content_filter"))
                    }
                    _ => self.length(frame, out)?,
                }
            }
            "response.failed" => {
                self.writer.start(frame, out);
                let response = p.response.as_ref();
                self.read_usage(response);
                let error = response
                    .and_then(|r| r.get("error"))
                    .filter(|e| !e.is_null());
                let details = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str);
                let text = |v: Option<&Value>, key: &str| {
                    v.and_then(|v| v.get(key))
                        .and_then(Value::as_str)
                        .map(String::from)
                };
                let code = text(error, "code");
                let message = match (error, details) {
                    (Some(_), _) => format!(
                        "{}: {}",
                        code.as_deref().unwrap_or("unknown"),
                        text(error, "message").as_deref().unwrap_or("no message")
                    ),
                    (None, Some(reason)) => format!("incomplete: {reason}"),
                    (None, None) => "Unknown error (no error details in response)".into(),
                };
                return Err(Failure::provider(message, code));
            }
            "error" => {
                self.writer.start(frame, out);
                let code = p.code.as_ref().and_then(code_text).or_else(|| {
                    p.error.as_ref().and_then(|e| {
                        e.get("code")
                            .and_then(code_text)
                            .or_else(|| e.get("type").and_then(code_text))
                    })
                });
                let message = p
                    .message
                    .as_deref()
                    .map(String::from)
                    .or_else(|| {
                        p.error
                            .as_ref()
                            .and_then(|e| e.get("message"))
                            .and_then(Value::as_str)
                            .map(String::from)
                    })
                    .unwrap_or_else(|| "the provider sent an error event".into());
                let shown = code.as_deref().unwrap_or("unknown");
                let message = format!("Error Code {shown}: {message}");
                return Err(Failure::provider(message, code));
            }
            _ => {}
        }
        Ok(())
    }

    /// `response.id` is the message's `responseId`; the one of
    /// `response.completed` wins, as in Pi.
    fn read_id(&mut self, frame: &mut Frame, p: &Payload<'_>) {
        if let Some(id) = p.response_field("id").and_then(Value::as_str) {
            self.writer
                .set_extra(frame, "responseId", Value::String(id.into()));
        }
    }

    fn item_added(
        &mut self,
        frame: &mut Frame,
        p: &Payload<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.writer.start(frame, out);
        let Some(item) = p.item.as_ref() else {
            return Ok(());
        };
        let index = match (p.output_index, self.last_index) {
            (Some(index), _) => index,
            (None, None) => 0,
            // The next index, which the largest one has not.
            (None, Some(last)) => last.checked_add(1).ok_or_else(|| {
                String::from(
                    "the provider sent an output item without an output_index after the largest one",
                )
            })?,
        };
        if self.last_index.is_some_and(|last| index <= last) {
            return Ok(());
        }
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        let kind = match text("type") {
            "reasoning" => ItemKind::Reasoning,
            "message" => ItemKind::Message,
            "function_call" => ItemKind::Call,
            _ => return Ok(()),
        };
        self.last_index = Some(index);
        self.current = None;
        match kind {
            ItemKind::Reasoning => self.writer.open_text(frame, Kind::Thinking, out)?,
            ItemKind::Message => self.writer.open_text(frame, Kind::Text, out)?,
            ItemKind::Call => {
                let id = format!("{}|{}", text("call_id"), text("id"));
                self.writer
                    .open_tool(frame, id, text("name").into(), None, out)?;
                self.writer.append(frame, text("arguments"), out)?;
            }
        }
        self.current = Some(Current {
            output_index: index,
            kind,
            summary_parts: 0,
        });
        Ok(())
    }

    /// Sends the part of `full` past what the open block streamed, when
    /// `full` extends it. For a call's arguments this copies nothing and
    /// looks at the arguments only when `full` is longer, so repeated
    /// `function_call_arguments.done` events cost what they hold.
    fn extend_to(
        &mut self,
        frame: &mut Frame,
        full: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        match self.writer.open_block() {
            Some((Kind::Tool, _)) => self.writer.extend_arguments(frame, full, out),
            Some(_) => {
                let so_far = self.writer.open_text_so_far(frame);
                match full.strip_prefix(so_far.as_str()) {
                    Some(more) if !more.is_empty() => self.writer.append(frame, more, out),
                    _ => Ok(()),
                }
            }
            None => Ok(()),
        }
    }

    fn item_done(
        &mut self,
        frame: &mut Frame,
        p: &Payload<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(item) = p.item.as_ref() else {
            return Ok(());
        };
        let Some(kind) = self.current.as_ref().map(|c| c.kind) else {
            return Ok(());
        };
        if !self.addressed(p.output_index, kind) {
            return Ok(());
        }
        let joined = |key: &str, field: &str, sep: &str| -> String {
            let parts: Vec<&str> = item
                .get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.get(field).and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            parts.join(sep)
        };
        match kind {
            ItemKind::Reasoning => {
                let summary = joined("summary", "text", "\n\n");
                let final_text = if summary.is_empty() {
                    joined("content", "text", "\n\n")
                } else {
                    summary
                };
                self.extend_to(frame, &final_text, out)?;
                self.writer.set_signature(item.to_string());
            }
            ItemKind::Message => {
                let parts: Vec<&str> = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|c| {
                                c.get("text")
                                    .or_else(|| c.get("refusal"))
                                    .and_then(Value::as_str)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                self.extend_to(frame, &parts.concat(), out)?;
                let mut signature =
                    json!({"v": 1, "id": item.get("id").and_then(Value::as_str).unwrap_or("")});
                if let Some(phase) = item.get("phase").and_then(Value::as_str) {
                    signature["phase"] = Value::String(phase.into());
                }
                self.writer.set_signature(signature.to_string());
            }
            ItemKind::Call => {
                if let Some(full) = item.get("arguments").and_then(Value::as_str) {
                    self.extend_to(frame, full, out)?;
                }
            }
        }
        self.current = None;
        self.writer.close(frame, out)
    }

    fn read_usage(&mut self, response: Option<&Value>) {
        let Some(usage) = response
            .and_then(|r| r.get("usage"))
            .filter(|u| u.is_object())
        else {
            return;
        };
        let n = |v: Option<&Value>| count(v).unwrap_or(0);
        let input = n(usage.get("input_tokens"));
        let cached = n(usage.pointer("/input_tokens_details/cached_tokens"));
        let output = n(usage.get("output_tokens"));
        let mut result = Usage {
            input: input.saturating_sub(cached),
            output,
            cache_read: cached,
            ..Usage::default()
        };
        let sum = result.input.saturating_add(output).saturating_add(cached);
        result.total_tokens = Some(n(usage.get("total_tokens")).max(sum));
        self.writer.usage = Some(result);
    }

    fn stop(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        self.current = None;
        self.writer.close(frame, out)?;
        let reason = if self.writer.has_tool_calls() {
            DoneReason::ToolUse
        } else {
            DoneReason::Stop
        };
        self.writer.done(frame, reason, out)
    }

    fn length(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        self.current = None;
        self.writer.close_cut(frame, out)?;
        self.writer.done(frame, DoneReason::Length, out)
    }
}

fn code_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(format!("{n}")),
        _ => None,
    }
}

/// One event payload: the fields the projector reads. The deltas are
/// borrowed; the rare parts stay `Value`s.
#[derive(Debug, Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    arguments: Option<Cow<'a, str>>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    message: Option<Cow<'a, str>>,
    #[serde(default)]
    error: Option<Value>,
}

impl Payload<'_> {
    fn response_field(&self, key: &str) -> Option<&Value> {
        self.response.as_ref().and_then(|r| r.get(key))
    }
}
