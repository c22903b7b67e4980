//! Anthropic Messages, the server's reading of a request: a request body
//! to a Pi [`Context`](agentstream::message::Context) and options (what
//! [`AnthropicMessages`](crate::anthropic::AnthropicMessages)'s body writer writes, read back).
//!
//! # What is read
//!
//! `messages` is required (an array); `model`, `max_tokens` and the rest
//! are accepted but not checked. `system` (a string or text blocks) is the
//! system prompt. `user` content is a string or blocks: `text`, `image`
//! (base64 sources), and `tool_result` blocks, which become Pi tool-result
//! messages (named after the call they answer) placed before the rest of
//! that user turn. `assistant` blocks `text`, `thinking` (with its
//! `signature`), `redacted_thinking` (its `data` kept as the signature of a
//! thinking block marked `redacted`) and `tool_use` become Pi blocks.
//! `tools` become Pi tools (`input_schema` as the parameters). Decoded
//! messages have timestamp 0 and zero usage.

use crate::server::prelude::*;
use alloc::borrow::Cow;

use agentstream::message::{ContentBlock, ThinkingContent, ToolCall, UserContent};
use serde_json::{json, Value};

use crate::server::error::{Api, ApiError};
use crate::server::options;
use crate::server::request::{
    self, image_block, joined_text, str_at, text_block, DecodedRequest, History,
};
use crate::server::view::Content;

const PROVIDER: &str = "anthropic";

/// Decodes a Messages request body.
///
/// ```
/// use agentstream_wire::anthropic::decode::decode_request;
/// use serde_json::json;
///
/// let body = json!({"model": "claude", "max_tokens": 100, "system": "Be brief.",
///                   "messages": [{"role": "user", "content": "Hi"}]});
/// let request = decode_request(&body).unwrap();
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert!(!request.stream);
///
/// let error = decode_request(&json!({"model": "claude"})).unwrap_err();
/// assert_eq!(error.message, "messages: Field required");
/// ```
///
/// # Errors
/// The 400 [`ApiError`] Anthropic answers with (`invalid_request_error`).
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ApiError> {
    decode(request::common(body, messages_error)?)
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
    request::replacing_lone_surrogates(body, |body| {
        decode(request::common_bytes_viewing(
            body,
            VIEW_FIELDS,
            messages_error,
        )?)
    })
}

/// The fields of a message read besides `role` and `content`: none.
const VIEW_FIELDS: &[&str] = &[];

fn messages_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(_) => ApiError::new(400, "messages: Input should be a valid list"),
        None => ApiError::new(400, "messages: Field required"),
    }
}

fn decode(mut request: request::Common<'_>) -> Result<DecodedRequest, ApiError> {
    let mut history = History::new(Api::Anthropic, PROVIDER, &request.model);
    request.messages.each_view(VIEW_FIELDS, |i, message| {
        let (role, content) = match message {
            Some(message) => (message.role, message.content),
            None => (None, Content::Other(Value::Null)),
        };
        match (role.as_deref(), content) {
            (Some("user"), Content::Text(text)) => {
                history.user(UserContent::Text(text.into_owned()));
            }
            (Some("user"), Content::Other(content)) => {
                let mut rest = Vec::new();
                for block in content.as_array().into_iter().flatten() {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_result") => history.tool_result(
                            str_at(block, &["tool_use_id"]),
                            blocks_of(block.get("content").unwrap_or(&Value::Null))
                                .iter()
                                .filter_map(user_block)
                                .collect(),
                            block.get("is_error").and_then(Value::as_bool) == Some(true),
                        ),
                        _ => rest.extend(user_block(block)),
                    }
                }
                if !rest.is_empty() {
                    history.user(UserContent::Blocks(rest));
                }
            }
            (Some("assistant"), Content::Text(text)) => {
                history.assistant(vec![text_block(text.into_owned())]);
            }
            (Some("assistant"), Content::Other(content)) => history.assistant(
                content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(assistant_block)
                    .collect(),
            ),
            _ => {
                return Err(ApiError::new(
                    400,
                    format!("messages.{i}.role: Input should be 'user' or 'assistant'"),
                ))
            }
        }
        Ok(())
    })?;
    let system = Some(joined_text(
        request.object.get("system").unwrap_or(&Value::Null),
        "\n\n",
    ))
    .filter(|system| !system.is_empty());
    let tools = request::tools(
        &request.object,
        None,
        "input_schema",
        || json!({"type": "object"}),
    );
    let options = options::anthropic(&request.object);
    Ok(history.finish(request, system, tools, true, options))
}

