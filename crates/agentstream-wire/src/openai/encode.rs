//! OpenAI Chat Completions, the server's writing of an answer: model events to
//! the SSE events the provider sends (what the
//! client's projector reads), and the one JSON answer of a call that did
//! not stream.
//!
//! # What is written
//!
//! As the recordings of api.openai.com show: a first chunk with
//! `delta: {"role": "assistant", "content": ""}`, then one chunk per text
//! delta (`content`), thinking delta (`reasoning_content`, as DeepSeek and
//! vLLM send it) and tool-call fragment (the first with the call's `index`,
//! `id`, `type` and `name` and empty `arguments`, the later ones with
//! `index` and `arguments` only), then the `finish_reason` (`stop`,
//! `length`, `tool_calls`) on a chunk of its own with an empty delta, a
//! usage chunk with `choices: []` when `stream_options.include_usage` is
//! set, and `data: [DONE]`. Usage maps back the way the chunk projector
//! reads it: `prompt_tokens` is input + cacheRead, `cached_tokens` is
//! cacheRead, `completion_tokens` is output, `total_tokens` is
//! `totalTokens` (or the sum); cacheWrite has no OpenAI field and is
//! dropped.
//!
//! A model `error` mid-stream becomes a chunk `{"error": {…}}` and the body
//! ends without `[DONE]`, which is what the SDKs raise on.

use crate::server::prelude::*;
use alloc::collections::BTreeMap;

use agentstream::message::{AssistantMessage, ContentBlock, ToolCall, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent};
use serde_json::{json, Map, Value};

use crate::server::error::{Api, ApiError};
use crate::server::events::{self as frames, Events};
use crate::server::steps::{Blocks, Kind, Wire};

/// OpenAI's `usage` object for a Pi usage.
pub fn usage_json(usage: &Usage) -> Value {
    let prompt = usage.input.saturating_add(usage.cache_read);
    let total = usage
        .total_tokens
        .unwrap_or_else(|| prompt.saturating_add(usage.output));
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": total,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        "completion_tokens_details": {"reasoning_tokens": 0},
    })
}

fn finish_reason(reason: DoneReason) -> &'static str {
    match reason {
        DoneReason::Length => "length",
        DoneReason::ToolUse => "tool_calls",
        _ => "stop",
    }
}

/// [`finish_reason`] as JSON text.
fn finish_reason_json(reason: DoneReason) -> &'static str {
    match reason {
        DoneReason::Length => r#""length""#,
        DoneReason::ToolUse => r#""tool_calls""#,
        _ => r#""stop""#,
    }
}

/// The non-streaming answer: one `chat.completion` object.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_wire::openai::encode::completion;
///
/// let message = assistant([text("hi")], StopReason::Stop);
/// let body = completion("chatcmpl-1", "gpt-4o", 0, DoneReason::Stop, &message);
/// assert_eq!(body["choices"][0]["message"]["content"], "hi");
/// assert_eq!(body["choices"][0]["finish_reason"], "stop");
/// ```
pub fn completion(
    id: &str,
    model: &str,
    created: u64,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Value {
    let text = message.text();
    let reasoning: String = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(t) if t.redacted != Some(true) => Some(t.thinking.as_str()),
            _ => None,
        })
        .collect();
    let mut body = Map::new();
    body.insert("role".into(), "assistant".into());
    body.insert(
        "content".into(),
        if text.is_empty() && message.tool_calls().next().is_some() {
            Value::Null
        } else {
            text.into()
        },
    );
    body.insert("refusal".into(), Value::Null);
    if !reasoning.is_empty() {
        body.insert("reasoning_content".into(), reasoning.into());
    }
    let calls: Vec<Value> = message
        .tool_calls()
        .map(super::request::tool_call_json)
        .collect();
    if !calls.is_empty() {
        body.insert("tool_calls".into(), calls.into());
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": body,
            "logprobs": null,
            "finish_reason": finish_reason(reason),
        }],
        "usage": usage_json(&message.usage),
        "system_fingerprint": null,
    })
}

