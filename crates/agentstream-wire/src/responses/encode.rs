//! OpenAI Responses, the server's writing of an answer: model events to
//! the SSE events the provider sends (what the
//! client's projector reads), and the one JSON answer of a call that did
//! not stream.
//!
//! # What is written
//!
//! As OpenAI sends them, each SSE event with `event: TYPE` and a payload
//! with its `type` and a `sequence_number` counting from 0:
//! `response.created` and `response.in_progress` (the Response with
//! `status: "in_progress"`), then per content block one output item
//! (`output_index` the block's index): `response.output_item.added`; for
//! text `response.content_part.added`, `response.output_text.delta`…,
//! `response.output_text.done`, `response.content_part.done`; for thinking
//! `response.reasoning_summary_part.added`,
//! `response.reasoning_summary_text.delta`…, `….done`, `…part.done`, the
//! finished item carrying the thinking signature (a reasoning item's JSON
//! as it was, or an item with the signature as `encrypted_content`); for a
//! tool call `response.function_call_arguments.delta`… and `….done`; then
//! `response.output_item.done`. The turn ends with `response.completed`
//! (the whole Response, with usage), `response.incomplete`
//! (`incomplete_details.reason: "max_output_tokens"`) for a `length` turn,
//! or `response.failed` (`error: {code: "server_error", message}`) for a
//! model error. A script's mid-stream error is an `error` event.
//!
//! Item ids: a text's `textSignature` id, else `msg_agentstream_N`; a call's
//! item part of `CALL_ID|ITEM_ID`, else `fc_agentstream_N`; a reasoning
//! item's own id, else `rs_agentstream_N` (N the output index). The wire
//! crate's projector reads such a stream back into the scripted message;
//! a call id without `|` comes back as `ID|fc_agentstream_N`.

use crate::server::prelude::*;
use agentstream::message::{AssistantMessage, ContentBlock, ToolCall, Usage};
use alloc::collections::BTreeMap;

use agentstream::model::{DoneReason, ModelEvent};
use serde_json::{json, Value};

use crate::server::error::{Api, ApiError};
use crate::server::events::{self as frames, Events};
use crate::server::steps::{Blocks, Kind, Wire};

/// Responses' `usage` for a Pi usage: `input_tokens` is input +
/// cacheRead, `cached_tokens` cacheRead, `output_tokens` output,
/// `total_tokens` totalTokens (or the sum); cacheWrite has no field.
pub fn usage_json(usage: &Usage) -> Value {
    let (input, total) = crate::server::tokens::prompt_and_total(usage);
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total,
    })
}

/// A tool call's `call_id` and item id: Pi's `CALL_ID|ITEM_ID` split, or
/// the whole id and `fc_agentstream_N`.
fn call_ids(call: &ToolCall, output_index: usize) -> (String, String) {
    let mut parts = call.id.split('|');
    let call_id = parts.next().unwrap_or_default().to_owned();
    let item_id = parts
        .next()
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("fc_agentstream_{output_index}"), str::to_owned);
    (call_id, item_id)
}

fn arguments_text(call: &ToolCall) -> String {
    serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into())
}

/// The id of a text block's message item: its `textSignature`
/// (`{"v":1,"id"}` or a plain id), else `msg_agentstream_N`.
fn message_id(signature: Option<&str>, output_index: usize) -> String {
    let from_json = signature
        .filter(|s| s.starts_with('{'))
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned));
    from_json
        .or_else(|| {
            signature
                .filter(|s| !s.is_empty() && !s.starts_with('{'))
                .map(Into::into)
        })
        .unwrap_or_else(|| format!("msg_agentstream_{output_index}"))
}

