//! Content blocks: the `type`-tagged parts of a message's `content` array.

use alloc::string::String;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::decode::{
    boolean, check_tag, deserialize_via_from_value, json_kind, object, optional, required, string,
    take_non_null, DecodeError, Written,
};

/// One block of a message's `content` array, tagged by its `type`.
///
/// Pi restricts which blocks appear where (user messages and tool results
/// hold text and image blocks, assistant messages hold text, thinking and
/// tool-call blocks). This model does not enforce that, so that any log
/// round-trips; a block in an unusual place is kept as it is.
///
/// A block whose `type` this model does not know is kept as
/// [`ContentBlock::Unknown`] and written back unchanged, so logs from newer Pi
/// versions survive a round trip. A block without a string `type` is an
/// error.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{"type": "text", ...}`
    Text(TextContent),
    /// `{"type": "thinking", ...}`
    Thinking(ThinkingContent),
    /// `{"type": "image", ...}`
    Image(ImageContent),
    /// `{"type": "toolCall", ...}`
    ToolCall(ToolCall),
    /// A block with a `type` this model does not know, kept verbatim.
    Unknown(UnknownBlock),
}

/// A text block: `{"type": "text", "text", "textSignature"?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// `textSignature`: an opaque provider signature, if any.
    pub text_signature: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// A thinking block: `{"type": "thinking", "thinking", "thinkingSignature"?,
/// "redacted"?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThinkingContent {
    /// The model's reasoning text.
    pub thinking: String,
    /// `thinkingSignature`: an opaque provider signature, if any.
    pub thinking_signature: Option<String>,
    /// `redacted`: whether the provider redacted the reasoning.
    pub redacted: Option<bool>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// An image block: `{"type": "image", "data", "mimeType"}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImageContent {
    /// The image bytes, base64-encoded.
    pub data: String,
    /// `mimeType`, for example `image/png`.
    pub mime_type: String,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// A tool call: `{"type": "toolCall", "id", "name", "arguments",
/// "thoughtSignature"?}`.
///
/// Logs saved by Pi may carry leftover streaming keys such as `partialJson`;
/// they are kept in [`extra`](Self::extra).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCall {
    /// The call id that a tool result refers to with `toolCallId`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Map<String, Value>,
    /// `thoughtSignature`: an opaque provider signature, if any.
    pub thought_signature: Option<String>,
    /// `rawArguments`: the argument text as streamed, for a call whose
    /// arguments are incomplete or did not parse. Omitted when `None`.
    pub raw_arguments: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// A block whose `type` this model does not know, kept verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnknownBlock {
    /// The block's `type`.
    pub block_type: String,
    /// All other fields of the block, in their original order when
    /// serde_json's `preserve_order` is on.
    pub fields: Map<String, Value>,
}

