//! The tool calls the [`ChunkProjector`] tracks: their slots (argument
//! text, whether it is already a complete JSON value), how a fragment
//! finds its call, and the ordering that opens, streams and ends them one
//! at a time (see [Tool calls](super::projector#tool-calls)).

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{ContentBlock, ToolCall};
use agentstream::model::ModelEvent;

use super::projector::{ChunkProjector, Open, QUOTE};
use super::wire::{clip, is_json_blank, ToolCallDelta};
use crate::lenient::cut_completion;
use crate::limits::{Limit, LimitExceeded};
use crate::surrogates::{replace_markers, EscapeJoiner};

pub(crate) use crate::json::parse_arguments;

/// One tool call of the message.
#[derive(Debug, Default)]
pub(crate) struct Call {
    pub(crate) key: Option<u64>,
    pub(crate) id: String,
    pub(crate) name: String,
    /// All argument text received.
    pub(crate) args: String,
    /// Holds back an escape cut between fragments (see
    /// [`surrogates`](crate::surrogates)).
    pub(crate) escapes: EscapeJoiner,
    /// How much of `args` went out as deltas.
    pub(crate) emitted: usize,
    pub(crate) scan: JsonScan,
    /// Set once the call's block is open.
    pub(crate) content_index: Option<usize>,
    pub(crate) ended: bool,
}

/// Tracks whether a JSON text is complete without parsing it: the nesting
/// depth outside strings.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct JsonScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    started: bool,
}

impl JsonScan {
    pub(crate) fn feed(&mut self, text: &str) {
        for b in text.bytes() {
            if self.in_string {
                match (self.escape, b) {
                    (true, _) => self.escape = false,
                    (false, b'\\') => self.escape = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'{' | b'[' => {
                    self.started = true;
                    self.depth += 1;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b'"' => self.in_string = true,
                _ => {}
            }
        }
    }

    pub(crate) fn complete(&self) -> bool {
        self.started && self.depth == 0 && !self.in_string
    }
}

impl ChunkProjector {
    /// The call a fragment belongs to; see the module documentation.
    pub(super) fn resolve(&mut self, key: Option<u64>, id: Option<&str>) -> Result<usize, String> {
        let id = id.filter(|id| !id.is_empty());
        if let Some(key) = key {
            if let Some(&slot) = self.by_key.get(&key) {
                return Ok(slot);
            }
            let unkeyed = id
                .and_then(|id| self.by_id.get(id).copied())
                .filter(|&slot| self.calls[slot].key.is_none());
            if let Some(slot) = unkeyed {
                self.calls[slot].key = Some(key);
                self.by_key.insert(key, slot);
                return Ok(slot);
            }
        } else if let Some(id) = id {
            if let Some(&slot) = self.by_id.get(id) {
                return Ok(slot);
            }
            if self.calls.last().is_some_and(|c| c.id.is_empty()) {
                return Ok(self.calls.len() - 1);
            }
        } else if !self.calls.is_empty() {
            return Ok(self.calls.len() - 1);
        }
        if self.calls.len() >= self.limits.max_tool_calls {
            return Err(LimitExceeded::new(Limit::ToolCalls, &self.limits).to_string());
        }
        let slot = self.calls.len();
        self.calls.push(Call {
            key,
            ..Call::default()
        });
        if let Some(key) = key {
            self.by_key.insert(key, slot);
        }
        Ok(slot)
    }

    pub(super) fn push_tool_fragment(
        &mut self,
        fragment: &ToolCallDelta<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let slot = self.resolve(fragment.index, fragment.id.as_deref())?;
        let name = fragment.function.as_ref().and_then(|f| f.name.as_deref());
        let args = fragment
            .function
            .as_ref()
            .and_then(|f| f.arguments_text())
            .unwrap_or(Cow::Borrowed(""));
        // Lone surrogates: U+FFFD in the id and name, and in the argument
        // text whether it came as a marker or as an escape.
        let marked = self.marked;
        let args = replace_markers(&args, marked);
        let call = &mut self.calls[slot];
        let args = call.escapes.push(&args).into_owned();
        if let Some(id) = fragment.id.as_deref().filter(|id| !id.is_empty()) {
            if call.id.is_empty() {
                call.id = replace_markers(id, marked).into_owned();
                self.by_id.entry(id.into()).or_insert(slot);
            }
        }
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            if call.name.is_empty() {
                call.name = replace_markers(name, marked).into_owned();
            }
        }
        if call.ended {
            if is_json_blank(&args) {
                return Ok(());
            }
            return Err(format!(
                "tool call \"{}\" ({}) received argument text after it was complete: {}",
                call.id,
                call.name,
                clip(&args, QUOTE)
            ));
        }
        if call.args.len().saturating_add(args.len()) > self.limits.max_tool_argument_bytes {
            return Err(LimitExceeded::new(Limit::ToolArgumentBytes, &self.limits).to_string());
        }
        call.args.push_str(&args);
        call.scan.feed(&args);
        self.advance(Some(slot), out)?;
        if self.open == Open::Tool(slot) {
            self.flush(slot, out);
        }
        Ok(())
    }

    /// Moves the open block forward. With `target`, a fragment of call
    /// `target` just arrived: blocks close and calls open until `target` is
    /// live or must wait. Without, every block closes and every call is
    /// streamed and ended.
    pub(super) fn advance(
        &mut self,
        target: Option<usize>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        loop {
            match self.open {
                Open::Tool(live) => {
                    if Some(live) == target
                        || (target.is_some() && !self.calls[live].scan.complete())
                    {
                        return Ok(());
                    }
                    self.end_call(live, out)?;
                    self.open = Open::None;
                }
                Open::Text(index) => {
                    self.flush_surrogate(index, out);
                    let content = self.block_text(index);
                    out.push(ModelEvent::TextEnd {
                        content_index: index,
                        content,
                        partial: self.builder.snapshot(),
                    });
                    self.open = Open::None;
                }
                Open::Thinking(index) => {
                    self.flush_surrogate(index, out);
                    let content = self.block_text(index);
                    out.push(ModelEvent::ThinkingEnd {
                        content_index: index,
                        content,
                        partial: self.builder.snapshot(),
                    });
                    self.open = Open::None;
                }
                Open::None => {
                    let next = self.opened;
                    if next == self.calls.len() {
                        return Ok(());
                    }
                    if self.calls[next].name.is_empty() {
                        if target.is_some() {
                            return Ok(());
                        }
                        return Err(format!(
                            "tool call \"{}\" never received a name",
                            self.calls[next].id
                        ));
                    }
                    self.open_call(next, out)?;
                }
            }
        }
    }

    /// Closes the open block and ends every call.
    pub(super) fn close_all(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        self.advance(None, out)
    }

    pub(super) fn open_call(
        &mut self,
        slot: usize,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        self.count_block()?;
        self.opened += 1;
        let call = &self.calls[slot];
        let index = self.builder.start_tool_call(ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            ..ToolCall::default()
        });
        self.calls[slot].content_index = Some(index);
        self.open = Open::Tool(slot);
        out.push(ModelEvent::ToolCallStart {
            content_index: index,
            partial: self.builder.snapshot(),
        });
        self.flush(slot, out);
        Ok(())
    }