/// The reasoning item of a thinking block: its signature when that is a
/// reasoning item's JSON (sent back as it was), else an item with the
/// signature as `encrypted_content` and the thinking as its summary.
fn reasoning_item(thinking: &str, signature: Option<&str>, output_index: usize) -> Value {
    if let Some(Value::Object(item)) = signature.and_then(|s| serde_json::from_str(s).ok()) {
        if item.get("type").and_then(Value::as_str) == Some("reasoning") {
            return Value::Object(item);
        }
    }
    let summary = if thinking.is_empty() {
        json!([])
    } else {
        json!([{"type": "summary_text", "text": thinking}])
    };
    let mut item = json!({
        "id": format!("rs_agentstream_{output_index}"),
        "type": "reasoning",
        "summary": summary,
    });
    if let Some(signature) = signature.filter(|s| !s.is_empty()) {
        item["encrypted_content"] = signature.into();
    }
    item
}

/// The finished output item of a block (`None` for images).
fn output_item(block: &ContentBlock, output_index: usize) -> Option<Value> {
    Some(match block {
        ContentBlock::Text(t) => json!({
            "id": message_id(t.text_signature.as_deref(), output_index),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": t.text}],
        }),
        ContentBlock::Thinking(t) => {
            reasoning_item(&t.thinking, t.thinking_signature.as_deref(), output_index)
        }
        ContentBlock::ToolCall(call) => {
            let (call_id, id) = call_ids(call, output_index);
            json!({
                "id": id,
                "type": "function_call",
                "status": "completed",
                "arguments": arguments_text(call),
                "call_id": call_id,
                "name": call.name,
            })
        }
        _ => return None,
    })
}

/// The Response object: `status` `completed`, or `incomplete` with
/// `incomplete_details.reason` `max_output_tokens` for a `length` turn.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_wire::responses::encode::response;
///
/// let message = assistant([text("hi")], StopReason::Stop);
/// let body = response("resp_1", "gpt-5", 0, DoneReason::Stop, &message);
/// assert_eq!(body["output"][0]["content"][0]["text"], "hi");
/// assert_eq!(body["status"], "completed");
/// ```
pub fn response(
    id: &str,
    model: &str,
    created: u64,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Value {
    let output: Vec<Value> = message
        .content
        .iter()
        .enumerate()
        .filter_map(|(k, block)| output_item(block, k))
        .collect();
    let mut body = shell(id, model, created);
    body["output"] = output.into();
    body["usage"] = usage_json(&message.usage);
    if reason == DoneReason::Length {
        body["status"] = "incomplete".into();
        body["incomplete_details"] = json!({"reason": "max_output_tokens"});
    } else {
        body["status"] = "completed".into();
    }
    body
}

/// A Response object with no output yet (`in_progress`).
fn shell(id: &str, model: &str, created: u64) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "model": model,
        "output": [],
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": null,
    })
}

/// Turns model events into Responses SSE events (`event: TYPE` and the
/// payload with its `type` and `sequence_number`), one call at a time.
/// Each content block is one output item, its `output_index` the block's
/// index.
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream_wire::responses::encode::StreamEncoder;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let stream = model.stream(&Context::from_messages([user("hello").into()]), StreamOptions::default());
/// let events: Vec<_> = futures_executor::block_on(stream.collect());
/// let mut encoder = StreamEncoder::new("resp_1", "gpt-5", 0);
/// let mut sse = Vec::new();
/// for event in &events {
///     encoder.encode(event, &mut sse);
/// }
/// assert!(sse[0].starts_with("event: response.created\n"));
/// assert!(sse.iter().any(|e| e.contains(r#""delta":"hi""#)));
/// assert!(sse.last().unwrap().starts_with("event: response.completed\n"));
/// ```
#[derive(Debug)]
pub struct StreamEncoder {
    id: String,
    model: String,
    created: u64,
    chunks: usize,
    sequence: u64,
    /// The item ids of the blocks opened so far, by content index.
    ids: BTreeMap<usize, String>,
    /// The block whose item is open (added, not done yet).
    current: Option<usize>,
    /// Content indexes of calls whose arguments were streamed.
    streamed: Vec<usize>,
}

