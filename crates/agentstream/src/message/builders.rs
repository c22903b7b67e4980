//! Terse constructors for tests and scripted models.
//!
//! ```
//! use agentstream::message::{assistant, text, tool_call, tool_result, user, Message, StopReason};
//! use serde_json::json;
//!
//! let conversation: Vec<Message> = vec![
//!     user("read the readme").into(),
//!     assistant([text("hi"), tool_call("c1", "read", json!({"path": "README.md"}))], StopReason::ToolUse).into(),
//!     tool_result("c1", "read", "# agentstream", false).into(),
//! ];
//! assert!(agentstream::message::validate_linkage(&conversation).is_empty());
//! ```

use alloc::string::{String, ToString};
use alloc::vec;

use serde_json::{Map, Value};

use super::{
    AssistantMessage, ContentBlock, Cost, ImageContent, StopReason, TextContent, ThinkingContent,
    ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};

/// The `api`, `provider` and `model` of messages made by [`assistant`].
pub const SCRIPTED: &str = "scripted";

/// A user message with plain-string content and timestamp 0.
pub fn user(text: impl Into<String>) -> UserMessage {
    UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 0,
        extra: Map::new(),
    }
}

/// A user message with block content (text and images) and timestamp 0.
pub fn user_blocks(blocks: impl IntoIterator<Item = ContentBlock>) -> UserMessage {
    UserMessage {
        content: UserContent::Blocks(blocks.into_iter().collect()),
        timestamp: 0,
        extra: Map::new(),
    }
}

/// An assistant message with the given blocks and stop reason.
///
/// `api`, `provider` and `model` are `"scripted"`, usage and cost are zero
/// (with `totalTokens: 0`), and the timestamp is 0. Change the public fields
/// for anything else.
pub fn assistant(
    content: impl IntoIterator<Item = ContentBlock>,
    stop_reason: StopReason,
) -> AssistantMessage {
    AssistantMessage {
        content: content.into_iter().collect(),
        api: SCRIPTED.into(),
        provider: SCRIPTED.into(),
        model: SCRIPTED.into(),
        usage: Usage {
            total_tokens: Some(0),
            cost: Cost::default(),
            ..Usage::default()
        },
        stop_reason,
        error_message: None,
        timestamp: 0,
        extra: Map::new(),
    }
}

/// A text block.
pub fn text(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent {
        text: text.into(),
        ..TextContent::default()
    })
}

/// A thinking block without a signature.
pub fn thinking(thinking: impl Into<String>) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking: thinking.into(),
        ..ThinkingContent::default()
    })
}

/// An image block from base64 `data` and its MIME type.
pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: data.into(),
        mime_type: mime_type.into(),
        extra: Map::new(),
    })
}

/// A tool-call block.
///
/// `arguments` should be a JSON object. `null` gives empty arguments. Any
/// other non-object value gives empty arguments with the value's JSON text in
/// `raw_arguments`, the way a call whose arguments did not parse is kept.
pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> ContentBlock {
    let (arguments, raw_arguments) = match arguments {
        Value::Object(map) => (map, None),
        Value::Null => (Map::new(), None),
        other => (Map::new(), Some(other.to_string())),
    };
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        raw_arguments,
        ..ToolCall::default()
    })
}

/// A tool result with one text block, no `details` and timestamp 0.
pub fn tool_result(
    tool_call_id: impl Into<String>,
    tool_name: impl Into<String>,
    text: impl Into<String>,
    is_error: bool,
) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: tool_call_id.into(),
        tool_name: tool_name.into(),
        content: vec![self::text(text)],
        details: None,
        is_error,
        timestamp: 0,
        extra: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assistant_defaults() {
        let m = assistant([text("a"), text("b")], StopReason::Stop);
        assert_eq!(
            (m.api.as_str(), m.provider.as_str()),
            ("scripted", "scripted")
        );
        assert_eq!(m.model, "scripted");
        assert_eq!(m.usage.total_tokens, Some(0));
        assert_eq!(m.text(), "ab");
    }

    #[test]
    fn tool_call_arguments() {
        let ContentBlock::ToolCall(c) = tool_call("c1", "read", json!({"path": "x"})) else {
            panic!("not a tool call")
        };
        assert_eq!(c.arguments.get("path"), Some(&json!("x")));
        assert_eq!(c.raw_arguments, None);
        let ContentBlock::ToolCall(c) = tool_call("c1", "read", json!([1])) else {
            panic!("not a tool call")
        };
        assert!(c.arguments.is_empty());
        assert_eq!(c.raw_arguments.as_deref(), Some("[1]"));
    }
}
