//! OpenAI Chat Completions, the server's reading of a request: a request body
//! to a Pi [`Context`](agentstream::message::Context) and options (what
//! [`OpenAiChat`](crate::openai::OpenAiChat)'s body writer writes, read back).
//!
//! # What is read
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

use crate::server::prelude::*;
use agentstream::message::{ContentBlock, ThinkingContent, ToolCall, UserContent};
use serde_json::{json, Value};

use crate::server::error::{Api, ApiError};
use crate::server::options;
use crate::server::request::{
    self, arguments_from_text, image_block, str_at, text_block, DecodedRequest, History,
};
use crate::server::view::{self, Content, MessageView};

const PROVIDER: &str = "openai";

/// Decodes a Chat Completions request body.
///
/// ```
/// use agentstream_wire::openai::decode::decode_request;
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
    decode(request::common(body, messages_error)?, &OPENAI)
}

/// Where the Chat-Completions-shaped bodies differ: OpenAI's and
/// Mistral's.
#[derive(Debug)]
pub(crate) struct ChatDialect {
    pub(crate) api: Api,
    pub(crate) provider: &'static str,
    /// Mistral: an assistant's `thinking` content items are its thinking,
    /// a tool result's text starting `[tool error] ` is an error, and the
    /// stream always ends with the usage.
    pub(crate) mistral: bool,
}

const OPENAI: ChatDialect = ChatDialect {
    api: Api::OpenAi,
    provider: PROVIDER,
    mistral: false,
};

/// [`decode_body`] in `dialect`.
pub(crate) fn decode_body_in(
    body: &[u8],
    dialect: &ChatDialect,
) -> Result<DecodedRequest, ApiError> {
    request::replacing_lone_surrogates(body, |body| {
        decode(
            request::common_bytes_viewing(body, FIELDS, messages_error)?,
            dialect,
        )
    })
}

/// [`decode_request`] from the body's bytes, with memory proportional to
/// the body: the messages are parsed one at a time.
///
/// A lone UTF-16 surrogate escape in a string (`"\ud800"` alone) is
/// read as U+FFFD, as the projectors read one.
///
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    decode_body_in(body, &OPENAI)
}

fn messages_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => ApiError::new(
            400,
            format!(
                "Invalid type for 'messages': expected an array, but got {} instead.",
                agentstream::message::json_kind(other)
            ),
        )
        .with_param("messages")
        .with_code("invalid_type"),
        None => ApiError::new(400, "Missing required parameter: 'messages'.")
            .with_param("messages")
            .with_code("missing_required_parameter"),
    }
}

