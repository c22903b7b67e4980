//! Google Gemini, the server's writing of an answer: model events to
//! the SSE events the provider sends (what the
//! client's projector reads), and the one JSON answer of a call that did
//! not stream.
//!
//! # What is written
//!
//! One `data: {GenerateContentResponse}` per piece: `candidates[0]` with
//! `content: {"role": "model", "parts": [...]}` and `index: 0`, the
//! `modelVersion` and `responseId`. A text or thinking delta is a `text`
//! part (`thought: true` for thinking); a block that ends with a
//! signature sends it on an empty part of its kind; a tool call is one
//! `functionCall` part with its whole `args` (and its `thoughtSignature`)
//! when it ends. The last chunk has no parts, the `finishReason` (`STOP`,
//! also for tool calls, as Gemini sends it; `MAX_TOKENS` for a `length`
//! turn) and `usageMetadata` (see [`usage_json`]). A model error after
//! HTTP 200 is a chunk `{"error": {"code", "message", "status"}}`.

use crate::server::prelude::*;
use agentstream::message::{AssistantMessage, ContentBlock, ToolCall, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent};
use serde_json::{json, Value};

use super::signature::to_wire;
use crate::server::error::{Api, ApiError};
use crate::server::events::{self as frames, Events};
use crate::server::steps::{Blocks, Kind, Wire};

/// Gemini's `usageMetadata` for a Pi usage: `promptTokenCount` is input +
/// cacheRead, `cachedContentTokenCount` cacheRead (when not 0),
/// `candidatesTokenCount` output, `totalTokenCount` totalTokens (or the
/// sum). Pi's output already counts thoughts, so no `thoughtsTokenCount`
/// is sent (the projector adds it to the output).
pub fn usage_json(usage: &Usage) -> Value {
    let (prompt, total) = crate::server::tokens::prompt_and_total(usage);
    let mut metadata = json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output,
        "totalTokenCount": total,
    });
    if usage.cache_read > 0 {
        metadata["cachedContentTokenCount"] = usage.cache_read.into();
    }
    metadata
}

fn finish_reason(reason: DoneReason) -> &'static str {
    match reason {
        DoneReason::Length => "MAX_TOKENS",
        _ => "STOP",
    }
}

/// A `functionCall` part with the whole arguments, and the call's
/// `thoughtSignature`.
fn call_part(call: &ToolCall) -> Value {
    let mut part = json!({"functionCall": {"name": call.name, "args": call.arguments}});
    if let Some(signature) = call.thought_signature.as_deref().filter(|s| !s.is_empty()) {
        part["thoughtSignature"] = to_wire(signature).into();
    }
    part
}

/// A text part (`thought: true` for thinking), with a signature.
fn text_part(text: &str, thought: bool, signature: Option<&str>) -> Value {
    let mut part = json!({ "text": text });
    if thought {
        part["thought"] = true.into();
    }
    if let Some(signature) = signature.filter(|s| !s.is_empty()) {
        part["thoughtSignature"] = to_wire(signature).into();
    }
    part
}

fn block_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text(t) => Some(text_part(&t.text, false, t.text_signature.as_deref())),
        ContentBlock::Thinking(t) => Some(text_part(
            &t.thinking,
            true,
            t.thinking_signature.as_deref(),
        )),
        ContentBlock::ToolCall(call) => Some(call_part(call)),
        _ => None,
    }
}

/// One `GenerateContentResponse` with `parts`, a `finishReason` and
/// usage when given.
fn chunk(
    parts: Vec<Value>,
    finish: Option<&str>,
    usage: Option<Value>,
    model: &str,
    id: &str,
) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = reason.into();
    }
    let mut body = json!({"candidates": [candidate], "modelVersion": model, "responseId": id});
    if let Some(usage) = usage {
        body["usageMetadata"] = usage;
    }
    body
}

