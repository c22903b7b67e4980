//! The three message kinds Pi writes: user, assistant and tool result.

use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::content::ContentBlock;
use super::decode::{
    array, boolean, check_tag, deserialize_via_from_value, json_kind, object, optional, required,
    string, take_non_null, unsigned, DecodeError, Written,
};
use super::usage::{StopReason, Usage};

/// A user message: `{"role": "user", "content", "timestamp"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserMessage {
    /// The content: a plain string or a list of blocks.
    pub content: UserContent,
    /// Unix time in milliseconds.
    pub timestamp: u64,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// The content of a user message: Pi allows a plain string or an array of
/// (text and image) blocks. Both forms are kept as they were.
#[derive(Debug, Clone, PartialEq)]
pub enum UserContent {
    /// `"content": "..."`
    Text(String),
    /// `"content": [...]`
    Blocks(Vec<ContentBlock>),
}

/// An assistant message: `{"role": "assistant", "content", "api",
/// "provider", "model", "usage", "stopReason", "errorMessage"?,
/// "timestamp"}`.
///
/// Newer Pi fields (`responseId`, `responseModel`, `deferred`, ...) are kept
/// in [`extra`](Self::extra).
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The provider API, for example `anthropic-messages`.
    pub api: String,
    /// The provider, for example `anthropic`.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Token usage and cost.
    pub usage: Usage,
    /// `stopReason`: why the model stopped.
    pub stop_reason: StopReason,
    /// `errorMessage`: set when the call failed or was aborted.
    pub error_message: Option<String>,
    /// Unix time in milliseconds.
    pub timestamp: u64,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// A tool result: `{"role": "toolResult", "toolCallId", "toolName",
/// "content", "details"?, "isError", "timestamp"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultMessage {
    /// `toolCallId`: the id of the tool call this answers.
    pub tool_call_id: String,
    /// `toolName`: the name of the tool that ran.
    pub tool_name: String,
    /// Text and image blocks.
    pub content: Vec<ContentBlock>,
    /// `details`: arbitrary tool-specific data. `None` when absent; a
    /// `null` in the input is `Some(Value::Null)` and is written back.
    pub details: Option<Value>,
    /// `isError`: whether the tool failed.
    pub is_error: bool,
    /// Unix time in milliseconds.
    pub timestamp: u64,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

fn blocks(value: Value) -> Result<Vec<ContentBlock>, DecodeError> {
    array(value, ContentBlock::from_value)
}

impl UserContent {
    /// Decodes user content: a string or an array of blocks.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::String(s) => Ok(UserContent::Text(s)),
            Value::Array(_) => blocks(value).map(UserContent::Blocks),
            other => Err(DecodeError::new(alloc::format!(
                "expected a string or an array, found {}",
                json_kind(&other)
            ))),
        }
    }
}

impl UserMessage {
    /// Decodes a user message. A `role` key, if present, must be `"user"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    pub(crate) fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut content, mut timestamp, mut extra) = (None, None, Map::new());
        for (key, value) in map {
            match key.as_str() {
                "role" => check_tag("role", "user", value)?,
                "content" => content = Some(value),
                "timestamp" => timestamp = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(UserMessage {
            content: required("content", content, UserContent::from_value)?,
            timestamp: required("timestamp", timestamp, unsigned)?,
            extra,
        })
    }
}

impl AssistantMessage {
    /// Decodes an assistant message. A `role` key, if present, must be
    /// `"assistant"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    pub(crate) fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut content, mut api, mut provider, mut model) = (None, None, None, None);
        let (mut usage, mut stop_reason, mut error_message) = (None, None, None);
        let (mut timestamp, mut extra) = (None, Map::new());
        for (key, value) in map {
            match key.as_str() {
                "role" => check_tag("role", "assistant", value)?,
                "content" => content = Some(value),
                "api" => api = Some(value),
                "provider" => provider = Some(value),
                "model" => model = Some(value),
                "usage" => usage = Some(value),
                "stopReason" => stop_reason = Some(value),
                "errorMessage" => take_non_null(&mut error_message, &mut extra, key, value),
                "timestamp" => timestamp = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(AssistantMessage {
            content: required("content", content, blocks)?,
            api: required("api", api, string)?,
            provider: required("provider", provider, string)?,
            model: required("model", model, string)?,
            usage: required("usage", usage, Usage::from_value)?,
            stop_reason: required("stopReason", stop_reason, StopReason::from_value)?,
            error_message: optional("errorMessage", error_message, string)?,
            timestamp: required("timestamp", timestamp, unsigned)?,
            extra,
        })
    }

    /// The text of all text blocks, concatenated in order with nothing in
    /// between (the way streamed text deltas join). Thinking and tool-call
    /// blocks are skipped.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, thinking, StopReason};
    ///
    /// let msg = assistant([text("Hello, "), thinking("hmm"), text("world")], StopReason::Stop);
    /// assert_eq!(msg.text(), "Hello, world");
    /// ```
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect()
    }