    /// Emits the argument text of an open call not yet sent.
    pub(super) fn flush(&mut self, slot: usize, out: &mut Vec<ModelEvent>) {
        let call = &mut self.calls[slot];
        let Some(index) = call.content_index else {
            return;
        };
        if call.emitted == call.args.len() {
            return;
        }
        let delta: Arc<str> = Arc::from(&call.args[call.emitted..]);
        call.emitted = call.args.len();
        self.builder.append(index, delta.clone());
        out.push(ModelEvent::ToolCallDelta {
            content_index: index,
            delta,
            partial: self.builder.snapshot(),
        });
    }

    pub(super) fn end_call(
        &mut self,
        slot: usize,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let cut = self.cut;
        let call = &mut self.calls[slot];
        let tail = if cut {
            call.escapes.finish_cut()
        } else {
            call.escapes.finish()
        };
        if let Some(tail) = tail {
            call.scan.feed(&tail);
            call.args.push_str(&tail);
        }
        // Cut off: the completion goes out as the call's last delta.
        if let Some(suffix) = cut.then(|| cut_completion(&call.args)).flatten() {
            call.scan.feed(&suffix);
            call.args.push_str(&suffix);
        }
        self.flush(slot, out);
        let position = slot;
        let call = &mut self.calls[slot];
        let Some(index) = call.content_index else {
            return Ok(());
        };
        let arguments = parse_arguments(&call.args).map_err(|e| {
            format!(
                "the arguments of tool call \"{}\" ({}) are not a JSON object: {e}; received: {}",
                call.id,
                call.name,
                clip(&call.args, QUOTE)
            )
        })?;
        call.ended = true;
        if is_json_blank(&call.args) {
            let delta: Arc<str> = Arc::from("{}");
            self.builder.append(index, delta.clone());
            out.push(ModelEvent::ToolCallDelta {
                content_index: index,
                delta,
                partial: self.builder.snapshot(),
            });
        }
        let call = &self.calls[slot];
        let tool_call = ToolCall {
            id: if call.id.is_empty() {
                format!("call_{position}")
            } else {
                call.id.clone()
            },
            name: call.name.clone(),
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
