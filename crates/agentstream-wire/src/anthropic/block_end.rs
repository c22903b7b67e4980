//! The end of an Anthropic content block, the other half of
//! [`Blocks`]: its last delta (what the surrogate
//! joiner or the escapes held back; a cut-off call's completion), its
//! `*_end` event with the completed block in the frame's message, and what
//! the message of an `error` keeps of the live block.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::{ContentBlock, ThinkingContent, ToolCall};
use agentstream::model::{ModelEvent, PartialBuilder};

use super::blocks::{Blocks, Kind};
use super::payload::QUOTE;
use crate::cause::Failure;
use crate::cut_json::cut_completion;
use crate::event_writer::{push_delta_event, Kind as DeltaKind};
use crate::json::{clip, is_json_blank, parse_arguments};
use crate::sse::Frame;

impl Blocks {
    /// Emits the end of live block `wire` and forgets it.
    pub(super) fn end_block(
        &mut self,
        frame: &mut Frame,
        wire: u64,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.cut_candidate = false;
        let cut = self.cut;
        let Some(block) = self.open.get_mut(&wire) else {
            return Ok(());
        };
        let Some(index) = block.content else {
            return Ok(());
        };
        let tail = block.joiner.finish();
        let (event, tail) = match &mut block.kind {
            Kind::Tool { args, escapes, .. } => {
                let mut tail = escapes.finish_as(cut);
                if let Some(tail) = &tail {
                    args.push_str(tail);
                }
                // Cut off: the completion goes out as the last delta.
                if let Some(suffix) = cut.then(|| cut_completion(args)).flatten() {
                    args.push_str(&suffix);
                    tail.get_or_insert_with(String::new).push_str(&suffix);
                }
                (DeltaKind::Tool, tail)
            }
            Kind::Thinking { .. } => (DeltaKind::Thinking, tail.map(String::from)),
            _ => (DeltaKind::Text, tail.map(String::from)),
        };
        if let Some(tail) = tail {
            push_delta_event(&mut frame.builder, index, &tail, event, out);
        }
        let Some(block) = self.open.get(&wire) else {
            return Ok(());
        };
        match &block.kind {
            Kind::Text => {
                let content = block_text(&frame.builder, index);
                out.push(ModelEvent::TextEnd {
                    content_index: index,
                    content,
                    partial: frame.builder.snapshot(),
                });
            }
            Kind::Thinking { signature } => {
                let thinking = block_text(&frame.builder, index);
                let block = ThinkingContent {
                    thinking: thinking.clone(),
                    thinking_signature: signature.clone(),
                    ..ThinkingContent::default()
                };
                frame.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: thinking,
                    partial: frame.builder.snapshot(),
                });
            }
            Kind::Redacted { data } => {
                let stopped = block.stopped;
                let block = ThinkingContent {
                    thinking_signature: Some(data.clone()),
                    redacted: Some(true),
                    ..ThinkingContent::default()
                };
                frame.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: String::new(),
                    partial: frame.builder.snapshot(),
                });
                if !stopped {
                    // Its stop is still to come: it stays open until then,
                    // marked as out by its content index.
                    return Ok(());
                }
            }
            Kind::Tool { id, name, args, .. } => {
                let arguments = parse_arguments(args).map_err(|e| {
                    format!(
                        "the arguments of tool call \"{id}\" ({name}) are not a JSON object: {e}; received: {}",
                        clip(args, QUOTE)
                    )
                })?;
                let blank = is_json_blank(args);
                let tool_call = ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments,
                    ..ToolCall::default()
                };
                if blank {
                    push_delta_event(&mut frame.builder, index, "{}", DeltaKind::Tool, out);
                }
                frame.end_tool_call(index, tool_call, out);
            }
            Kind::Skipped => {}
        }
        self.open.remove(&wire);
        Ok(())
    }

    /// The live block's part of an error's message: an open tool call is
    /// kept only when its argument text is already a JSON object, and an
    /// open thinking block keeps its signature.
    pub(super) fn settle_live(&self, content: &mut Vec<ContentBlock>) {
        let Some(block) = self.live() else {
            return;
        };
        let Some(index) = block.content else {
            return;
        };
        match &block.kind {
            Kind::Tool { id, name, args, .. } => match parse_arguments(args) {
                Ok(arguments) if !is_json_blank(args) => {
                    if let Some(slot) = content.get_mut(index) {
                        *slot = ContentBlock::ToolCall(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments,
                            ..ToolCall::default()
                        });
                    }
                }
                _ => content.truncate(index),
            },
            Kind::Thinking {
                signature: Some(signature),
            } => {
                if let Some(ContentBlock::Thinking(t)) = content.get_mut(index) {
                    t.thinking_signature = Some(signature.clone());
                }
            }
            _ => {}
        }
    }
}

/// The text so far of text or thinking block `index`.
fn block_text(builder: &PartialBuilder, index: usize) -> String {
    match builder.snapshot().content_block(index) {
        Some(ContentBlock::Text(t)) => t.text,
        Some(ContentBlock::Thinking(t)) => t.thinking,
        _ => String::new(),
    }
}