    /// The tool-call blocks, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &super::ToolCall> {
        self.content.iter().filter_map(ContentBlock::as_tool_call)
    }
}

impl ToolResultMessage {
    /// Decodes a tool result. A `role` key, if present, must be
    /// `"toolResult"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    pub(crate) fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut call_id, mut tool_name, mut content) = (None, None, None);
        let (mut details, mut is_error, mut timestamp) = (None, None, None);
        let mut extra = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "role" => check_tag("role", "toolResult", value)?,
                "toolCallId" => call_id = Some(value),
                "toolName" => tool_name = Some(value),
                "content" => content = Some(value),
                "details" => details = Some(value),
                "isError" => is_error = Some(value),
                "timestamp" => timestamp = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(ToolResultMessage {
            tool_call_id: required("toolCallId", call_id, string)?,
            tool_name: required("toolName", tool_name, string)?,
            content: required("content", content, blocks)?,
            details,
            is_error: required("isError", is_error, boolean)?,
            timestamp: required("timestamp", timestamp, unsigned)?,
            extra,
        })
    }

    /// The text of all text blocks, concatenated in order with nothing in
    /// between.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect()
    }
}

impl Serialize for UserContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            UserContent::Text(s) => serializer.serialize_str(s),
            UserContent::Blocks(b) => b.serialize(serializer),
        }
    }
}

impl Serialize for UserMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "role", "user")?;
        w.entry(&mut map, "content", &self.content)?;
        w.entry(&mut map, "timestamp", &self.timestamp)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for AssistantMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_content(&self.content, serializer)
    }
}

impl AssistantMessage {
    /// Writes this message with `content` in place of its own (a streaming
    /// snapshot's blocks, written without being copied out first).
    pub(crate) fn serialize_with_content<S: Serializer, C: Serialize + ?Sized>(
        &self,
        content: &C,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "role", "assistant")?;
        w.entry(&mut map, "content", content)?;
        w.entry(&mut map, "api", &self.api)?;
        w.entry(&mut map, "provider", &self.provider)?;
        w.entry(&mut map, "model", &self.model)?;
        w.entry(&mut map, "usage", &self.usage)?;
        w.entry(&mut map, "stopReason", &self.stop_reason)?;
        w.entry(&mut map, "timestamp", &self.timestamp)?;
        w.opt(&mut map, "errorMessage", &self.error_message)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for ToolResultMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "role", "toolResult")?;
        w.entry(&mut map, "toolCallId", &self.tool_call_id)?;
        w.entry(&mut map, "toolName", &self.tool_name)?;
        w.entry(&mut map, "content", &self.content)?;
        w.opt(&mut map, "details", &self.details)?;
        w.entry(&mut map, "isError", &self.is_error)?;
        w.entry(&mut map, "timestamp", &self.timestamp)?;
        w.finish(map, &self.extra)
    }
}

deserialize_via_from_value!(
    UserContent,
    UserMessage,
    AssistantMessage,
    ToolResultMessage
);