impl StreamEncoder {
    /// An encoder for the response `id` of `model`, created at `created`
    /// (Unix seconds).
    pub fn new(id: impl Into<String>, model: impl Into<String>, created: u64) -> Self {
        Self {
            id: id.into(),
            model: model.into(),
            created,
            chunks: 1,
            sequence: 0,
            ids: BTreeMap::new(),
            current: None,
            streamed: Vec::new(),
        }
    }

    /// Splits every delta into up to `chunks` events (at least 1).
    #[must_use]
    pub fn with_chunks(mut self, chunks: usize) -> Self {
        self.chunks = chunks.max(1);
        self
    }

    fn push(&mut self, kind: &str, mut payload: Value, out: &mut Events) {
        payload["type"] = kind.into();
        payload["sequence_number"] = self.sequence.into();
        self.sequence += 1;
        out.json(Some(kind), &payload);
    }

    fn item_id(&self, index: usize) -> String {
        self.ids.get(&index).cloned().unwrap_or_default()
    }

    /// Closes the open item if it is not the block at `index`, with its
    /// block as `blocks` has it (a model may end a block with no end
    /// event: the next block, or the end of the message, closes it).
    fn close_other(&mut self, index: usize, blocks: Blocks<'_>, out: &mut Events) {
        if let Some(open) = self.current.filter(|&open| open != index) {
            if let Some(block) = blocks.block(open) {
                self.close(open, &block, out);
            }
        }
    }

