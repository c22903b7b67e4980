//! Immutable snapshots of an assistant message while it streams.
//!
//! Pi sends the whole message formed so far (`partial`) with every event,
//! and mutates one shared object, so an old event changes under a consumer
//! that kept it. Here each event carries a [`PartialMessage`]: an immutable
//! snapshot that costs O(1) to take. Block texts are persistent lists of
//! shared chunks and the block list is a persistent list too, so a new
//! snapshot shares everything with the previous one except the block being
//! appended to. Streaming a message as n deltas costs O(n) in total;
//! materializing a snapshot with [`PartialMessage::to_message`] costs
//! O(its length).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::partial_json::partial_arguments;
use super::persistent::List;
use super::rope::Rope;
use crate::message::{AssistantMessage, ContentBlock, TextContent, ThinkingContent, ToolCall};

mod builder;
pub use builder::PartialBuilder;

/// An immutable snapshot of an assistant message as formed so far.
///
/// Cloning is O(1). Later events never change an earlier snapshot.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason, TextContent};
/// use agentstream::model::PartialBuilder;
///
/// let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
/// let index = builder.start_text(TextContent::default());
/// builder.append(index, "Hel".into());
/// let early = builder.snapshot();
/// builder.append(index, "lo".into());
///
/// assert_eq!(early.to_message().text(), "Hel"); // unchanged
/// assert_eq!(builder.snapshot().to_message().text(), "Hello");
/// ```
#[derive(Clone)]
pub struct PartialMessage {
    /// The message's fields; its `content` is always empty.
    header: Arc<AssistantMessage>,
    blocks: BlockList,
}

/// A persistent list of blocks, newest last, and its length.
#[derive(Clone, Default)]
struct BlockList {
    blocks: List<Block>,
    len: usize,
}

/// One block of a snapshot.
#[derive(Clone)]
enum Block {
    /// A text block being streamed; `template` holds everything but the text.
    Text {
        text: Rope,
        template: Arc<TextContent>,
    },
    /// A thinking block being streamed.
    Thinking {
        thinking: Rope,
        template: Arc<ThinkingContent>,
    },
    /// A tool call whose argument JSON is being streamed, shown as `shown`
    /// says.
    ToolCall {
        raw: Rope,
        template: Arc<ToolCall>,
        shown: ArgumentsShown,
    },
    /// A block that is complete.
    Complete(Arc<ContentBlock>),
    /// A tool call that is complete, shared with the `toolcall_end` event
    /// that carries it.
    Call(Arc<ToolCall>),
}

/// How a streaming tool call's arguments appear in a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgumentsShown {
    /// As pi-ai's providers show them: `arguments` holds what the text
    /// received so far parses to (partial-JSON parsing); the text itself
    /// is `raw_arguments` in Rust and is not serialized (Pi's partials
    /// have no such field).
    Parsed,
    /// As chapter 04's `ScriptedModel` shows them: `arguments` stays `{}`
    /// (the structured arguments are not finished) and `rawArguments`
    /// holds the text received so far, serialized too.
    Raw,
}

impl Block {
    /// The block as it is serialized in a partial: a streaming tool call
    /// shown [`Parsed`](ArgumentsShown::Parsed) has no `rawArguments`.
    fn to_wire_content(&self) -> ContentBlock {
        match self {
            Block::ToolCall {
                raw,
                template,
                shown: ArgumentsShown::Parsed,
            } => ContentBlock::ToolCall(ToolCall {
                arguments: partial_arguments(&raw.to_text()),
                ..ToolCall::clone(template)
            }),
            other => other.to_content(),
        }
    }

