//! Amazon Bedrock, the server's reading of a request: a Converse body
//! (what [`Bedrock`](super::Bedrock)'s body writer writes, read back) to
//! a Pi context and options.
//!
//! # What is read
//!
//! `messages` is required (a list); the model is the URL's
//! (`/model/{modelId}/converse-stream` or `/converse`, the id
//! percent-decoded). A `user` message's `text` and `image` blocks
//! (`source.bytes`, base64, and `format`) become a user message; its
//! `toolResult` blocks become tool results before it (`status: "error"`
//! an error result, the result's `text` and `image` blocks its content).
//! An `assistant` message becomes an assistant turn: `text` blocks text,
//! `toolUse {toolUseId, name, input}` tool calls, `reasoningContent.
//! reasoningText {text, signature}` thinking blocks. `cachePoint` blocks
//! are read as the cache retention (`ttl: "1h"` the long one). `system`
//! is the system prompt (its `text` blocks joined by a line break);
//! `toolConfig.tools[].toolSpec` become Pi tools (the schema
//! `inputSchema.json`). Options: `inferenceConfig` (`maxTokens`,
//! `temperature`, `topP`, `stopSequences`), `toolConfig.toolChoice`
//! (`auto`, `any`, `tool.name`) and Claude's thinking in
//! `additionalModelRequestFields` (`thinking.budget_tokens` of an
//! `enabled` thinking, `output_config.effort` of an `adaptive` one).

use crate::server::prelude::*;

use agentstream::message::{ContentBlock, ThinkingContent, Tool, ToolCall, UserContent};
use agentstream::model::{CacheRetention, ReasoningEffort, StreamOptions, ToolChoice};
use serde_json::{Map, Value};

use crate::server::error::{Api, ApiError};
use crate::server::request::{self, image_block, str_at, text_block, DecodedRequest, History};

/// The provider of the decoded assistant turns.
const PROVIDER: &str = "amazon-bedrock";

/// Decodes a Converse body for `model` (the URL's model id, as it stands
/// in the path: percent-decoded here), streaming or not (the URL's
/// `converse-stream` or `converse`).
///
/// ```
/// use agentstream_wire::bedrock::decode::decode_body;
///
/// let body = br#"{"messages": [{"role": "user", "content": [{"text": "Hi"}]}],
///                 "system": [{"text": "Be brief."}], "inferenceConfig": {"maxTokens": 64}}"#;
/// let request = decode_body(body, "anthropic.claude-3-haiku-20240307-v1%3A0", true).unwrap();
/// assert_eq!(request.model, "anthropic.claude-3-haiku-20240307-v1:0");
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert_eq!(request.options.max_tokens, Some(64));
/// ```
///
/// # Errors
/// The 400 [`ApiError`] Bedrock answers with (a `ValidationException`):
/// a body that is not a JSON object, a missing or malformed `messages`,
/// a message with an unknown role, a model id that does not
/// percent-decode to UTF-8.
pub fn decode_body(body: &[u8], model: &str, stream: bool) -> Result<DecodedRequest, ApiError> {
    let model = percent_decode(model)?;
    request::replacing_lone_surrogates(body, |body| {
        let mut request = request::common_bytes(body, messages_error)?;
        request.model = model.clone();
        request.stream = stream;
        decode(request)
    })
}

/// [`decode_body`] of a JSON value.
///
/// # Errors
/// As [`decode_body`].
pub fn decode_request(body: &Value, model: &str, stream: bool) -> Result<DecodedRequest, ApiError> {
    decode_body(body.to_string().as_bytes(), model, stream)
}

/// A 400 as Bedrock words it.
fn validation(message: String) -> ApiError {
    ApiError::new(400, message).with_type("ValidationException")
}

fn messages_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => validation(format!(
            "1 validation error detected: Value at 'messages' failed to satisfy constraint: \
             expected a list, found {}",
            agentstream::message::json_kind(other)
        )),
        None => validation(
            "1 validation error detected: Value null at 'messages' failed to satisfy \
             constraint: Member must not be null"
                .into(),
        ),
    }
}