    /// Opens the item of the block at `index` if it is not open yet.
    fn open(&mut self, index: usize, blocks: Blocks<'_>, out: &mut Events) {
        if self.ids.contains_key(&index) {
            return;
        }
        self.close_other(index, blocks, out);
        let Some(block) = blocks.block(index) else {
            return;
        };
        let Some(mut item) = output_item(&block, index) else {
            return;
        };
        let id = item["id"].as_str().unwrap_or_default().to_owned();
        self.ids.insert(index, id.clone());
        self.current = Some(index);
        match &*block {
            ContentBlock::Text(_) => {
                item["status"] = "in_progress".into();
                item["content"] = json!([]);
            }
            ContentBlock::Thinking(_) => item["summary"] = json!([]),
            _ => {
                item["status"] = "in_progress".into();
                item["arguments"] = "".into();
            }
        }
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
            out,
        );
        let part = json!({"item_id": id, "output_index": index});
        match &*block {
            ContentBlock::Text(_) => {
                let mut added = part;
                added["content_index"] = 0.into();
                added["part"] =
                    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": ""});
                self.push("response.content_part.added", added, out);
            }
            ContentBlock::Thinking(_) => {
                let mut added = part;
                added["summary_index"] = 0.into();
                added["part"] = json!({"type": "summary_text", "text": ""});
                self.push("response.reasoning_summary_part.added", added, out);
            }
            _ => {}
        }
    }

    fn deltas(&mut self, kind: &str, index: usize, delta: &str, out: &mut Events) {
        let id = self.item_id(index);
        for piece in frames::split(delta, self.chunks) {
            let mut payload = json!({"item_id": id, "output_index": index, "delta": piece});
            match kind {
                "response.output_text.delta" => {
                    payload["content_index"] = 0.into();
                    payload["logprobs"] = json!([]);
                }
                "response.reasoning_summary_text.delta" => payload["summary_index"] = 0.into(),
                _ => {}
            }
            self.push(kind, payload, out);
        }
    }

    /// Closes the item of `block` at `index`.
    fn close(&mut self, index: usize, block: &ContentBlock, out: &mut Events) {
        if self.current != Some(index) {
            return;
        }
        self.current = None;
        let id = self.item_id(index);
        let Some(item) = output_item(block, index) else {
            return;
        };
        let base = json!({"item_id": id, "output_index": index});
        match block {
            ContentBlock::Text(t) => {
                let mut done = base.clone();
                done["content_index"] = 0.into();
                done["text"] = t.text.clone().into();
                done["logprobs"] = json!([]);
                self.push("response.output_text.done", done, out);
                let mut part = base;
                part["content_index"] = 0.into();
                part["part"] = item["content"][0].clone();
                self.push("response.content_part.done", part, out);
            }
            ContentBlock::Thinking(t) => {
                let mut done = base.clone();
                done["summary_index"] = 0.into();
                done["text"] = t.thinking.clone().into();
                self.push("response.reasoning_summary_text.done", done, out);
                let mut part = base;
                part["summary_index"] = 0.into();
                part["part"] = json!({"type": "summary_text", "text": t.thinking});
                self.push("response.reasoning_summary_part.done", part, out);
            }
            ContentBlock::ToolCall(call) => {
                let mut done = base;
                done["arguments"] = arguments_text(call).into();
                done["name"] = call.name.clone().into();
                self.push("response.function_call_arguments.done", done, out);
            }
            _ => {}
        }
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            out,
        );
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// SSE event).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.encode_into(Wire::from(event), events));
    }

    /// [`encode`](Self::encode) into one buffer, from a step.
    pub(crate) fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        match step {
            Wire::Start(_) => {
                let response = shell(&self.id, &self.model, self.created);
                self.push(
                    "response.created",
                    json!({ "response": response.clone() }),
                    out,
                );
                self.push("response.in_progress", json!({ "response": response }), out);
            }
            Wire::BlockStart { index, blocks, .. } => self.open(index, blocks, out),
            Wire::Delta {
                kind,
                index,
                delta,
                blocks,
            } => {
                self.open(index, blocks, out);
                let event = match kind {
                    Kind::Text => "response.output_text.delta",
                    Kind::Thinking => "response.reasoning_summary_text.delta",
                    Kind::ToolCall => {
                        self.streamed.push(index);
                        "response.function_call_arguments.delta"
                    }
                };
                self.deltas(event, index, delta, out);
            }
            Wire::BlockEnd { index, blocks, .. } => {
                self.open(index, blocks, out);
                if let Some(block) = blocks.block(index) {
                    self.close(index, &block, out);
                }
            }
            Wire::ToolCallEnd {
                index,
                call,
                blocks,
            } => {
                self.open(index, blocks, out);
                let block = ContentBlock::ToolCall(call.clone());
                if !self.streamed.contains(&index) {
                    let text = arguments_text(call);
                    self.deltas("response.function_call_arguments.delta", index, &text, out);
                }
                self.close(index, &block, out);
            }
            Wire::Done { reason, message } => {
                if let Some(open) = self.current {
                    if let Some(block) = message.content.get(open) {
                        self.close(open, block, out);
                    }
                }
                let body = response(&self.id, &self.model, self.created, reason, message);
                let kind = if reason == DoneReason::Length {
                    "response.incomplete"
                } else {
                    "response.completed"
                };
                self.push(kind, json!({ "response": body }), out);
            }
            Wire::Error(error) => {
                let failure = ApiError::model_failure(error);
                let mut body = shell(&self.id, &self.model, self.created);
                body["status"] = "failed".into();
                body["error"] = json!({"code": "server_error", "message": failure.message});
                body["usage"] = usage_json(&error.usage);
                self.push("response.failed", json!({ "response": body }), out);
            }
        }
    }

    /// Appends a mid-stream `error` event (`code`, `message`, `param`).
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.error_into(error, events));
    }

    /// [`error`](Self::error) into one buffer.
    pub(crate) fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        let object = error.error_object(Api::Responses);
        let payload = json!({
            "code": error.code.clone().unwrap_or_else(|| error.type_for(Api::Responses).into()),
            "message": object["message"],
            "param": object["param"],
        });
        self.push("error", payload, out);
    }
}
