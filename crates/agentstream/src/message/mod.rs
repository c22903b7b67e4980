//! The Pi-compatible message IR.
//!
//! These types follow the JSON that the TypeScript Pi agent writes: camelCase
//! keys, messages tagged by `role` (`user`, `assistant`, `toolResult`) and
//! content blocks tagged by `type` (`text`, `thinking`, `image`, `toolCall`).
//!
//! # Lossless round trip
//!
//! Decoding a message and serializing it again gives the same JSON value
//! under JavaScript semantics (compare with [`json_diff`]):
//!
//! - every struct keeps the fields it does not know in a flattened `extra`
//!   map, so leftover keys such as `partialJson` survive;
//! - an absent optional field stays absent; a known optional field that was
//!   `null` is kept as `null` (in `extra`, or as `Some(Value::Null)` for
//!   `details`), and a value set on the typed field always takes precedence
//!   over a same-named key in `extra`, so no key is ever written twice;
//! - token counts and timestamps are `u64`; costs are `f64` that come back
//!   bit-identical, and integral costs are written as integers (`0`, not
//!   `0.0`), as JavaScript does;
//! - key order may change: known keys are written in Pi's order, then the
//!   unknown ones.
//!
//! # Unknown roles and block types
//!
//! A message with a `role` this model does not know (newer Pi versions add
//! `system`, for example) is kept as [`Message::Unknown`], and a block with an
//! unknown `type` as [`ContentBlock::Unknown`]. Both are written back
//! verbatim, so a log from a newer Pi survives a round trip and is never
//! silently dropped. A message without a string `role` or a block without a
//! string `type` fails with a [`DecodeError`] naming the JSON path.
//!
//! # Example
//!
//! ```
//! use agentstream::message::{assistant, json_diff, text, tool_call, Message, StopReason};
//! use serde_json::json;
//!
//! let msg: Message = assistant(
//!     [text("hi"), tool_call("c1", "read", json!({"path": "README.md"}))],
//!     StopReason::ToolUse,
//! )
//! .into();
//! let value = serde_json::to_value(&msg).unwrap();
//! assert_eq!(value["content"][1]["arguments"]["path"], "README.md");
//! assert_eq!(value["usage"]["cost"]["total"], json!(0)); // an integer, not 0.0
//!
//! let back = Message::from_value(value.clone()).unwrap();
//! assert_eq!(back, msg);
//! assert_eq!(json_diff(&value, &serde_json::to_value(&back).unwrap()), None);
//! ```

use alloc::string::String;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

mod builders;
mod content;
mod context;
mod decode;
mod diff;
pub mod linkage;
mod number;
mod roles;
mod shared;
pub mod transform;
mod usage;

pub use builders::{
    assistant, image, text, thinking, tool_call, tool_result, user, user_blocks, SCRIPTED,
};
pub use content::{
    ContentBlock, ImageContent, TextContent, ThinkingContent, ToolCall, UnknownBlock,
};
pub use context::{Context, Tool};
pub use decode::{json_kind, DecodeError};
pub use diff::json_diff;
pub use linkage::{validate_linkage, LinkageChecker};
pub use roles::{AssistantMessage, ToolResultMessage, UserContent, UserMessage};
pub use shared::SharedMessage;
pub use usage::{Cost, StopReason, Usage};

use decode::{deserialize_via_from_value, object, Written};

/// One message of a conversation, tagged by `role`.
///
/// The variants are not boxed: an assistant message is a few hundred bytes
/// inline (its content lives on the heap anyway), and plain variants keep
/// pattern matching in tests and scripted models simple.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum Message {
    /// `{"role": "user", ...}`
    User(UserMessage),
    /// `{"role": "assistant", ...}`
    Assistant(AssistantMessage),
    /// `{"role": "toolResult", ...}`
    ToolResult(ToolResultMessage),
    /// A message with a `role` this model does not know, kept verbatim.
    Unknown(UnknownMessage),
}

/// A message whose `role` this model does not know, kept verbatim so that it
/// round-trips.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnknownMessage {
    /// The message's `role`.
    pub role: String,
    /// All other fields of the message.
    pub fields: Map<String, Value>,
}

impl Message {
    /// Decodes a message from JSON, dispatching on its `role`.
    ///
    /// ```
    /// use agentstream::message::Message;
    /// use serde_json::json;
    ///
    /// let msg = Message::from_value(json!({"role": "system", "content": "be brief"})).unwrap();
    /// assert_eq!(msg.role(), "system");
    /// let err = Message::from_value(json!({"content": "x"})).unwrap_err();
    /// assert_eq!(err.to_string(), "$: missing field `role`");
    /// ```
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let map = object(value)?;
        let role = match map.get("role") {
            Some(Value::String(role)) => role.clone(),
            Some(other) => {
                return Err(DecodeError::new(alloc::format!(
                    "expected a string, found {}",
                    json_kind(other)
                ))
                .within_key("role"))
            }
            None => return Err(DecodeError::new("missing field `role`")),
        };
        Ok(match role.as_str() {
            "user" => Message::User(UserMessage::from_map(map)?),
            "assistant" => Message::Assistant(AssistantMessage::from_map(map)?),
            "toolResult" => Message::ToolResult(ToolResultMessage::from_map(map)?),
            _ => {
                // Filter rather than `remove`, which reorders the other keys
                // under serde_json's `preserve_order`.
                let fields = map.into_iter().filter(|(k, _)| k != "role").collect();
                Message::Unknown(UnknownMessage { role, fields })
            }
        })
    }

    /// The message's `role` tag.
    pub fn role(&self) -> &str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
            Message::Unknown(m) => &m.role,
        }
    }

    /// The message's `timestamp`, if it has an integer one.
    pub fn timestamp(&self) -> Option<u64> {
        match self {
            Message::User(m) => Some(m.timestamp),
            Message::Assistant(m) => Some(m.timestamp),
            Message::ToolResult(m) => Some(m.timestamp),
            Message::Unknown(m) => m.fields.get("timestamp").and_then(Value::as_u64),
        }
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::User(m) => m.serialize(serializer),
            Message::Assistant(m) => m.serialize(serializer),
            Message::ToolResult(m) => m.serialize(serializer),
            Message::Unknown(m) => m.serialize(serializer),
        }
    }
}

impl Serialize for UnknownMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "role", &self.role)?;
        w.finish(map, &self.fields)
    }
}

deserialize_via_from_value!(Message);

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Message::User(m)
    }
}

impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Message::Assistant(m)
    }
}

impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Message::ToolResult(m)
    }
}

impl From<UnknownMessage> for Message {
    fn from(m: UnknownMessage) -> Self {
        Message::Unknown(m)
    }
}