    fn to_content(&self) -> ContentBlock {
        match self {
            Block::Text { text, template } => ContentBlock::Text(TextContent {
                text: text.to_text(),
                ..TextContent::clone(template)
            }),
            Block::Thinking { thinking, template } => ContentBlock::Thinking(ThinkingContent {
                thinking: thinking.to_text(),
                ..ThinkingContent::clone(template)
            }),
            Block::ToolCall {
                raw,
                template,
                shown,
            } => {
                let raw = raw.to_text();
                let arguments = match shown {
                    ArgumentsShown::Parsed => partial_arguments(&raw),
                    ArgumentsShown::Raw => serde_json::Map::new(),
                };
                ContentBlock::ToolCall(ToolCall {
                    arguments,
                    raw_arguments: Some(raw),
                    ..ToolCall::clone(template)
                })
            }
            Block::Complete(block) => ContentBlock::clone(block),
            Block::Call(call) => ContentBlock::ToolCall(ToolCall::clone(call)),
        }
    }

    fn appended(&self, delta: Arc<str>) -> Option<Block> {
        Some(match self {
            Block::Text { text, template } => Block::Text {
                text: text.appended(delta),
                template: template.clone(),
            },
            Block::Thinking { thinking, template } => Block::Thinking {
                thinking: thinking.appended(delta),
                template: template.clone(),
            },
            Block::ToolCall {
                raw,
                template,
                shown,
            } => Block::ToolCall {
                raw: raw.appended(delta),
                template: template.clone(),
                shown: *shown,
            },
            Block::Complete(_) | Block::Call(_) => return None,
        })
    }

    fn streamed_len(&self) -> Option<usize> {
        match self {
            Block::Text { text: rope, .. }
            | Block::Thinking { thinking: rope, .. }
            | Block::ToolCall { raw: rope, .. } => Some(rope.len()),
            Block::Complete(_) | Block::Call(_) => None,
        }
    }
}

impl BlockList {
    fn pushed(&self, block: Block) -> Self {
        Self {
            blocks: self.blocks.pushed(block),
            len: self.len + 1,
        }
    }

    /// Newest first.
    fn iter(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter()
    }

    fn get(&self, index: usize) -> Option<&Block> {
        let from_end = self.len.checked_sub(index + 1)?;
        self.iter().nth(from_end)
    }

    /// Replaces block `index` with `f(block)`. O(1) for the last block,
    /// O(blocks after `index`) otherwise.
    fn updated(&self, index: usize, f: impl FnOnce(&Block) -> Option<Block>) -> Option<Self> {
        let from_end = self.len.checked_sub(index + 1)?;
        let mut newer = Vec::with_capacity(from_end);
        let mut rest = self.blocks.clone();
        for _ in 0..from_end {
            newer.push(rest.last()?.clone());
            rest = rest.without_last();
        }
        let target = f(rest.last()?)?;
        let mut list = BlockList {
            blocks: rest.without_last(),
            len: index,
        }
        .pushed(target);
        for block in newer.into_iter().rev() {
            list = list.pushed(block);
        }
        Some(list)
    }
}