impl ContentBlock {
    /// Decodes a block from JSON, dispatching on its `type`.
    ///
    /// ```
    /// use agentstream::message::ContentBlock;
    /// use serde_json::json;
    ///
    /// let block = ContentBlock::from_value(json!({"type": "text", "text": "hi"})).unwrap();
    /// assert_eq!(block.block_type(), "text");
    /// let future = ContentBlock::from_value(json!({"type": "audio", "data": "…"})).unwrap();
    /// assert!(matches!(future, ContentBlock::Unknown(_)));
    /// ```
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let map = object(value)?;
        let tag = match map.get("type") {
            Some(Value::String(tag)) => tag.clone(),
            Some(other) => {
                return Err(DecodeError::new(alloc::format!(
                    "expected a string, found {}",
                    json_kind(other)
                ))
                .within_key("type"))
            }
            None => return Err(DecodeError::new("missing field `type`")),
        };
        Ok(match tag.as_str() {
            "text" => ContentBlock::Text(TextContent::from_map(map)?),
            "thinking" => ContentBlock::Thinking(ThinkingContent::from_map(map)?),
            "image" => ContentBlock::Image(ImageContent::from_map(map)?),
            "toolCall" => ContentBlock::ToolCall(ToolCall::from_map(map)?),
            _ => {
                // Filter rather than `remove`, which reorders the other keys
                // under serde_json's `preserve_order`.
                let fields = map.into_iter().filter(|(k, _)| k != "type").collect();
                ContentBlock::Unknown(UnknownBlock {
                    block_type: tag,
                    fields,
                })
            }
        })
    }

    /// The block's `type` tag, for example `"toolCall"`.
    pub fn block_type(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Thinking(_) => "thinking",
            ContentBlock::Image(_) => "image",
            ContentBlock::ToolCall(_) => "toolCall",
            ContentBlock::Unknown(b) => &b.block_type,
        }
    }

    /// The tool call, if this is a tool-call block.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl TextContent {
    /// Decodes a text block from JSON. A `type` key, if present, must be
    /// `"text"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut text, mut signature, mut extra) = (None, None, Map::new());
        for (key, value) in map {
            match key.as_str() {
                "type" => check_tag("type", "text", value)?,
                "text" => text = Some(value),
                "textSignature" => take_non_null(&mut signature, &mut extra, key, value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(TextContent {
            text: required("text", text, string)?,
            text_signature: optional("textSignature", signature, string)?,
            extra,
        })
    }
}

impl ThinkingContent {
    /// Decodes a thinking block from JSON. A `type` key, if present, must be
    /// `"thinking"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut thinking, mut signature, mut redacted) = (None, None, None);
        let mut extra = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "type" => check_tag("type", "thinking", value)?,
                "thinking" => thinking = Some(value),
                "thinkingSignature" => take_non_null(&mut signature, &mut extra, key, value),
                "redacted" => take_non_null(&mut redacted, &mut extra, key, value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(ThinkingContent {
            thinking: required("thinking", thinking, string)?,
            thinking_signature: optional("thinkingSignature", signature, string)?,
            redacted: optional("redacted", redacted, boolean)?,
            extra,
        })
    }
}

impl ImageContent {
    /// Decodes an image block from JSON. A `type` key, if present, must be
    /// `"image"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut data, mut mime_type, mut extra) = (None, None, Map::new());
        for (key, value) in map {
            match key.as_str() {
                "type" => check_tag("type", "image", value)?,
                "data" => data = Some(value),
                "mimeType" => mime_type = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(ImageContent {
            data: required("data", data, string)?,
            mime_type: required("mimeType", mime_type, string)?,
            extra,
        })
    }
}

impl ToolCall {
    /// Decodes a tool-call block from JSON. A `type` key, if present, must be
    /// `"toolCall"`.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_map(object(value)?)
    }

    fn from_map(map: Map<String, Value>) -> Result<Self, DecodeError> {
        let (mut id, mut name, mut arguments) = (None, None, None);
        let (mut signature, mut raw, mut extra) = (None, None, Map::new());
        for (key, value) in map {
            match key.as_str() {
                "type" => check_tag("type", "toolCall", value)?,
                "id" => id = Some(value),
                "name" => name = Some(value),
                "arguments" => arguments = Some(value),
                "thoughtSignature" => take_non_null(&mut signature, &mut extra, key, value),
                "rawArguments" => take_non_null(&mut raw, &mut extra, key, value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(ToolCall {
            id: required("id", id, string)?,
            name: required("name", name, string)?,
            arguments: required("arguments", arguments, object)?,
            thought_signature: optional("thoughtSignature", signature, string)?,
            raw_arguments: optional("rawArguments", raw, string)?,
            extra,
        })
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(b) => b.serialize(serializer),
            ContentBlock::Thinking(b) => b.serialize(serializer),
            ContentBlock::Image(b) => b.serialize(serializer),
            ContentBlock::ToolCall(b) => b.serialize(serializer),
            ContentBlock::Unknown(b) => b.serialize(serializer),
        }
    }
}

impl Serialize for TextContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_text(&self.text, serializer)
    }
}

impl TextContent {
    /// Writes this block with `text` in place of its own (a streaming
    /// snapshot's text, written without being copied out first).
    pub(crate) fn serialize_with_text<S: Serializer, T: Serialize + ?Sized>(
        &self,
        text: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "type", "text")?;
        w.entry(&mut map, "text", text)?;
        w.opt(&mut map, "textSignature", &self.text_signature)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for ThinkingContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_thinking(&self.thinking, serializer)
    }
}

impl ThinkingContent {
    /// Writes this block with `thinking` in place of its own text.
    pub(crate) fn serialize_with_thinking<S: Serializer, T: Serialize + ?Sized>(
        &self,
        thinking: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "type", "thinking")?;
        w.entry(&mut map, "thinking", thinking)?;
        w.opt(&mut map, "thinkingSignature", &self.thinking_signature)?;
        w.opt(&mut map, "redacted", &self.redacted)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for ImageContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "type", "image")?;
        w.entry(&mut map, "data", &self.data)?;
        w.entry(&mut map, "mimeType", &self.mime_type)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_raw(self.raw_arguments.as_ref(), serializer)
    }
}

impl ToolCall {
    /// Writes this call with `raw` as its `rawArguments`.
    pub(crate) fn serialize_with_raw<S: Serializer, T: Serialize + ?Sized>(
        &self,
        raw: Option<&T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "type", "toolCall")?;
        w.entry(&mut map, "id", &self.id)?;
        w.entry(&mut map, "name", &self.name)?;
        w.entry(&mut map, "arguments", &self.arguments)?;
        w.opt(&mut map, "thoughtSignature", &self.thought_signature)?;
        w.opt(&mut map, "rawArguments", &raw)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for UnknownBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "type", &self.block_type)?;
        w.finish(map, &self.fields)
    }
}

deserialize_via_from_value!(
    ContentBlock,
    TextContent,
    ThinkingContent,
    ImageContent,
    ToolCall
);

impl From<TextContent> for ContentBlock {
    fn from(block: TextContent) -> Self {
        ContentBlock::Text(block)
    }
}

impl From<ThinkingContent> for ContentBlock {
    fn from(block: ThinkingContent) -> Self {
        ContentBlock::Thinking(block)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(block: ImageContent) -> Self {
        ContentBlock::Image(block)
    }
}

impl From<ToolCall> for ContentBlock {
    fn from(block: ToolCall) -> Self {
        ContentBlock::ToolCall(block)
    }
}

impl From<UnknownBlock> for ContentBlock {
    fn from(block: UnknownBlock) -> Self {
        ContentBlock::Unknown(block)
    }
}