/// The non-streaming answer: one `GenerateContentResponse` with every
/// block as a part.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_wire::gemini::encode::generate_content_response;
///
/// let message = assistant([text("hi")], StopReason::Stop);
/// let body = generate_content_response("r1", "gemini-2.5-flash", DoneReason::Stop, &message);
/// assert_eq!(body["candidates"][0]["content"]["parts"][0]["text"], "hi");
/// assert_eq!(body["candidates"][0]["finishReason"], "STOP");
/// ```
pub fn generate_content_response(
    id: &str,
    model: &str,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Value {
    let parts = message.content.iter().filter_map(block_part).collect();
    chunk(
        parts,
        Some(finish_reason(reason)),
        Some(usage_json(&message.usage)),
        model,
        id,
    )
}

/// Turns model events into Gemini SSE chunks (`data: {…}`, no event
/// names), one call at a time: a chunk per text or thinking delta, an
/// empty part carrying a block's signature when it ends, a chunk per tool
/// call with its whole `args`, and a last chunk with the `finishReason`
/// and `usageMetadata`.
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream_wire::gemini::encode::StreamEncoder;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let stream = model.stream(&Context::from_messages([user("hello").into()]), StreamOptions::default());
/// let events: Vec<_> = futures_executor::block_on(stream.collect());
/// let mut encoder = StreamEncoder::new("r1", "gemini-2.5-flash");
/// let mut sse = Vec::new();
/// for event in &events {
///     encoder.encode(event, &mut sse);
/// }
/// assert!(sse[0].contains(r#""text":"hi""#));
/// assert!(sse.last().unwrap().contains(r#""finishReason":"STOP""#));
/// ```
#[derive(Debug)]
pub struct StreamEncoder {
    id: String,
    model: String,
    chunks: usize,
    /// The text or thinking block streaming now, whose signature (if it
    /// has one) is sent when it ends.
    current: Option<usize>,
}

impl StreamEncoder {
    /// An encoder for the response `id` (`responseId`) of `model`
    /// (`modelVersion`).
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            model: model.into(),
            chunks: 1,
            current: None,
        }
    }

    /// Splits every delta into up to `chunks` chunks (at least 1).
    #[must_use]
    pub fn with_chunks(mut self, chunks: usize) -> Self {
        self.chunks = chunks.max(1);
        self
    }

    fn parts(&self, parts: Vec<Value>, out: &mut Events) {
        out.json(None, &chunk(parts, None, None, &self.model, &self.id));
    }

    fn deltas(&self, delta: &str, thought: bool, out: &mut Events) {
        for piece in frames::split(delta, self.chunks) {
            self.parts(vec![text_part(piece, thought, None)], out);
        }
    }

    /// Ends the streaming block unless it is `index`: its signature, if
    /// any, goes on an empty part of its kind (a model may end a block
    /// with no end event: the next block, or the end, ends it).
    fn end_other(&mut self, index: Option<usize>, block: Option<BlockShape<'_>>, out: &mut Events) {
        if self.current.is_none() || self.current == index {
            return;
        }
        self.current = None;
        let (thought, signature) = match block {
            Some(BlockShape::Text(t)) => (false, t.text_signature.as_deref()),
            Some(BlockShape::Thinking(t)) => (true, t.thinking_signature.as_deref()),
            _ => (false, None),
        };
        if let Some(signature) = signature.filter(|s| !s.is_empty()) {
            self.parts(vec![text_part("", thought, Some(signature))], out);
        }
    }

    fn delta(
        &mut self,
        index: usize,
        blocks: Blocks<'_>,
        delta: &str,
        thought: bool,
        out: &mut Events,
    ) {
        if let Some(open) = self.current.filter(|&open| open != index) {
            self.end_other(Some(index), blocks.shape(open), out);
        }
        self.current = Some(index);
        self.deltas(delta, thought, out);
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// SSE event).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.encode_into(Wire::from(event), events));
    }

    /// [`encode`](Self::encode) into one buffer, from a step.
    pub(crate) fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        match step {
            Wire::Delta {
                kind: kind @ (Kind::Text | Kind::Thinking),
                index,
                delta,
                blocks,
            } => self.delta(index, blocks, delta, kind == Kind::Thinking, out),
            Wire::BlockEnd { index, blocks, .. } if self.current == Some(index) => {
                self.end_other(None, blocks.shape(index), out);
            }
            Wire::ToolCallEnd { call, blocks, .. } => {
                if let Some(open) = self.current {
                    self.end_other(None, blocks.shape(open), out);
                }
                self.parts(vec![call_part(call)], out);
            }
            Wire::Done { reason, message } => {
                if let Some(open) = self.current {
                    self.end_other(None, message.content.get(open).map(BlockShape::from), out);
                }
                out.json(
                    None,
                    &chunk(
                        Vec::new(),
                        Some(finish_reason(reason)),
                        Some(usage_json(&message.usage)),
                        &self.model,
                        &self.id,
                    ),
                );
            }
            Wire::Error(error) => self.error_into(&ApiError::model_failure(error), out),
            _ => {}
        }
    }

    /// Appends a mid-stream error: `data: {"error": {"code", "message",
    /// "status"}}`, as Gemini sends one after HTTP 200.
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.error_into(error, events));
    }

    /// [`error`](Self::error) into one buffer.
    pub(crate) fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        out.json(None, &error.body(Api::Gemini));
    }
}