/// A block of a [`PartialMessage`], borrowed, as far as it is known
/// without materializing its streamed text: its kind and fields, for an
/// encoder that opens the block on the wire.
///
/// While a block streams, its text (or a tool call's arguments) is left
/// out: `text`, `thinking` or `arguments` is empty and every other field
/// is exact. A complete block is borrowed whole.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BlockShape<'a> {
    /// A text block.
    Text(&'a TextContent),
    /// A thinking block.
    Thinking(&'a ThinkingContent),
    /// A tool call.
    ToolCall(&'a ToolCall),
    /// Any other block (an image, a block of an unknown type), complete.
    Other(&'a ContentBlock),
}

impl<'a> From<&'a ContentBlock> for BlockShape<'a> {
    /// The shape of a complete block: the block itself.
    fn from(block: &'a ContentBlock) -> Self {
        match block {
            ContentBlock::Text(text) => BlockShape::Text(text),
            ContentBlock::Thinking(thinking) => BlockShape::Thinking(thinking),
            ContentBlock::ToolCall(call) => BlockShape::ToolCall(call),
            other => BlockShape::Other(other),
        }
    }
}

impl PartialMessage {
    /// The message's fields but its content, borrowed: its `content` is
    /// empty (the blocks are [`content_block`](Self::content_block) and
    /// [`block_shape`](Self::block_shape)). O(1), no allocation.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, StopReason};
    /// use agentstream::model::PartialBuilder;
    ///
    /// let mut message = assistant([], StopReason::Stop);
    /// message.model = "gpt-test".into();
    /// let mut builder = PartialBuilder::new(message);
    /// builder.push_complete(text("hi"));
    /// let snapshot = builder.snapshot();
    /// assert_eq!(snapshot.header().model, "gpt-test");
    /// assert!(snapshot.header().content.is_empty());
    /// assert_eq!(snapshot.to_message().content.len(), 1);
    /// ```
    pub fn header(&self) -> &AssistantMessage {
        &self.header
    }

    /// Number of content blocks so far.
    pub fn content_len(&self) -> usize {
        self.blocks.len
    }

    /// The content block at `index`, materialized, or `None` past the end.
    pub fn content_block(&self, index: usize) -> Option<ContentBlock> {
        self.blocks.get(index).map(Block::to_content)
    }

    /// Block `index` without materializing it, or `None` past the end:
    /// O(blocks), no allocation (see [`BlockShape`] for what a streaming
    /// block leaves out). [`content_block`](Self::content_block) gives
    /// the block whole.
    ///
    /// ```
    /// use agentstream::message::{assistant, StopReason, ToolCall};
    /// use agentstream::model::{BlockShape, PartialBuilder};
    ///
    /// let mut builder = PartialBuilder::new(assistant([], StopReason::ToolUse));
    /// let call = builder.start_tool_call(ToolCall {
    ///     id: "call_1".into(),
    ///     name: "ls".into(),
    ///     ..ToolCall::default()
    /// });
    /// builder.append(call, r#"{"path":"#.into());
    /// let snapshot = builder.snapshot();
    /// let Some(BlockShape::ToolCall(shape)) = snapshot.block_shape(call) else {
    ///     panic!("a tool call");
    /// };
    /// assert_eq!((shape.id.as_str(), shape.name.as_str()), ("call_1", "ls"));
    /// assert!(shape.arguments.is_empty()); // still streaming
    /// assert!(snapshot.block_shape(1).is_none());
    /// ```
    pub fn block_shape(&self, index: usize) -> Option<BlockShape<'_>> {
        Some(match self.blocks.get(index)? {
            Block::Text { template, .. } => BlockShape::Text(template),
            Block::Thinking { template, .. } => BlockShape::Thinking(template),
            Block::ToolCall { template, .. } => BlockShape::ToolCall(template),
            Block::Complete(block) => BlockShape::from(&**block),
            Block::Call(call) => BlockShape::ToolCall(call),
        })
    }

    /// Length in bytes of the streamed text of block `index` (text, thinking
    /// or raw tool-call arguments), in O(blocks). `None` for a complete block
    /// or past the end.
    pub fn streamed_len(&self, index: usize) -> Option<usize> {
        self.blocks.get(index).and_then(Block::streamed_len)
    }

    /// The rope of streaming block `index` and whether it is a text (0),
    /// thinking (1) or tool-call (2) block, for the protocol checker.
    pub(crate) fn streamed_rope(&self, index: usize) -> Option<(u8, &Rope)> {
        match self.blocks.get(index)? {
            Block::Text { text, .. } => Some((0, text)),
            Block::Thinking { thinking, .. } => Some((1, thinking)),
            Block::ToolCall { raw, .. } => Some((2, raw)),
            Block::Complete(_) | Block::Call(_) => None,
        }
    }

    /// Materializes the snapshot as an [`AssistantMessage`]. A tool call
    /// still streaming has the text received so far as `raw_arguments`,
    /// and as `arguments` what that text parses to so far (partial-JSON
    /// parsing, `{}` before the first delta), or `{}` throughout if it was
    /// opened with [`PartialBuilder::start_tool_call_raw`].
    pub fn to_message(&self) -> AssistantMessage {
        self.materialize(Block::to_content)
    }

    /// Like [`to_message`](Self::to_message), shared: before the first
    /// block (a `start` event's snapshot) it is the snapshot's own header,
    /// without a copy; after, the materialized message in a new `Arc`.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, StopReason};
    /// use agentstream::model::PartialBuilder;
    ///
    /// let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
    /// let start = builder.snapshot();
    /// assert!(std::sync::Arc::ptr_eq(&start.to_shared(), &start.to_shared()));
    /// builder.push_complete(text("hi"));
    /// assert_eq!(*builder.snapshot().to_shared(), builder.snapshot().to_message());
    /// ```
    pub fn to_shared(&self) -> Arc<AssistantMessage> {
        if self.blocks.len == 0 {
            Arc::clone(&self.header)
        } else {
            Arc::new(self.to_message())
        }
    }

    fn materialize(&self, block: fn(&Block) -> ContentBlock) -> AssistantMessage {
        let mut content: Vec<ContentBlock> = self.blocks.iter().map(block).collect();
        content.reverse();
        AssistantMessage {
            content,
            ..AssistantMessage::clone(&self.header)
        }
    }
}

impl From<AssistantMessage> for PartialMessage {
    /// A snapshot whose blocks are all complete.
    fn from(mut message: AssistantMessage) -> Self {
        let content = core::mem::take(&mut message.content);
        let blocks = content
            .into_iter()
            .fold(BlockList::default(), |list, block| {
                list.pushed(Block::Complete(Arc::new(block)))
            });
        Self {
            header: Arc::new(message),
            blocks,
        }
    }
}

impl PartialEq for PartialMessage {
    fn eq(&self, other: &Self) -> bool {
        self.to_message() == other.to_message()
    }
}

impl fmt::Debug for PartialMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.to_message();
        f.debug_struct("PartialMessage")
            .field("content", &message.content)
            .field("stop_reason", &message.stop_reason)
            .finish_non_exhaustive()
    }
}

