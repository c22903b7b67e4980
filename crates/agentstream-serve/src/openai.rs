//! OpenAI Chat Completions, sans IO: a request body to a Pi
//! [`Context`](agentstream::message::Context), and model events to the SSE
//! chunks (or the one JSON completion) OpenAI sends.
//!
//! # Requests
//!
//! `messages` is required (an array); everything else is optional.
//! `system` and `developer` messages become the system prompt (several
//! are joined with a blank line); `user` content is a string or an array
//! of `text` and `image_url` parts (a `data:` URL becomes an image block,
//! other URLs are dropped); `assistant` content, `reasoning_content` and
//! `tool_calls` become text, thinking and tool-call blocks (arguments that
//! are not a JSON object become `{}` with the text kept as
//! `rawArguments`); `tool` messages become tool results, named after the
//! call they answer. `tools` of type `function` become Pi tools. Decoded
//! messages have timestamp 0, zero usage, and `stopReason` `toolUse` when
//! they call tools, else `stop`, so recordings are deterministic.
//!
//! # Streams
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

use std::collections::BTreeMap;

use agentstream::message::{
    AssistantMessage, ContentBlock, ThinkingContent, ToolCall, Usage, UserContent,
};
use agentstream::model::{DoneReason, ModelEvent};
use serde_json::{json, Map, Value};

use crate::error::{Api, ApiError};
use crate::frames::{self, sse, sse_text};
use crate::options;
use crate::request::{
    self, arguments_from_text, image_block, joined_text, str_at, text_block, DecodedRequest,
    History,
};

const PROVIDER: &str = "openai";

/// Decodes a Chat Completions request body.
///
/// ```
/// use agentstream_serve::openai::decode_request;
/// use serde_json::json;
///
/// let body = json!({"model": "gpt-4o", "stream": true, "messages": [
///     {"role": "system", "content": "Be brief."},
///     {"role": "user", "content": "Hi"},
/// ]});
/// let request = decode_request(&body).unwrap();
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert_eq!(request.context.messages.len(), 1);
/// assert!(request.stream);
///
/// let error = decode_request(&json!({"model": "gpt-4o"})).unwrap_err();
/// assert_eq!((error.status, error.param.as_deref()), (400, Some("messages")));
/// ```
///
/// # Errors
/// The 400 [`ApiError`] OpenAI answers with: a body that is not an
/// object, a missing or malformed `messages`, a message without a known
/// role.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ApiError> {
    decode(request::common(body, messages_error)?)
}

/// [`decode_request`] from the body's bytes, with memory proportional to
/// the body: the messages are parsed one at a time.
///
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    decode(request::common_bytes(body, messages_error)?)
}

fn messages_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => ApiError::new(
            400,
            format!(
                "Invalid type for 'messages': expected an array, but got {} instead.",
                request::kind(other)
            ),
        )
        .with_param("messages")
        .with_code("invalid_type"),
        None => ApiError::new(400, "Missing required parameter: 'messages'.")
            .with_param("messages")
            .with_code("missing_required_parameter"),
    }
}

fn decode(request: request::Common<'_>) -> Result<DecodedRequest, ApiError> {
    let include_usage = request
        .object
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let mut history = History::new(Api::OpenAi, PROVIDER, &request.model);
    let mut system = Vec::new();
    request.messages.each(|i, message| {
        let bad = |what: &str| {
            ApiError::new(400, format!("Invalid value for 'messages[{i}]': {what}"))
                .with_param(format!("messages[{i}]"))
                .with_code("invalid_value")
        };
        if !message.is_object() {
            return Err(bad("expected an object"));
        }
        let content = message.get("content").unwrap_or(&Value::Null);
        match message.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => system.push(plain_text(content)),
            Some("user") => history.user(user_content(content)),
            Some("assistant") => history.assistant(assistant_blocks(message, content)),
            Some("tool") => history.tool_result(
                str_at(message, &["tool_call_id"]),
                vec![text_block(plain_text(content))],
                false,
            ),
            Some(other) => {
                return Err(bad(&format!(
                "unknown role '{other}', expected one of system, developer, user, assistant, tool"
            )))
            }
            None => return Err(bad("missing 'role'")),
        }
        Ok(())
    })?;
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    let tools = request::tools(
        &request.object,
        Some("function"),
        "parameters",
        &json!({"type": "object", "properties": {}}),
    );
    let options = options::openai(&request.object);
    Ok(history.finish(request, system, tools, include_usage, options))
}