/// A model id as the URL's path carries it, percent-decoded.
///
/// ```
/// use agentstream_wire::bedrock::decode::percent_decode;
/// assert_eq!(percent_decode("us.anthropic.claude-v1%3A0").unwrap(), "us.anthropic.claude-v1:0");
/// assert!(percent_decode("bad%zz").is_err());
/// ```
///
/// # Errors
/// A 400 for a `%` not followed by two hex digits or bytes that are not
/// UTF-8.
pub fn percent_decode(text: &str) -> Result<String, ApiError> {
    if !text.contains('%') {
        return Ok(text.to_owned());
    }
    let bad = || {
        validation(format!(
            "the model identifier '{text}' is not a valid URL path"
        ))
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = bytes.get(at + 1..at + 3).ok_or_else(bad)?;
            let hex = core::str::from_utf8(hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

fn decode(request: request::Common<'_>) -> Result<DecodedRequest, ApiError> {
    let object = request.object.clone();
    let mut history = History::new(Api::Bedrock, PROVIDER, &request.model);
    let mut retention = None;
    request.messages.each(|i, message| {
        let Some(message) = message.as_object() else {
            return Err(validation(format!(
                "1 validation error detected: Value at 'messages.{}' failed to satisfy \
                 constraint: expected an object",
                i + 1
            )));
        };
        let blocks: &[Value] = message
            .get("content")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        for block in blocks {
            if let Some(point) = block.get("cachePoint") {
                retention = Some(match point.get("ttl").and_then(Value::as_str) {
                    Some("1h") => CacheRetention::Long,
                    _ => CacheRetention::Short,
                });
            }
        }
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                history.assistant(blocks.iter().filter_map(assistant_block).collect());
            }
            Some("user") => user(&mut history, blocks),
            other => {
                return Err(validation(format!(
                    "1 validation error detected: Value '{}' at 'messages.{}.member.role' \
                     failed to satisfy constraint: Member must satisfy enum value set: \
                     [user, assistant]",
                    other.unwrap_or("null"),
                    i + 1
                )))
            }
        }
        Ok(())
    })?;
    let system: Vec<&str> = object
        .get("system")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    if !system.is_empty() {
        retention = retention.or_else(|| system_retention(&object));
    }
    let system = (!system.is_empty()).then(|| system.join("\n"));
    let mut options = options(&object);
    options.cache_retention = retention;
    let tools = tools(&object);
    Ok(history.finish(request, system, tools, false, options))
}

/// The retention of a `cachePoint` in `system`.
fn system_retention(object: &Map<String, Value>) -> Option<CacheRetention> {
    let point = object
        .get("system")?
        .as_array()?
        .iter()
        .find_map(|block| block.get("cachePoint"))?;
    Some(match point.get("ttl").and_then(Value::as_str) {
        Some("1h") => CacheRetention::Long,
        _ => CacheRetention::Short,
    })
}

/// An image block of Converse's `{"source": {"bytes"}, "format"}`.
fn image(image: &Value) -> Option<ContentBlock> {
    let data = image.get("source")?.get("bytes")?.as_str()?;
    let format = str_at(image, &["format"]);
    let mime = match format.as_str() {
        "jpeg" | "jpg" => "image/jpeg".to_owned(),
        other => format!("image/{other}"),
    };
    Some(image_block(data.to_owned(), mime))
}

/// The text and image blocks of a user message or a tool result.
fn plain_block(block: &Value) -> Option<ContentBlock> {
    if let Some(text) = block.get("text").and_then(Value::as_str) {
        Some(text_block(text.to_owned()))
    } else {
        image(block.get("image")?)
    }
}

/// A user message: its tool results first, then the rest as one user
/// message.
fn user(history: &mut History, blocks: &[Value]) {
    let mut content = Vec::new();
    for block in blocks {
        if let Some(result) = block.get("toolResult") {
            let parts: Vec<ContentBlock> = result
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(plain_block)
                .collect();
            let is_error = result.get("status").and_then(Value::as_str) == Some("error");
            history.tool_result(str_at(result, &["toolUseId"]), parts, is_error);
        } else if let Some(block) = plain_block(block) {
            content.push(block);
        }
    }
    if content.is_empty() {
        return;
    }
    let content = match content.as_slice() {
        [ContentBlock::Text(t)] => UserContent::Text(t.text.clone()),
        _ => UserContent::Blocks(content),
    };
    history.user(content);
}

fn assistant_block(block: &Value) -> Option<ContentBlock> {
    if let Some(text) = block.get("text").and_then(Value::as_str) {
        return Some(text_block(text.to_owned()));
    }
    if let Some(call) = block.get("toolUse") {
        let arguments = match call.get("input") {
            Some(Value::Object(input)) => input.clone(),
            _ => Map::new(),
        };
        return Some(ContentBlock::ToolCall(ToolCall {
            id: str_at(call, &["toolUseId"]),
            name: str_at(call, &["name"]),
            arguments,
            ..ToolCall::default()
        }));
    }
    let reasoning = block.get("reasoningContent")?.get("reasoningText")?;
    Some(ContentBlock::Thinking(ThinkingContent {
        thinking: str_at(reasoning, &["text"]),
        thinking_signature: reasoning
            .get("signature")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..ThinkingContent::default()
    }))
}

/// `toolConfig.tools[].toolSpec` as Pi tools.
fn tools(object: &Map<String, Value>) -> Option<Vec<Tool>> {
    let tools: Vec<Tool> = object
        .get("toolConfig")?
        .get("tools")?
        .as_array()?
        .iter()
        .filter_map(|tool| tool.get("toolSpec"))
        .map(|spec| Tool {
            name: str_at(spec, &["name"]),
            description: str_at(spec, &["description"]),
            parameters: spec
                .get("inputSchema")
                .and_then(|schema| schema.get("json"))
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            extra: Map::new(),
        })
        .collect();
    (!tools.is_empty()).then_some(tools)
}

/// The options: `inferenceConfig`, `toolConfig.toolChoice`, Claude's
/// thinking fields.
fn options(object: &Map<String, Value>) -> StreamOptions {
    let mut options = StreamOptions::default();
    if let Some(config) = object.get("inferenceConfig") {
        options.max_tokens = config.get("maxTokens").and_then(Value::as_u64);
        options.temperature = config.get("temperature").and_then(Value::as_f64);
        options.top_p = config.get("topP").and_then(Value::as_f64);
        options.stop = config
            .get("stopSequences")
            .and_then(Value::as_array)
            .map(|stops| {
                stops
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
    }
    options.tool_choice = object
        .get("toolConfig")
        .and_then(|c| c.get("toolChoice"))
        .and_then(|choice| {
            if choice.get("auto").is_some() {
                Some(ToolChoice::Auto)
            } else if choice.get("any").is_some() {
                Some(ToolChoice::Required)
            } else {
                choice
                    .get("tool")
                    .map(|tool| ToolChoice::Tool(str_at(tool, &["name"])))
            }
        });
    let fields = object.get("additionalModelRequestFields");
    let thinking = fields.and_then(|f| f.get("thinking"));
    match thinking.and_then(|t| t.get("type")).and_then(Value::as_str) {
        Some("enabled") => {
            options.thinking_budget = thinking
                .and_then(|t| t.get("budget_tokens"))
                .and_then(Value::as_u64);
        }
        Some("adaptive") => {
            options.reasoning_effort = fields
                .and_then(|f| f.get("output_config"))
                .and_then(|c| c.get("effort"))
                .and_then(Value::as_str)
                .and_then(|effort| match effort {
                    "low" => Some(ReasoningEffort::Low),
                    "medium" => Some(ReasoningEffort::Medium),
                    "high" => Some(ReasoningEffort::High),
                    _ => None,
                });
        }
        _ => {}
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::Message;
    use serde_json::json;

    #[test]
    fn results_come_before_the_users_text_and_options_are_read() {
        let body = json!({
            "messages": [
                {"role": "user", "content": [{"text": "list"}]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "sig"}}},
                    {"toolUse": {"toolUseId": "t1", "name": "ls", "input": {"dir": "/"}}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "t1", "content": [{"text": "a b"}], "status": "error"}},
                    {"text": "and?"},
                    {"cachePoint": {"type": "default", "ttl": "1h"}}]},
            ],
            "inferenceConfig": {"maxTokens": 9, "temperature": 0.5, "stopSequences": ["x"]},
            "toolConfig": {"tools": [{"toolSpec": {"name": "ls", "description": "d",
                "inputSchema": {"json": {"type": "object"}}}}], "toolChoice": {"tool": {"name": "ls"}}},
            "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        });
        let request = decode_request(&body, "m", false).unwrap();
        let kinds: Vec<&str> = request
            .context
            .messages
            .iter()
            .map(|m| match m {
                Message::User(_) => "user",
                Message::Assistant(_) => "assistant",
                Message::ToolResult(r) if r.is_error && r.tool_name == "ls" => "error result",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "assistant", "error result", "user"]);
        let Message::Assistant(turn) = &request.context.messages[1] else {
            panic!()
        };
        assert_eq!(turn.api, "bedrock-converse-stream");
        let ContentBlock::Thinking(thinking) = &turn.content[0] else {
            panic!()
        };
        assert_eq!(thinking.thinking_signature.as_deref(), Some("sig"));
        let options = &request.options;
        assert_eq!(
            (options.max_tokens, options.temperature),
            (Some(9), Some(0.5))
        );
        assert_eq!(options.thinking_budget, Some(2048));
        assert_eq!(options.tool_choice, Some(ToolChoice::Tool("ls".into())));
        assert_eq!(options.cache_retention, Some(CacheRetention::Long));
        assert_eq!(request.context.tools.as_ref().map(Vec::len), Some(1));
        assert!(!request.stream);
    }

    #[test]
    fn hostile_bodies_are_400s() {
        for body in [
            &b"[]"[..],
            b"{}",
            br#"{"messages": 3}"#,
            br#"{"messages": [1]}"#,
            br#"{"messages": [{"role": "system", "content": []}]}"#,
            b"\xff",
        ] {
            let error = decode_body(body, "m", true).unwrap_err();
            assert_eq!(error.status, 400, "{body:?}");
        }
        for model in ["%", "%4", "%zz", "%ff", "a%C3"] {
            assert_eq!(percent_decode(model).unwrap_err().status, 400, "{model}");
        }
        assert_eq!(percent_decode("a%2Fb%3a0").unwrap(), "a/b:0");
    }
}