/// Writes the message formed so far, as Pi's partials are (a tool call
/// still streaming carries the arguments parsed so far and no
/// `rawArguments`; one opened with
/// [`start_tool_call_raw`](PartialBuilder::start_tool_call_raw) carries
/// `arguments: {}` and its `rawArguments`), without materializing it: the header and complete blocks are
/// written in place and streamed texts chunk by chunk (serde_json escapes
/// each chunk straight into its output), so writing a snapshot costs its
/// output and no copy of it.
impl serde::Serialize for PartialMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.header.serialize_with_content(&self.blocks, serializer)
    }
}

impl serde::Serialize for BlockList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut blocks: Vec<&Block> = self.iter().collect();
        blocks.reverse();
        let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
        for block in blocks {
            seq.serialize_element(block)?;
        }
        seq.end()
    }
}

impl serde::Serialize for Block {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Block::Text { text, template } => template.serialize_with_text(text, serializer),
            Block::Thinking { thinking, template } => {
                template.serialize_with_thinking(thinking, serializer)
            }
            Block::ToolCall { .. } => self.to_wire_content().serialize(serializer),
            Block::Complete(block) => block.serialize(serializer),
            Block::Call(call) => call.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{assistant, StopReason};
    use alloc::string::String;

    #[test]
    fn a_block_shape_is_the_materialized_block_without_its_streamed_text() {
        use crate::message::ImageContent;
        let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
        let text = builder.start_text(TextContent {
            text_signature: Some("t".into()),
            ..TextContent::default()
        });
        builder.append(text, "hello".into());
        let thinking = builder.start_thinking(ThinkingContent {
            thinking_signature: Some("s".into()),
            redacted: Some(true),
            ..ThinkingContent::default()
        });
        builder.append(thinking, "hm".into());
        let call = builder.start_tool_call(ToolCall {
            id: "c".into(),
            name: "f".into(),
            ..ToolCall::default()
        });
        builder.append(call, "{\"a\":1}".into());
        let image = builder.push_complete(ContentBlock::Image(ImageContent::default()));
        let done = builder.start_text(TextContent::default());
        builder.append(done, "x".into());
        builder.complete(
            done,
            ContentBlock::Text(TextContent {
                text: "x".into(),
                ..TextContent::default()
            }),
        );
        let snapshot = builder.snapshot();
        for index in 0..snapshot.content_len() {
            let shape = snapshot.block_shape(index).map(|shape| match shape {
                BlockShape::Text(t) => ContentBlock::Text(t.clone()),
                BlockShape::Thinking(t) => ContentBlock::Thinking(t.clone()),
                BlockShape::ToolCall(c) => ContentBlock::ToolCall(c.clone()),
                BlockShape::Other(block) => block.clone(),
            });
            // The materialized block with its streamed text emptied.
            let expected = snapshot.content_block(index).map(|block| match block {
                ContentBlock::Text(t) if index == text => ContentBlock::Text(TextContent {
                    text: String::new(),
                    ..t
                }),
                ContentBlock::Thinking(t) => ContentBlock::Thinking(ThinkingContent {
                    thinking: String::new(),
                    ..t
                }),
                ContentBlock::ToolCall(c) => ContentBlock::ToolCall(ToolCall {
                    arguments: serde_json::Map::new(),
                    raw_arguments: None,
                    ..c
                }),
                other => other,
            });
            assert_eq!(shape, expected, "block {index}");
        }
        assert!(matches!(
            snapshot.block_shape(image),
            Some(BlockShape::Other(_))
        ));
        assert!(matches!(snapshot.block_shape(done), Some(BlockShape::Text(t)) if t.text == "x"));
        assert_eq!(snapshot.block_shape(done + 1), None);
    }