/// An assistant message's blocks: `reasoning_content`, `content`, then
/// `tool_calls`.
fn assistant_blocks(message: &Value, content: &Value) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    if let Some(reasoning) = message
        .get("reasoning_content")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        blocks.push(ContentBlock::Thinking(ThinkingContent {
            thinking: reasoning.into(),
            ..ThinkingContent::default()
        }));
    }
    let text = plain_text(content);
    if !text.is_empty() {
        blocks.push(text_block(text));
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (arguments, raw_arguments) =
            arguments_from_text(&str_at(call, &["function", "arguments"]));
        blocks.push(ContentBlock::ToolCall(ToolCall {
            id: str_at(call, &["id"]),
            name: str_at(call, &["function", "name"]),
            arguments,
            raw_arguments,
            ..ToolCall::default()
        }));
    }
    blocks
}

/// A content that is a string or an array of `text` parts, as one text.
fn plain_text(content: &Value) -> String {
    joined_text(content, "")
}

fn user_content(content: &Value) -> UserContent {
    let Value::Array(parts) = content else {
        return UserContent::Text(plain_text(content));
    };
    let blocks = parts
        .iter()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("text") => Some(text_block(str_at(part, &["text"]))),
            Some("image_url") => {
                let url = str_at(part, &["image_url", "url"]);
                let (mime_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
                Some(image_block(data.to_owned(), mime_type.to_owned()))
            }
            _ => None,
        })
        .collect();
    UserContent::Blocks(blocks)
}

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

/// The non-streaming answer: one `chat.completion` object.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::DoneReason;
/// use agentstream_serve::openai::completion;
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
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            })
        })
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
/// use agentstream_serve::openai::StreamEncoder;
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
}

