//! The content blocks of the [`EventProjector`]: opening one from its
//! `content_block_start`, applying its deltas, and ending it (a tool
//! call's argument text parsed into its arguments).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use serde_json::Value;

use agentstream::message::{ContentBlock, TextContent, ThinkingContent, ToolCall};
use agentstream::model::ModelEvent;

use super::payload::Delta;
use super::projector::{EventProjector, QUOTE};
use crate::json::{clip, is_json_blank, parse_arguments};
use crate::limits::Limit;

/// The block that is open, by its content index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Open {
    None,
    Text(usize),
    Thinking {
        index: usize,
        signature: Option<String>,
    },
    Tool {
        index: usize,
        id: String,
        name: String,
        args: String,
    },
    /// A block of a type we do not know: its deltas are skipped.
    Skipped,
}

/// Which delta event an appended fragment produces.
#[derive(Debug, Clone, Copy)]
enum DeltaKind {
    Text,
    Thinking,
    Tool,
}

impl EventProjector {
    pub(super) fn open_block(
        &mut self,
        block: Option<&Value>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let kind = block.and_then(|b| b.get("type")).and_then(Value::as_str);
        if matches!(
            kind,
            Some("text" | "thinking" | "redacted_thinking" | "tool_use")
        ) {
            if self.blocks >= self.limits.max_content_blocks {
                return Err(self.exceeded(Limit::ContentBlocks));
            }
            self.blocks += 1;
        }
        if kind == Some("tool_use") {
            if self.tool_calls >= self.limits.max_tool_calls {
                return Err(self.exceeded(Limit::ToolCalls));
            }
            self.tool_calls += 1;
        }
        let text_of = |name: &str| {
            block
                .and_then(|b| b.get(name))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        match kind {
            Some("text") => {
                let index = self.builder.start_text(TextContent::default());
                self.open = Open::Text(index);
                out.push(ModelEvent::TextStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let initial = text_of("text");
                if !initial.is_empty() {
                    self.append(index, initial, DeltaKind::Text, out);
                }
            }
            Some("thinking") => {
                let index = self.builder.start_thinking(ThinkingContent::default());
                let signature = Some(text_of("signature"))
                    .filter(|s| !s.is_empty())
                    .map(String::from);
                self.open = Open::Thinking { index, signature };
                out.push(ModelEvent::ThinkingStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let initial = text_of("thinking");
                if !initial.is_empty() {
                    self.append(index, initial, DeltaKind::Thinking, out);
                }
            }
            Some("redacted_thinking") => {
                let index = self.builder.start_thinking(ThinkingContent::default());
                out.push(ModelEvent::ThinkingStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
                let block = ThinkingContent {
                    thinking_signature: Some(text_of("data").into()),
                    redacted: Some(true),
                    ..ThinkingContent::default()
                };
                self.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: String::new(),
                    partial: self.builder.snapshot(),
                });
            }
            Some("tool_use") => {
                let id = String::from(text_of("id"));
                let name = String::from(text_of("name"));
                let index = self.builder.start_tool_call(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    ..ToolCall::default()
                });
                self.has_tool_calls = true;
                self.open = Open::Tool {
                    index,
                    id,
                    name,
                    args: String::new(),
                };
                out.push(ModelEvent::ToolCallStart {
                    content_index: index,
                    partial: self.builder.snapshot(),
                });
            }
            _ => self.open = Open::Skipped,
        }
        Ok(())
    }

    pub(super) fn push_delta(
        &mut self,
        delta: &Delta<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let max_arguments = self.limits.max_tool_argument_bytes;
        let kind = delta.kind.as_deref();
        let field = |name: &str| {
            let value = match name {
                "text" => &delta.text,
                "thinking" => &delta.thinking,
                "signature" => &delta.signature,
                _ => &delta.partial_json,
            };
            value.as_deref().unwrap_or("")
        };
        match (&mut self.open, kind) {
            (Open::Text(index), Some("text_delta")) => {
                let index = *index;
                let text = field("text");
                if !text.is_empty() {
                    self.append(index, text, DeltaKind::Text, out);
                }
            }
            (Open::Thinking { index, .. }, Some("thinking_delta")) => {
                let index = *index;
                let text = field("thinking");
                if !text.is_empty() {
                    self.append(index, text, DeltaKind::Thinking, out);
                }
            }
            (Open::Thinking { signature, .. }, Some("signature_delta")) => {
                let part = field("signature");
                match signature {
                    Some(s) => s.push_str(part),
                    None => *signature = Some(part.into()),
                }
            }
            (Open::Tool { index, args, .. }, Some("input_json_delta")) => {
                let index = *index;
                let part = field("partial_json");
                if args.len().saturating_add(part.len()) > max_arguments {
                    return Err(self.exceeded(Limit::ToolArgumentBytes));
                }
                if !part.is_empty() {
                    args.push_str(part);
                    self.append(index, part, DeltaKind::Tool, out);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn append(&mut self, index: usize, text: &str, kind: DeltaKind, out: &mut Vec<ModelEvent>) {
        let joined = match kind {
            DeltaKind::Text | DeltaKind::Thinking => self.joiner.join(text, self.marked),
            DeltaKind::Tool => None,
        };
        let text = joined.as_deref().unwrap_or(text);
        if text.is_empty() {
            return;
        }
        self.push_delta_event(index, text, kind, out);
    }

    /// A surrogate half held back at the end of text or thinking block
    /// `index` becomes a last U+FFFD delta.
    fn flush_surrogate(&mut self, index: usize, kind: DeltaKind, out: &mut Vec<ModelEvent>) {
        if let Some(replacement) = self.joiner.finish() {
            let mut buf = [0; 4];
            self.push_delta_event(index, replacement.encode_utf8(&mut buf), kind, out);
        }
    }

    fn push_delta_event(
        &mut self,
        index: usize,
        text: &str,
        kind: DeltaKind,
        out: &mut Vec<ModelEvent>,
    ) {
        let delta: Arc<str> = Arc::from(text);
        self.builder.append(index, delta.clone());
        let partial = self.builder.snapshot();
        out.push(match kind {
            DeltaKind::Text => ModelEvent::TextDelta {
                content_index: index,
                delta,
                partial,
            },
            DeltaKind::Thinking => ModelEvent::ThinkingDelta {
                content_index: index,
                delta,
                partial,
            },
            DeltaKind::Tool => ModelEvent::ToolCallDelta {
                content_index: index,
                delta,
                partial,
            },
        });
    }

    fn block_text(&self, index: usize) -> String {
        match self.builder.snapshot().content_block(index) {
            Some(ContentBlock::Text(t)) => t.text,
            Some(ContentBlock::Thinking(t)) => t.thinking,
            _ => String::new(),
        }
    }

    /// Ends the open block, if any.
    pub(super) fn close(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        match core::mem::replace(&mut self.open, Open::None) {
            Open::None | Open::Skipped => Ok(()),
            Open::Text(index) => {
                self.flush_surrogate(index, DeltaKind::Text, out);
                let content = self.block_text(index);
                out.push(ModelEvent::TextEnd {
                    content_index: index,
                    content,
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
            Open::Thinking { index, signature } => {
                self.flush_surrogate(index, DeltaKind::Thinking, out);
                let thinking = self.block_text(index);
                let block = ThinkingContent {
                    thinking: thinking.clone(),
                    thinking_signature: signature,
                    ..ThinkingContent::default()
                };
                self.builder.complete(index, ContentBlock::Thinking(block));
                out.push(ModelEvent::ThinkingEnd {
                    content_index: index,
                    content: thinking,
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
            Open::Tool {
                index,
                id,
                name,
                args,
            } => {
                let arguments = match parse_arguments(&args) {
                    Ok(arguments) => arguments,
                    Err(e) => {
                        let message = format!(
                            "the arguments of tool call \"{id}\" ({name}) are not a JSON object: {e}; received: {}",
                            clip(&args, QUOTE)
                        );
                        // Kept open so the error leaves the call out.
                        self.open = Open::Tool {
                            index,
                            id,
                            name,
                            args,
                        };
                        return Err(message);
                    }
                };
                if is_json_blank(&args) {
                    self.append(index, "{}", DeltaKind::Tool, out);
                }
                let tool_call = ToolCall {
                    id,
                    name,
                    arguments,
                    ..ToolCall::default()
                };
                self.builder
                    .complete(index, ContentBlock::ToolCall(tool_call.clone()));
                out.push(ModelEvent::ToolCallEnd {
                    content_index: index,
                    tool_call: Box::new(tool_call),
                    partial: self.builder.snapshot(),
                });
                Ok(())
            }
        }
    }
}