    #[test]
    fn a_snapshot_serializes_as_pis_partial_without_materializing() {
        let mut header = assistant([], StopReason::Stop);
        header
            .extra
            .insert("responseId".into(), serde_json::Value::from("r"));
        let mut builder = PartialBuilder::new(header);
        let done = builder.start_text(TextContent::default());
        builder.append(done, "ended \"quoted\"\n".into());
        builder.complete(
            done,
            ContentBlock::Text(TextContent {
                text: "ended \"quoted\"\n".into(),
                ..TextContent::default()
            }),
        );
        let thinking = builder.start_thinking(ThinkingContent {
            thinking_signature: Some("reasoning_content".into()),
            ..ThinkingContent::default()
        });
        builder.append(thinking, "hm\u{1}".into());
        builder.append(thinking, "m".into());
        let call = builder.start_tool_call(ToolCall {
            id: "c".into(),
            name: "f".into(),
            ..ToolCall::default()
        });
        builder.append(call, "{\"a\":".into());
        let text = builder.start_text(TextContent::default());
        for piece in ["a", "\u{fffd}", "🙂", "\\"] {
            builder.append(text, piece.into());
        }
        for snapshot in [
            PartialBuilder::new(assistant([], StopReason::Stop)).snapshot(),
            builder.snapshot(),
        ] {
            let streamed = serde_json::to_string(&snapshot).unwrap_or_default();
            // Pi's partial: a streaming call has its parsed-so-far
            // arguments and no `rawArguments`.
            let wire = snapshot.materialize(Block::to_wire_content);
            let materialized = serde_json::to_string(&wire).unwrap_or_default();
            assert_eq!(streamed, materialized);
            assert_eq!(
                serde_json::to_value(&snapshot).ok(),
                serde_json::to_value(&wire).ok()
            );
            assert!(!streamed.contains("rawArguments"), "{streamed}");
        }
    }
}