impl StreamEncoder {
    /// An encoder for the response `id` of `model`, created at `created`
    /// (Unix seconds).
    pub fn new(id: impl Into<String>, model: impl Into<String>, created: u64) -> Self {
        let (id, model) = (id.into(), model.into());
        // The keys in the order serde_json's maps write them (sorted), as
        // `chunk` does.
        let tail = format!(
            r#","created":{created},"id":{},"model":{},"object":"chat.completion.chunk","system_fingerprint":null}}"#,
            frames::json_str(&id),
            frames::json_str(&model),
        );
        Self {
            id,
            model,
            created,
            include_usage: false,
            chunks: 1,
            calls: BTreeMap::new(),
            tail,
        }
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

    /// The chunk of one choice with `delta` (JSON text) and
    /// `finish_reason` (JSON text), written without building a JSON tree:
    /// the same bytes as `chunk` would give.
    fn choice(&self, delta: &str, finish_reason: &str) -> String {
        let mut text = String::with_capacity(delta.len() + self.tail.len() + 80);
        text.push_str(r#"{"choices":[{"delta":"#);
        text.push_str(delta);
        text.push_str(r#","finish_reason":"#);
        text.push_str(finish_reason);
        text.push_str(r#","index":0,"logprobs":null}]"#);
        text.push_str(&self.tail);
        sse_text(None, text)
    }

    fn delta(&self, delta: &str) -> String {
        self.choice(delta, "null")
    }

    /// The chunk announcing the tool call at `index`, if not done yet.
    fn announce(&mut self, index: usize, call: Option<&ToolCall>, out: &mut Vec<String>) {
        if self.calls.contains_key(&index) {
            return;
        }
        let ordinal = self.calls.len();
        self.calls.insert(index, ordinal);
        let (id, name) = call.map_or((String::new(), String::new()), |c| {
            (c.id.clone(), c.name.clone())
        });
        out.push(self.delta(&format!(
            r#"{{"tool_calls":[{{"function":{{"arguments":"","name":{}}},"id":{},"index":{ordinal},"type":"function"}}]}}"#,
            frames::json_str(&name),
            frames::json_str(&id),
        )));
    }

    fn arguments(&self, index: usize, text: &str, out: &mut Vec<String>) {
        let ordinal = self.calls.get(&index).copied().unwrap_or_default();
        for piece in frames::split(text, self.chunks) {
            out.push(self.delta(&format!(
                r#"{{"tool_calls":[{{"function":{{"arguments":{}}},"index":{ordinal}}}]}}"#,
                frames::json_str(piece),
            )));
        }
    }

    /// Appends the SSE events for `event` to `out` (each a complete
    /// `data: …\n\n`).
    pub fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        match event {
            ModelEvent::Start { .. } => {
                out.push(self.delta(r#"{"content":"","role":"assistant"}"#));
            }
            ModelEvent::TextDelta { delta, .. } => {
                for piece in frames::split(delta, self.chunks) {
                    out.push(self.delta(&format!(r#"{{"content":{}}}"#, frames::json_str(piece))));
                }
            }
            ModelEvent::ThinkingDelta { delta, .. } => {
                for piece in frames::split(delta, self.chunks) {
                    out.push(self.delta(&format!(
                        r#"{{"reasoning_content":{}}}"#,
                        frames::json_str(piece)
                    )));
                }
            }
            ModelEvent::ToolCallStart {
                content_index,
                partial,
            } => {
                let call = partial.content_block(*content_index);
                self.announce(*content_index, call.as_ref().and_then(as_call), out);
            }
            ModelEvent::ToolCallDelta {
                content_index,
                delta,
                partial,
            } => {
                let call = partial.content_block(*content_index);
                self.announce(*content_index, call.as_ref().and_then(as_call), out);
                self.arguments(*content_index, delta, out);
            }
            // A call that streamed no fragments: all of it at once.
            ModelEvent::ToolCallEnd {
                content_index,
                tool_call,
                ..
            } if !self.calls.contains_key(content_index) => {
                self.announce(*content_index, Some(tool_call), out);
                self.arguments(*content_index, &arguments_text(tool_call), out);
            }
            ModelEvent::Done { reason, message } => {
                out.push(self.choice("{}", &frames::json_str(finish_reason(*reason))));
                if self.include_usage {
                    let mut chunk = self.chunk(json!([]));
                    chunk["usage"] = usage_json(&message.usage);
                    out.push(sse(None, &chunk));
                }
                out.push("data: [DONE]\n\n".into());
            }
            ModelEvent::Error { error, .. } => self.error(&ApiError::model_failure(error), out),
            _ => {}
        }
    }

    /// Appends a mid-stream error event: `data: {"error": {…}}`.
    pub fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        out.push(sse(
            None,
            &json!({"error": error.error_object(Api::OpenAi)}),
        ));
    }
}

fn as_call(block: &ContentBlock) -> Option<&ToolCall> {
    block.as_tool_call()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_written_as_text_are_the_json_trees_values() {
        let encoder = StreamEncoder::new("chatcmpl-\"x\"", "gpt-ü", 1_700_000_000);
        for (delta, finish) in [
            (
                json!({"content": "a \"quoted\"\nline é 😀 \u{1}"}),
                Value::Null,
            ),
            (json!({"content": "", "role": "assistant"}), Value::Null),
            (json!({"reasoning_content": "think"}), Value::Null),
            (
                json!({"tool_calls": [{"function": {"arguments": "{\"a\":1}"}, "index": 2}]}),
                Value::Null,
            ),
            (
                json!({"tool_calls": [{"function": {"arguments": "", "name": "ls"},
                    "id": "call_1", "index": 0, "type": "function"}]}),
                Value::Null,
            ),
            (json!({}), json!("tool_calls")),
        ] {
            let tree = sse(
                None,
                &encoder.chunk(json!([{"index": 0, "delta": delta, "logprobs": null,
                                       "finish_reason": finish}])),
            );
            crate::frames::assert_same_frames(
                &encoder.choice(&delta.to_string(), &finish.to_string()),
                &tree,
            );
        }
    }
    use agentstream::message::Message;

    #[test]
    fn a_tool_round_trip_history_decodes() {
        let body = json!({"model": "m", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "weather?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        ], "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]});
        let request = decode_request(&body).unwrap();
        let messages = &request.context.messages;
        assert_eq!(messages.len(), 3);
        let Message::User(user) = &messages[0] else {
            panic!("{messages:?}")
        };
        assert!(matches!(&user.content, UserContent::Blocks(b) if b.len() == 2));
        let Message::Assistant(call) = &messages[1] else {
            panic!("{messages:?}")
        };
        assert_eq!(call.tool_calls().next().unwrap().arguments["city"], "Paris");
        let Message::ToolResult(result) = &messages[2] else {
            panic!("{messages:?}")
        };
        assert_eq!(
            (result.tool_name.as_str(), result.text()),
            ("weather", "18C".into())
        );
        assert_eq!(request.context.tools.unwrap()[0].name, "weather");
    }

    #[test]
    fn bad_requests_get_openai_errors() {
        for (body, param) in [
            (json!([1]), None),
            (json!({"messages": {}}), Some("messages")),
            (
                json!({"messages": [{"role": "wizard"}]}),
                Some("messages[0]"),
            ),
            (json!({"messages": [3]}), Some("messages[0]")),
        ] {
            let error = decode_request(&body).unwrap_err();
            assert_eq!(error.status, 400);
            assert_eq!(error.param.as_deref(), param, "{body}");
            assert_eq!(
                error.body(Api::OpenAi)["error"]["type"],
                "invalid_request_error"
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
                tool_call: Box::new(call),
                partial,
            },
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert!(out[0].contains(r#""id":"c1""#), "{}", out[0]);
        assert!(out[1].contains(r#""arguments":"{}""#), "{}", out[1]);
    }
}