fn arguments_text(call: &ToolCall) -> String {
    serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into())
}

/// Turns model events into Chat Completions SSE events, one call at a
/// time.
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream_wire::openai::encode::StreamEncoder;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let stream = model.stream(&Context::from_messages([user("hello").into()]), StreamOptions::default());
/// let events: Vec<_> = futures_executor::block_on(stream.collect());
/// let mut encoder = StreamEncoder::new("chatcmpl-1", "gpt-4o", 0).with_usage(true);
/// let mut sse = Vec::new();
/// for event in &events {
///     encoder.encode(event, &mut sse);
/// }
/// assert!(sse[0].contains(r#""role":"assistant""#));
/// assert!(sse[1].contains(r#""content":"hi""#));
/// assert!(sse[2].contains(r#""finish_reason":"stop""#));
/// assert!(sse[3].contains(r#""usage""#));
/// assert_eq!(sse[4], "data: [DONE]\n\n");
/// ```
#[derive(Debug)]
pub struct StreamEncoder {
    id: String,
    model: String,
    created: u64,
    include_usage: bool,
    chunks: usize,
    /// Tool-call `index` by Pi content index, for calls announced so far.
    calls: BTreeMap<usize, usize>,
    /// What follows `"choices"` in every chunk: the same for the whole
    /// stream, so written once.
    tail: String,
    /// Mistral's dialect: thinking as `thinking` content items, every
    /// tool-call chunk with the call's id and name, no empty first
    /// `content`.
    mistral: bool,
    /// Tool-call ids and names by Pi content index (Mistral's dialect
    /// only).
    ids: BTreeMap<usize, (String, String)>,
}

