//! The content blocks of the [`OpenAiProjection`]: one open at a time,
//! fed into the projector's [`Frame`]. Text and reasoning deltas go into
//! the open block of their kind (or close it and open one); tool-call
//! fragments go to their slot in `Calls` (`calls.rs`), and the calls go live one
//! after another, in the order the [module documentation of the
//! projector](super::projector#tool-calls) describes.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{ContentBlock, TextContent, ThinkingContent};
use agentstream::model::ModelEvent;

use super::projector::{Open, OpenAiProjection};
use super::wire::ToolCallDelta;
use crate::cause::Failure;
use crate::limits::{Limit, LimitExceeded};
use crate::sse::Frame;

impl OpenAiProjection {
    /// Counts a new content block against the limit.
    pub(super) fn count_block(&mut self, frame: &mut Frame) -> Result<(), Failure> {
        if self.blocks >= frame.limits.max_content_blocks {
            return Err(LimitExceeded::new(Limit::ContentBlocks, &frame.limits).into());
        }
        self.blocks += 1;
        Ok(())
    }

    /// Text (`thinking` `None`) or reasoning from the delta field
    /// `thinking` names: into the open block of that kind, or a new one.
    pub(super) fn push_prose(
        &mut self,
        frame: &mut Frame,
        thinking: Option<&'static str>,
        delta: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let open = match (self.open, thinking) {
            (Open::Text(index), None) | (Open::Thinking(index), Some(_)) => Some(index),
            _ => None,
        };
        if open.is_none() {
            // Closing first, so a half held back by the old block is
            // flushed there.
            self.close_all(frame, out)?;
        }
        let joined = self.joiner.join(delta, self.marked);
        let delta = joined.as_deref().unwrap_or(delta);
        let index = match open {
            Some(index) => index,
            None => {
                self.count_block(frame)?;
                let (index, open) = match thinking {
                    None => {
                        let index = frame.builder.start_text(TextContent::default());
                        (index, Open::Text(index))
                    }
                    Some(field) => {
                        let index = frame.builder.start_thinking(ThinkingContent {
                            thinking_signature: Some(field.into()),
                            ..ThinkingContent::default()
                        });
                        (index, Open::Thinking(index))
                    }
                };
                self.open = open;
                let partial = frame.builder.snapshot();
                out.push(match thinking {
                    None => ModelEvent::TextStart {
                        content_index: index,
                        partial,
                    },
                    Some(_) => ModelEvent::ThinkingStart {
                        content_index: index,
                        partial,
                    },
                });
                index
            }
        };
        if delta.is_empty() {
            return Ok(());
        }
        self.push_prose_delta(frame, index, Arc::from(delta), out);
        Ok(())
    }

    /// Appends `delta` to text or thinking block `index` (the open one)
    /// and emits its delta event.
    pub(super) fn push_prose_delta(
        &mut self,
        frame: &mut Frame,
        index: usize,
        delta: Arc<str>,
        out: &mut Vec<ModelEvent>,
    ) {
        frame.builder.append(index, delta.clone());
        let partial = frame.builder.snapshot();
        out.push(match self.open {
            Open::Thinking(_) => ModelEvent::ThinkingDelta {
                content_index: index,
                delta,
                partial,
            },
            _ => ModelEvent::TextDelta {
                content_index: index,
                delta,
                partial,
            },
        });
    }

    /// A surrogate half held back at the end of text or thinking block
    /// `index` becomes a last U+FFFD delta.
    pub(super) fn flush_surrogate(
        &mut self,
        frame: &mut Frame,
        index: usize,
        out: &mut Vec<ModelEvent>,
    ) {
        let Some(replacement) = self.joiner.finish() else {
            return;
        };
        let mut buf = [0; 4];
        let delta: Arc<str> = Arc::from(&*replacement.encode_utf8(&mut buf));
        self.push_prose_delta(frame, index, delta, out);
    }

    pub(super) fn block_text(&self, frame: &Frame, index: usize) -> String {
        match frame.builder.snapshot().content_block(index) {
            Some(ContentBlock::Text(t)) => t.text,
            Some(ContentBlock::Thinking(t)) => t.thinking,
            _ => String::new(),
        }
    }

    pub(super) fn push_tool_fragment(
        &mut self,
        frame: &mut Frame,
        fragment: &ToolCallDelta<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let fragment = self.calls.push_fragment(fragment, self.marked, frame)?;
        let Some(slot) = fragment else {
            return Ok(());
        };
        self.advance(frame, Some(slot), out)?;
        if self.open == Open::Tool(slot) {
            self.calls.flush(frame, slot, out);
        }
        Ok(())
    }

    /// Moves the open block forward. With `target`, a fragment of call
    /// `target` just arrived: blocks close and calls open until `target` is
    /// live or must wait. Without, every block closes and every call is
    /// streamed and ended.
    pub(super) fn advance(
        &mut self,
        frame: &mut Frame,
        target: Option<usize>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        loop {
            match self.open {
                Open::Tool(live) => {
                    if Some(live) == target || (target.is_some() && !self.calls.is_complete(live)) {
                        return Ok(());
                    }
                    self.calls.end(frame, live, self.cut, out)?;
                    self.open = Open::None;
                }
                Open::Text(index) | Open::Thinking(index) => {
                    self.flush_surrogate(frame, index, out);
                    let content = self.block_text(frame, index);
                    let partial = frame.builder.snapshot();
                    out.push(match self.open {
                        Open::Thinking(_) => ModelEvent::ThinkingEnd {
                            content_index: index,
                            content,
                            partial,
                        },
                        _ => ModelEvent::TextEnd {
                            content_index: index,
                            content,
                            partial,
                        },
                    });
                    self.open = Open::None;
                }
                Open::None => {
                    let Some(named) = self.calls.next_is_named() else {
                        return Ok(());
                    };
                    if !named {
                        if target.is_some() {
                            return Ok(());
                        }
                        return Err(self.calls.unnamed_error().into());
                    }
                    self.count_block(frame)?;
                    let slot = self.calls.open_next(frame, out);
                    self.open = Open::Tool(slot);
                }
            }
        }
    }

    /// Closes the open block and ends every call.
    pub(super) fn close_all(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.advance(frame, None, out)
    }
}