fn decode(
    mut request: request::Common<'_>,
    dialect: &ChatDialect,
) -> Result<DecodedRequest, ApiError> {
    // Mistral sends the usage on the last chunk, unasked.
    let include_usage = dialect.mistral
        || request
            .object
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            == Some(true);
    let mut history = History::new(dialect.api, dialect.provider, &request.model);
    let mut system = Vec::new();
    request.messages.each_view(FIELDS, |i, message| {
        let bad = |what: &str| {
            ApiError::new(400, format!("Invalid value for 'messages[{i}]': {what}"))
                .with_param(format!("messages[{i}]"))
                .with_code("invalid_value")
        };
        let Some(message) = message else {
            return Err(bad("expected an object"));
        };
        match message.role.as_deref() {
            Some("system" | "developer") => system.push(message.content.joined("")),
            Some("user") => history.user(user_content(message.content)),
            Some("assistant") => history.assistant(assistant_blocks(message, dialect.mistral)),
            Some("tool") => {
                let id = message.str("tool_call_id");
                let text = message.content.joined("");
                let error = dialect
                    .mistral
                    .then(|| text.strip_prefix("[tool error] "))
                    .flatten();
                let is_error = error.is_some();
                let text = error.map(String::from).unwrap_or(text);
                history.tool_result(id, vec![text_block(text)], is_error);
            }
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
        || json!({"type": "object", "properties": {}}),
    );
    let options = options::openai(&request.object);
    Ok(history.finish(request, system, tools, include_usage, options))
}

/// The fields of a message read besides `role` and `content`.
const FIELDS: &[&str] = &["reasoning_content", "tool_calls", "tool_call_id"];

/// An assistant message's blocks: `reasoning_content`, `content`, then
/// `tool_calls`; with `thinking_items` (Mistral), `content`'s items in
/// order, `thinking` ones as thinking.
fn assistant_blocks(mut message: MessageView<'_>, thinking_items: bool) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    if let (true, Content::Other(Value::Array(items))) = (thinking_items, &message.content) {
        for item in items {
            match item.get("type").and_then(Value::as_str) {
                Some("thinking") => blocks.push(ContentBlock::Thinking(ThinkingContent {
                    thinking: view::joined_text(item.get("thinking").unwrap_or(&Value::Null), ""),
                    ..ThinkingContent::default()
                })),
                Some("text") => blocks.push(text_block(str_at(item, &["text"]))),
                _ => {}
            }
        }
        message.content = Content::Other(Value::Null);
    }
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
    let text = core::mem::replace(&mut message.content, Content::Other(Value::Null)).joined("");
    if !text.is_empty() {
        blocks.push(text_block(text));
    }
    let calls = message.get("tool_calls").and_then(Value::as_array);
    blocks.extend(calls.into_iter().flatten().map(|call| {
        let (arguments, raw_arguments) =
            arguments_from_text(&str_at(call, &["function", "arguments"]));
        ContentBlock::ToolCall(ToolCall {
            id: str_at(call, &["id"]),
            name: str_at(call, &["function", "name"]),
            arguments,
            raw_arguments,
            ..ToolCall::default()
        })
    }));
    blocks
}

fn user_content(content: Content<'_>) -> UserContent {
    let Content::Other(Value::Array(parts)) = content else {
        return UserContent::Text(content.joined(""));
    };
    let blocks = parts
        .iter()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("text") => Some(text_block(str_at(part, &["text"]))),
            Some("image_url") => {
                // OpenAI: `{"url": …}`; Mistral: the URL itself.
                let url = match part.get("image_url") {
                    Some(Value::String(url)) => url.clone(),
                    _ => str_at(part, &["image_url", "url"]),
                };
                let (mime_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
                Some(image_block(data.to_owned(), mime_type.to_owned()))
            }
            _ => None,
        })
        .collect();
    UserContent::Blocks(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// What each odd message decodes to, from the body's text and from
    /// its JSON value alike: a field of the wrong type is ignored, a
    /// repeated one keeps its last value.
    #[test]
    fn odd_messages_decode_leniently() {
        let decoded = |message: Value| {
            let body = json!({"messages": [message]});
            let from_value = decode_request(&body).map_err(|e| e.message);
            let from_text = decode_body(body.to_string().as_bytes()).map_err(|e| e.message);
            assert_eq!(from_value, from_text, "{body}");
            from_value.map(|r| (r.context.system_prompt, r.context.messages))
        };
        let only = |message: Value| decoded(message).unwrap().1.remove(0);
        let repeated = r#"{"messages":[{"role":"user","role":"system","content":"x"}]}"#;
        let request = decode_body(repeated.as_bytes()).unwrap();
        assert_eq!(request.context.system_prompt.as_deref(), Some("x"));
        assert!(request.context.messages.is_empty());
        let missing = decoded(json!({"role": 5, "content": "x"})).unwrap_err();
        assert_eq!(missing, "Invalid value for 'messages[0]': missing 'role'");
        for content in [json!(7), Value::Null, json!({"text": "x"})] {
            let Message::User(user) = only(json!({"role": "user", "content": content})) else {
                panic!()
            };
            assert_eq!(user.content, UserContent::Text(String::new()));
        }
        let Message::Assistant(assistant) = only(json!({"role": "assistant",
            "content": "a\"b\u{e9}", "reasoning_content": 5, "tool_calls": "no", "name": {"x": [1]}}))
        else {
            panic!()
        };
        assert_eq!(assistant.content, vec![text_block("a\"b\u{e9}".into())]);
        let Message::ToolResult(result) = only(json!({"role": "tool", "tool_call_id": 9,
            "content": [{"type": "text", "text": "a"}, {"text": "b"}, 3]}))
        else {
            panic!()
        };
        assert_eq!(
            (result.tool_call_id.as_str(), result.text()),
            ("", "ab".into())
        );
        let shape = decoded(json!(["user", "hi"])).unwrap_err();
        assert_eq!(shape, "Invalid value for 'messages[0]': expected an object");
        let repeated = r#"{"messages":[{"role":"assistant","reasoning_content":"hm","reasoning_content":"","content":null}]}"#;
        let Message::Assistant(assistant) =
            &decode_body(repeated.as_bytes()).unwrap().context.messages[0]
        else {
            panic!()
        };
        assert!(assistant.content.is_empty());
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
}