/// A content as blocks: a string is one text block; an array is
/// borrowed, not copied.
fn blocks_of(content: &Value) -> Cow<'_, [Value]> {
    match content {
        Value::String(text) => Cow::Owned(vec![json!({"type": "text", "text": text})]),
        Value::Array(blocks) => Cow::Borrowed(blocks),
        _ => Cow::Borrowed(&[]),
    }
}

fn user_block(block: &Value) -> Option<ContentBlock> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => Some(text_block(str_at(block, &["text"]))),
        "image" => {
            let source = block.get("source")?;
            Some(image_block(
                str_at(source, &["data"]),
                str_at(source, &["media_type"]),
            ))
        }
        _ => None,
    }
}

fn assistant_block(block: &Value) -> Option<ContentBlock> {
    Some(match block.get("type").and_then(Value::as_str)? {
        "text" => text_block(str_at(block, &["text"])),
        "thinking" => ContentBlock::Thinking(ThinkingContent {
            thinking: str_at(block, &["thinking"]),
            thinking_signature: block
                .get("signature")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(Into::into),
            ..ThinkingContent::default()
        }),
        "redacted_thinking" => ContentBlock::Thinking(ThinkingContent {
            thinking_signature: Some(str_at(block, &["data"])),
            redacted: Some(true),
            ..ThinkingContent::default()
        }),
        "tool_use" => ContentBlock::ToolCall(ToolCall {
            id: str_at(block, &["id"]),
            name: str_at(block, &["name"]),
            arguments: block
                .get("input")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            ..ToolCall::default()
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use agentstream::message::Message;

    #[test]
    fn tool_results_split_out_of_user_turns() {
        let body = json!({"messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "18C"},
                {"type": "text", "text": "thanks"}]},
        ], "system": [{"type": "text", "text": "Be brief."}],
           "tools": [{"name": "weather", "input_schema": {"type": "object"}}]});
        let request = decode_request(&body).unwrap();
        let roles: Vec<_> = request.context.messages.iter().map(Message::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "user"]);
        let Message::ToolResult(result) = &request.context.messages[2] else {
            panic!()
        };
        assert_eq!(result.tool_name, "weather");
        let Message::Assistant(call) = &request.context.messages[1] else {
            panic!()
        };
        assert!(matches!(&call.content[0],
            ContentBlock::Thinking(t) if t.thinking_signature.as_deref() == Some("sig")));
        assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
    }

    /// What each odd message decodes to, from the body's text and from
    /// its JSON value alike.
    #[test]
    fn odd_messages_decode_leniently() {
        let decoded = |body: &str| {
            let value: Value = serde_json::from_str(body).unwrap();
            let from_value = decode_request(&value).map_err(|e| e.message);
            let from_text = decode_body(body.as_bytes()).map_err(|e| e.message);
            assert_eq!(from_value, from_text, "{body}");
            from_value.map(|r| r.context.messages)
        };
        let last = decoded(
            r#"{"messages":[{"role":"user","content":"hi","content":[{"type":"text","text":"x"}]}]}"#,
        )
        .unwrap();
        let Message::User(user) = &last[0] else {
            panic!()
        };
        assert_eq!(
            user.content,
            UserContent::Blocks(vec![text_block("x".into())])
        );
        let escaped = decoded(r#"{"messages":[{"role":"assistant","content":"a\nb\u00e9"}]}"#);
        let Message::Assistant(assistant) = &escaped.unwrap()[0] else {
            panic!()
        };
        assert_eq!(assistant.content, vec![text_block("a\nb\u{e9}".into())]);
        let nothing = decoded(r#"{"messages":[{"role":"user","content":5},{"role":"assistant"}]}"#);
        let nothing = nothing.unwrap();
        assert_eq!(nothing.len(), 1);
        assert!(matches!(&nothing[0], Message::Assistant(a) if a.content.is_empty()));
        for body in [
            r#"{"messages":[{"role":["user"],"content":"x"}]}"#,
            r#"{"messages":[3]}"#,
            r#"{"messages":[{"content":"x"}]}"#,
        ] {
            assert_eq!(
                decoded(body).unwrap_err(),
                "messages.0.role: Input should be 'user' or 'assistant'"
            );
        }
    }

    #[test]
    fn bad_requests_get_anthropic_errors() {
        for body in [
            json!("text"),
            json!({"messages": 1}),
            json!({"messages": [{"role": "system", "content": "x"}]}),
        ] {
            let error = decode_request(&body).unwrap_err();
            assert_eq!(error.status, 400);
            let body = error.body(Api::Anthropic);
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "invalid_request_error");
        }
    }
}
