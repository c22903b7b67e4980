//! [`PartialBuilder`]: the successive snapshots of one streaming message,
//! each made from the last in O(1).

use alloc::string::String;
use alloc::sync::Arc;

use super::{ArgumentsShown, Block, BlockList, PartialMessage};
use crate::message::{AssistantMessage, ContentBlock, TextContent, ThinkingContent, ToolCall};
use crate::model::rope::Rope;

/// Builds successive [`PartialMessage`] snapshots of one streaming message.
///
/// Every method is O(1) when it touches the last block, which is the only
/// block a sequential producer touches.
#[derive(Clone, Debug)]
pub struct PartialBuilder {
    current: PartialMessage,
}

impl PartialBuilder {
    /// Starts from `header`: every field of the message but its content,
    /// which is cleared.
    pub fn new(mut header: AssistantMessage) -> Self {
        header.content.clear();
        Self {
            current: PartialMessage {
                header: Arc::new(header),
                blocks: BlockList::default(),
            },
        }
    }

    /// The message as formed so far. O(1).
    pub fn snapshot(&self) -> PartialMessage {
        self.current.clone()
    }

    /// Number of content blocks so far.
    pub fn content_len(&self) -> usize {
        self.current.blocks.len
    }

    fn push(&mut self, block: Block) -> usize {
        let index = self.current.blocks.len;
        self.current.blocks = self.current.blocks.pushed(block);
        index
    }

    /// Opens a text block whose text will be streamed; `template.text` is
    /// ignored. Returns its content index.
    pub fn start_text(&mut self, template: TextContent) -> usize {
        self.push(Block::Text {
            text: Rope::default(),
            template: Arc::new(TextContent {
                text: String::new(),
                ..template
            }),
        })
    }

    /// Opens a thinking block whose text will be streamed;
    /// `template.thinking` is ignored. Returns its content index.
    pub fn start_thinking(&mut self, template: ThinkingContent) -> usize {
        self.push(Block::Thinking {
            thinking: Rope::default(),
            template: Arc::new(ThinkingContent {
                thinking: String::new(),
                ..template
            }),
        })
    }

    /// Opens a tool call whose argument JSON will be streamed, shown as
    /// pi-ai's providers show it: in snapshots its `arguments` are what the
    /// text so far parses to (`{}` at first) and `raw_arguments` holds the
    /// text (not serialized). Returns its content index.
    pub fn start_tool_call(&mut self, template: ToolCall) -> usize {
        self.open_tool_call(template, ArgumentsShown::Parsed)
    }

    /// Opens a tool call whose argument JSON will be streamed, shown as
    /// chapter 04's `ScriptedModel` shows it: in snapshots its `arguments`
    /// stay `{}` (the structured arguments are not finished) and
    /// `raw_arguments` holds the text received so far, serialized as
    /// `rawArguments`. Completing the call ([`complete_tool_call`]) replaces
    /// both. Returns its content index.
    ///
    /// [`complete_tool_call`]: Self::complete_tool_call
    ///
    /// ```
    /// use agentstream::message::{assistant, StopReason, ToolCall};
    /// use agentstream::model::PartialBuilder;
    /// use serde_json::json;
    ///
    /// let mut builder = PartialBuilder::new(assistant([], StopReason::ToolUse));
    /// let call = ToolCall { id: "c1".into(), name: "read".into(), ..ToolCall::default() };
    /// let index = builder.start_tool_call_raw(call);
    /// builder.append(index, r#"{"path":"README.md"}"#.into());
    /// let partial = serde_json::to_value(builder.snapshot()).unwrap();
    /// assert_eq!(
    ///     partial["content"][0],
    ///     json!({
    ///         "type": "toolCall",
    ///         "id": "c1",
    ///         "name": "read",
    ///         "arguments": {},
    ///         "rawArguments": r#"{"path":"README.md"}"#,
    ///     })
    /// );
    /// ```
    pub fn start_tool_call_raw(&mut self, template: ToolCall) -> usize {
        self.open_tool_call(template, ArgumentsShown::Raw)
    }

    fn open_tool_call(&mut self, template: ToolCall, shown: ArgumentsShown) -> usize {
        self.push(Block::ToolCall {
            raw: Rope::default(),
            template: Arc::new(ToolCall {
                arguments: serde_json::Map::new(),
                raw_arguments: None,
                ..template
            }),
            shown,
        })
    }

    /// Adds a complete block. Returns its content index.
    pub fn push_complete(&mut self, block: ContentBlock) -> usize {
        self.push(Block::Complete(Arc::new(block)))
    }

    /// Appends `delta` to the streamed text of block `index`. Returns `false`
    /// (and changes nothing) if there is no such block or it is complete.
    pub fn append(&mut self, index: usize, delta: Arc<str>) -> bool {
        self.update(index, |block| block.appended(delta))
    }

    /// Replaces block `index` with its complete form (for example a tool call
    /// with parsed arguments). Returns `false` if there is no such block.
    pub fn complete(&mut self, index: usize, block: ContentBlock) -> bool {
        let block = Block::Complete(Arc::new(block));
        self.update(index, |_| Some(block))
    }

    /// Replaces block `index` with the complete tool call `call`, shared
    /// with whoever else holds it (the `toolcall_end` event that carries
    /// it), so the call is not copied. Returns `false` if there is no such
    /// block.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agentstream::message::{assistant, StopReason, ToolCall};
    /// use agentstream::model::PartialBuilder;
    ///
    /// let mut builder = PartialBuilder::new(assistant([], StopReason::ToolUse));
    /// let index = builder.start_tool_call(ToolCall::default());
    /// let call = Arc::new(ToolCall { id: "call_1".into(), name: "ls".into(), ..ToolCall::default() });
    /// assert!(builder.complete_tool_call(index, call.clone()));
    /// assert_eq!(builder.snapshot().to_message().tool_calls().next(), Some(&*call));
    /// ```
    pub fn complete_tool_call(&mut self, index: usize, call: Arc<ToolCall>) -> bool {
        self.update(index, |_| Some(Block::Call(call)))
    }

    /// Replaces block `index` with `f(block)`; `false` (and nothing
    /// changed) if there is no such block or `f` refuses it.
    fn update(&mut self, index: usize, f: impl FnOnce(&Block) -> Option<Block>) -> bool {
        match self.current.blocks.updated(index, f) {
            Some(blocks) => {
                self.current.blocks = blocks;
                true
            }
            None => false,
        }
    }

    /// The message with its content as formed so far, with `stop_reason` and
    /// `error_message` replaced: the message of an `error` event that ends a
    /// stream early.
    pub fn to_error_message(
        &self,
        stop_reason: crate::message::StopReason,
        error_message: impl Into<String>,
    ) -> AssistantMessage {
        AssistantMessage {
            stop_reason,
            error_message: Some(error_message.into()),
            ..self.current.to_message()
        }
    }

    /// Continues from an existing snapshot.
    pub fn from_snapshot(snapshot: PartialMessage) -> Self {
        Self { current: snapshot }
    }
}