impl StreamEncoder {
    /// An encoder for the response `id` of `model`, created at `created`
    /// (Unix seconds).
    pub fn new(id: impl Into<String>, model: impl Into<String>, created: u64) -> Self {
        let (id, model) = (id.into(), model.into());
        // The keys in the order serde_json's maps write them (sorted), as
        // `chunk` does.
        let mut tail = String::with_capacity(96 + id.len() + model.len());
        tail.push_str(",\"created\":");
        tail.push_str(itoa::Buffer::new().format(created));
        tail.push_str(",\"id\":");
        frames::push_json_str(&mut tail, &id);
        tail.push_str(",\"model\":");
        frames::push_json_str(&mut tail, &model);
        tail.push_str(r#","object":"chat.completion.chunk","system_fingerprint":null}"#);
        Self {
            id,
            model,
            created,
            include_usage: false,
            chunks: 1,
            calls: BTreeMap::new(),
            tail,
            mistral: false,
            ids: BTreeMap::new(),
        }
    }

    /// Mistral's dialect of the stream (see the `mistral` module): thinking
    /// as `thinking` content items, each tool-call chunk naming its call's
    /// id and function name (Mistral's clients key calls by id, and its
    /// Python SDK requires the name in every chunk), no empty first
    /// `content`.
    #[must_use]
    pub(crate) fn for_mistral(mut self) -> Self {
        self.mistral = true;
        self
    }

    /// Sends the usage chunk (`stream_options.include_usage`).
    #[must_use]
    pub fn with_usage(mut self, include_usage: bool) -> Self {
        self.include_usage = include_usage;
        self
    }

    /// Splits every delta into up to `chunks` chunks (at least 1).
    #[must_use]
    pub fn with_chunks(mut self, chunks: usize) -> Self {
        self.chunks = chunks.max(1);
        self
    }

    fn chunk(&self, choices: Value) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": null,
            "choices": choices,
        })
    }

    /// Starts the chunk of one choice; its delta (JSON text) follows.
    fn start_delta(out: &mut Events) -> &mut Events {
        out.start(None).raw(r#"{"choices":[{"delta":"#)
    }

    /// Ends the chunk started by `start_delta` with `finish_reason` (JSON
    /// text): the same bytes as `chunk` would give.
    fn end_delta(&self, finish_reason: &str, out: &mut Events) {
        out.raw(r#","finish_reason":"#)
            .raw(finish_reason)
            .raw(r#","index":0,"logprobs":null}]"#)
            .raw(&self.tail)
            .end();
    }

    /// A chunk whose delta is one field (`{"field":"piece"}`) per piece of
    /// `text`.
    fn text_deltas(&self, field: &str, text: &str, out: &mut Events) {
        for piece in frames::split(text, self.chunks) {
            Self::start_delta(out)
                .raw("{\"")
                .raw(field)
                .raw("\":")
                .string(piece)
                .raw("}");
            self.end_delta("null", out);
        }
    }

    /// The chunk announcing the tool call at `index`, if not done yet
    /// (`call` is looked up only then).
    fn announce<'a>(
        &mut self,
        index: usize,
        call: impl FnOnce() -> Option<(&'a str, &'a str)>,
        out: &mut Events,
    ) {
        if self.calls.contains_key(&index) {
            return;
        }
        let ordinal = self.calls.len();
        self.calls.insert(index, ordinal);
        let (id, name) = call().unwrap_or_default();
        if self.mistral {
            self.ids.insert(index, (id.into(), name.into()));
        }
        Self::start_delta(out)
            .raw(r#"{"tool_calls":[{"function":{"arguments":"","name":"#)
            .string(name)
            .raw(r#"},"id":"#)
            .string(id)
            .raw(r#","index":"#)
            .number(ordinal as u64)
            .raw(r#","type":"function"}]}"#);
        self.end_delta("null", out);
    }

    fn arguments(&self, index: usize, text: &str, out: &mut Events) {
        let ordinal = self.calls.get(&index).copied().unwrap_or_default();
        for piece in frames::split(text, self.chunks) {
            let chunk = Self::start_delta(out)
                .raw(r#"{"tool_calls":[{"function":{"arguments":"#)
                .string(piece);
            let chunk = match self.ids.get(&index) {
                Some((id, name)) => chunk
                    .raw(r#","name":"#)
                    .string(name)
                    .raw(r#"},"id":"#)
                    .string(id)
                    .raw(","),
                None => chunk.raw("},"),
            };
            chunk.raw(r#""index":"#).number(ordinal as u64).raw("}]}");
            self.end_delta("null", out);
        }
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// `data: …\n\n`).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.encode_into(Wire::from(event), events));
    }

    /// [`encode`](Self::encode) into one buffer, from a step.
    pub(crate) fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        match step {
            Wire::Start(_) => {
                let delta = if self.mistral {
                    r#"{"role":"assistant"}"#
                } else {
                    r#"{"content":"","role":"assistant"}"#
                };
                Self::start_delta(out).raw(delta);
                self.end_delta("null", out);
            }
            Wire::Delta {
                kind: Kind::Text,
                delta,
                ..
            } => self.text_deltas("content", delta, out),
            Wire::Delta {
                kind: Kind::Thinking,
                delta,
                ..
            } if self.mistral => {
                for piece in frames::split(delta, self.chunks) {
                    Self::start_delta(out)
                        .raw(r#"{"content":[{"thinking":[{"text":"#)
                        .string(piece)
                        .raw(r#","type":"text"}],"type":"thinking"}]}"#);
                    self.end_delta("null", out);
                }
            }
            Wire::Delta {
                kind: Kind::Thinking,
                delta,
                ..
            } => self.text_deltas("reasoning_content", delta, out),
            Wire::BlockStart {
                kind: Kind::ToolCall,
                index,
                blocks,
            } => self.announce(index, || tool_call_shape(blocks, index), out),
            Wire::Delta {
                kind: Kind::ToolCall,
                index,
                delta,
                blocks,
            } => {
                self.announce(index, || tool_call_shape(blocks, index), out);
                self.arguments(index, delta, out);
            }
            // A call that streamed no fragments: all of it at once.
            Wire::ToolCallEnd { index, call, .. } if !self.calls.contains_key(&index) => {
                let shape = || Some((call.id.as_str(), call.name.as_str()));
                self.announce(index, shape, out);
                self.arguments(index, &arguments_text(call), out);
            }
            Wire::Done { reason, message } => {
                Self::start_delta(out).raw("{}");
                self.end_delta(finish_reason_json(reason), out);
                if self.include_usage {
                    let mut chunk = self.chunk(json!([]));
                    chunk["usage"] = usage_json(&message.usage);
                    out.json(None, &chunk);
                }
                out.raw("data: [DONE]").end();
            }
            Wire::Error(error) => {
                self.error_into(&ApiError::model_failure(error), out);
            }
            _ => {}
        }
    }

    /// Appends a mid-stream error event: `data: {"error": {…}}`.
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        Events::write_strings(out, |events| self.error_into(error, events));
    }

    /// [`error`](Self::error) into one buffer.
    pub(crate) fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        out.json(None, &json!({"error": error.error_object(Api::OpenAi)}));
    }
}

/// The id and name of the tool call at `index`, borrowed from the
/// message so far (its arguments are not materialized).
fn tool_call_shape(blocks: Blocks<'_>, index: usize) -> Option<(&str, &str)> {
    match blocks.shape(index)? {
        BlockShape::ToolCall(call) => Some((&call.id, &call.name)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_written_as_text_are_the_json_trees_values() {
        let mut encoder = StreamEncoder::new("chatcmpl-\"x\"", "gpt-ü", 1_700_000_000);
        let text = "a \"quoted\"\nline é 😀 \u{1}";
        let call = ToolCall {
            id: "call_1".into(),
            name: "ls".into(),
            ..ToolCall::default()
        };
        let mut out = Events::default();
        let mut expected = Vec::new();
        let mut tree = |delta: Value, finish: Value| {
            expected.push(frames::wire_event(
                None,
                &encoder.chunk(json!([{"index": 0, "delta": delta, "logprobs": null,
                                       "finish_reason": finish}])),
            ));
        };
        tree(json!({"content": text}), Value::Null);
        tree(json!({"reasoning_content": "think"}), Value::Null);
        tree(
            json!({"tool_calls": [{"function": {"arguments": "", "name": "ls"},
                "id": "call_1", "index": 0, "type": "function"}]}),
            Value::Null,
        );
        tree(
            json!({"tool_calls": [{"function": {"arguments": "{\"a\":1}"}, "index": 0}]}),
            Value::Null,
        );
        tree(json!({}), json!("tool_calls"));
        encoder.text_deltas("content", text, &mut out);
        encoder.text_deltas("reasoning_content", "think", &mut out);
        encoder.announce(2, || Some((&call.id, &call.name)), &mut out);
        encoder.arguments(2, "{\"a\":1}", &mut out);
        StreamEncoder::start_delta(&mut out).raw("{}");
        encoder.end_delta("\"tool_calls\"", &mut out);
        let written = out.into_strings();
        assert_eq!(written.len(), expected.len());
        for (written, expected) in written.iter().zip(&expected) {
            crate::server::events::assert_same_frames(written, expected);
        }
    }

    #[test]
    fn finish_reasons_as_json_text_are_the_quoted_reasons() {
        for reason in [DoneReason::Stop, DoneReason::Length, DoneReason::ToolUse] {
            assert_eq!(
                finish_reason_json(reason),
                serde_json::to_string(finish_reason(reason)).unwrap()
            );
        }
    }

    #[test]
    fn a_call_without_fragments_is_sent_whole() {
        let call = ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            ..ToolCall::default()
        };
        let mut encoder = StreamEncoder::new("id", "m", 0);
        let mut out = Vec::new();
        let partial = agentstream::model::PartialBuilder::new(agentstream::message::assistant(
            [],
            agentstream::message::StopReason::Stop,
        ))
        .snapshot();
        encoder.encode(
            &ModelEvent::ToolCallEnd {
                content_index: 0,
                tool_call: alloc::sync::Arc::new(call),
                partial,
            },
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert!(out[0].contains(r#""id":"c1""#), "{}", out[0]);
        assert!(out[1].contains(r#""arguments":"{}""#), "{}", out[1]);
    }
}
