//! [`EventWriter`]: the event-protocol side a projector shares with every
//! other: the partial snapshots, one open block at a time, the limits on
//! blocks, calls and argument bytes, lone surrogate halves joined across
//! deltas (and U+FFFD for every other one: in tool-call ids, names,
//! arguments, signatures and header fields, as
//! [`surrogates`](crate::surrogates) describes), and the terminal `done` or
//! `error` with the usage and its cost.
//!
//! A provider's projector reads its wire format and drives an `EventWriter`;
//! every sequence an `EventWriter` produces passes
//! [`validate_events`](agentstream::model::validate_events).

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{
    AssistantMessage, ContentBlock, TextContent, ThinkingContent, ToolCall, Usage,
};
use serde_json::{Map, Value};

use agentstream::model::{DoneReason, ModelEvent, PartialBuilder};

use crate::cause::Failure;
use crate::cut_json::completion;
use crate::json::{clip, is_json_blank, parse_arguments, saturate_numbers};
use crate::limits::{Limit, LimitExceeded};
use crate::sse::Frame;
use crate::surrogates::{
    replace_lone_surrogates, replace_markers, unmarked, EscapeJoiner, SurrogateJoiner,
};

/// How many characters of offending argument text an error message quotes.
const QUOTE: usize = 200;

/// The kind of the open block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Thinking,
    Tool,
}

/// The open block.
#[derive(Debug)]
struct Open {
    kind: Kind,
    index: usize,
    /// The text or thinking signature, or the call's `thoughtSignature`.
    signature: Option<String>,
    /// A tool call's id, name and argument text.
    id: String,
    name: String,
    args: String,
    /// The argument text's lone surrogate escapes (see
    /// [`EscapeJoiner`]).
    escapes: EscapeJoiner,
}

/// See the [module documentation](self).
#[derive(Debug)]
pub(crate) struct EventWriter {
    open: Option<Open>,
    has_tool_calls: bool,
    /// The usage, once the provider sent any.
    pub(crate) usage: Option<Usage>,
    blocks: usize,
    tool_calls: usize,
    joiner: SurrogateJoiner,
    /// The payload being projected had lone surrogate escapes (marked).
    pub(crate) marked: bool,
    /// Header fields learnt after `start`, set on the terminal message.
    late_extra: Map<String, Value>,
}

impl EventWriter {
    pub(crate) fn new() -> Self {
        Self {
            open: None,
            has_tool_calls: false,
            usage: None,
            blocks: 0,
            tool_calls: 0,
            joiner: SurrogateJoiner::default(),
            marked: false,
            late_extra: Map::new(),
        }
    }

    /// Sets header field `key` of the message: in the header before
    /// `start`, on the terminal message after it. A string's lone
    /// surrogates become U+FFFD.
    pub(crate) fn set_extra(&mut self, frame: &mut Frame, key: &str, mut value: Value) {
        if let Value::String(text) = &mut value {
            *text = unmarked(core::mem::take(text), self.marked);
        }
        if frame.is_started() {
            self.late_extra.insert(key.into(), value);
        } else {
            frame.edit_header(|h| {
                h.extra.insert(key.into(), value);
            });
        }
    }

    pub(crate) fn has_tool_calls(&self) -> bool {
        self.has_tool_calls
    }

    /// The number of tool calls opened so far.
    pub(crate) fn tool_call_count(&self) -> usize {
        self.tool_calls
    }

    /// The kind and content index of the open block.
    pub(crate) fn open_block(&self) -> Option<(Kind, usize)> {
        self.open.as_ref().map(|o| (o.kind, o.index))
    }

    /// The argument text of the open tool call so far.
    pub(crate) fn open_arguments(&self) -> Option<&str> {
        self.open
            .as_ref()
            .filter(|o| o.kind == Kind::Tool)
            .map(|o| o.args.as_str())
    }

    /// The failure of exceeding `limit`.
    pub(crate) fn exceeded(&self, frame: &Frame, limit: Limit) -> Failure {
        LimitExceeded::new(limit, &frame.limits).into()
    }

    pub(crate) fn start(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        frame.start(out);
    }

    fn count_block(&mut self, frame: &mut Frame, tool: bool) -> Result<(), Failure> {
        if self.blocks >= frame.limits.max_content_blocks {
            return Err(self.exceeded(frame, Limit::ContentBlocks));
        }
        if tool && self.tool_calls >= frame.limits.max_tool_calls {
            return Err(self.exceeded(frame, Limit::ToolCalls));
        }
        self.blocks += 1;
        if tool {
            self.tool_calls += 1;
            self.has_tool_calls = true;
        }
        Ok(())
    }

    /// Closes the open block and opens a text or thinking block.
    pub(crate) fn open_text(
        &mut self,
        frame: &mut Frame,
        kind: Kind,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.start(frame, out);
        self.close(frame, out)?;
        self.count_block(frame, false)?;
        let index = if kind == Kind::Thinking {
            frame.builder.start_thinking(ThinkingContent::default())
        } else {
            frame.builder.start_text(TextContent::default())
        };
        self.open = Some(Open {
            kind,
            index,
            signature: None,
            id: String::new(),
            name: String::new(),
            args: String::new(),
            escapes: EscapeJoiner::default(),
        });
        let partial = frame.builder.snapshot();
        out.push(if kind == Kind::Thinking {
            ModelEvent::ThinkingStart {
                content_index: index,
                partial,
            }
        } else {
            ModelEvent::TextStart {
                content_index: index,
                partial,
            }
        });
        Ok(())
    }

    /// Closes the open block and opens a tool call. Lone surrogates in the
    /// id, name and signature become U+FFFD.
    pub(crate) fn open_tool(
        &mut self,
        frame: &mut Frame,
        id: String,
        name: String,
        thought_signature: Option<String>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let id = self.unmarked(id);
        let name = self.unmarked(name);
        let thought_signature = thought_signature.map(|s| self.unmarked(s));
        self.start(frame, out);
        self.close(frame, out)?;
        self.count_block(frame, true)?;
        let index = frame.builder.start_tool_call(ToolCall {
            id: id.clone(),
            name: name.clone(),
            ..ToolCall::default()
        });
        self.open = Some(Open {
            kind: Kind::Tool,
            index,
            signature: thought_signature,
            id,
            name,
            args: String::new(),
            escapes: EscapeJoiner::default(),
        });
        out.push(ModelEvent::ToolCallStart {
            content_index: index,
            partial: frame.builder.snapshot(),
        });
        Ok(())
    }

    /// Sets the signature of the open block (a text's `textSignature`, a
    /// thinking's `thinkingSignature`, a call's `thoughtSignature`); lone
    /// surrogates become U+FFFD.
    pub(crate) fn set_signature(&mut self, signature: String) {
        let signature = self.unmarked(signature);
        if let Some(open) = &mut self.open {
            open.signature = Some(signature);
        }
    }

    /// `text` with the markers of the payload being projected replaced by
    /// U+FFFD: the rule for strings that are not joined across deltas.
    pub(crate) fn unmarked(&self, text: String) -> String {
        unmarked(text, self.marked)
    }

    /// Appends `text` to the open block (a tool call's argument text, its
    /// lone surrogates, marked or escaped, replaced by U+FFFD; or text with
    /// its marked surrogate halves joined).
    pub(crate) fn append(
        &mut self,
        frame: &mut Frame,
        text: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let max = frame.limits.max_tool_argument_bytes;
        let marked = self.marked;
        let Some(open) = &mut self.open else {
            return Ok(());
        };
        let (kind, index) = (open.kind, open.index);
        if kind == Kind::Tool {
            let text = open.escapes.push_arguments(text, marked);
            if open.args.len().saturating_add(text.len()) > max {
                return Err(self.exceeded(frame, Limit::ToolArgumentBytes));
            }
            open.args.push_str(&text);
            if !text.is_empty() {
                self.push_delta(frame, kind, index, &text, out);
            }
            return Ok(());
        }
        let joined = self.joiner.join(text, self.marked);
        let text = joined.as_deref().unwrap_or(text);
        if !text.is_empty() {
            self.push_delta(frame, kind, index, text, out);
        }
        Ok(())
    }

    fn push_delta(
        &mut self,
        frame: &mut Frame,
        kind: Kind,
        index: usize,
        text: &str,
        out: &mut Vec<ModelEvent>,
    ) {
        push_delta_event(&mut frame.builder, index, text, kind, out);
    }

    /// Appends the part of `full` (the open tool call's whole argument
    /// text, as a provider's `done` event repeats it) past the argument
    /// text received so far, when `full` extends it. Costs one pass over
    /// `full` when it is longer than what was received, nothing otherwise,
    /// and copies nothing of the arguments: repeating it is linear in the
    /// input.
    pub(crate) fn extend_arguments(
        &mut self,
        frame: &mut Frame,
        full: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(open) = self.open.as_ref().filter(|o| o.kind == Kind::Tool) else {
            return Ok(());
        };
        let full = replace_markers(full, self.marked);
        let (handed_on, pending) = (open.args.len(), open.escapes.pending());
        let received = handed_on + pending.len();
        if full.len() <= received {
            return Ok(());
        }
        let (Some(head), Some(rest)) = (full.get(..handed_on), full.get(handed_on..)) else {
            return Ok(());
        };
        // What was handed on had its lone escapes replaced by escapes of
        // the same length; what is held back is raw.
        let head = replace_lone_surrogates(head).map_or(Cow::Borrowed(head), Cow::Owned);
        if *head != *open.args || !rest.starts_with(pending) {
            return Ok(());
        }
        match full.get(received..) {
            Some(more) => self.append(frame, more, out),
            None => Ok(()),
        }
    }

    /// Hands on what the open tool call's escapes hold back (`cut`: the
    /// provider stopped for length) as its last delta.
    fn flush_escapes(&mut self, frame: &mut Frame, cut: bool, out: &mut Vec<ModelEvent>) {
        let Some(open) = self.open.as_mut().filter(|o| o.kind == Kind::Tool) else {
            return;
        };
        if let Some(tail) = open.escapes.finish_as(cut) {
            open.args.push_str(&tail);
            let index = open.index;
            self.push_delta(frame, Kind::Tool, index, &tail, out);
        }
    }

    /// The text of the open text or thinking block so far.
    pub(crate) fn open_text_so_far(&self, frame: &Frame) -> String {
        let Some(open) = &self.open else {
            return String::new();
        };
        match frame.builder.snapshot().content_block(open.index) {
            Some(ContentBlock::Text(t)) => t.text,
            Some(ContentBlock::Thinking(t)) => t.thinking,
            _ => String::new(),
        }
    }

    /// Ends the open block, if any. A tool call's argument text, blank
    /// meaning `{}`, must be a JSON object.
    pub(crate) fn close(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.flush_escapes(frame, false, out);
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let index = open.index;
        match open.kind {
            Kind::Text | Kind::Thinking => {
                if let Some(replacement) = self.joiner.finish() {
                    let mut buf = [0; 4];
                    self.push_delta(
                        frame,
                        open.kind,
                        index,
                        replacement.encode_utf8(&mut buf),
                        out,
                    );
                }
                let text = match frame.builder.snapshot().content_block(index) {
                    Some(ContentBlock::Text(t)) => t.text,
                    Some(ContentBlock::Thinking(t)) => t.thinking,
                    _ => String::new(),
                };
                if open.kind == Kind::Text {
                    let block = TextContent {
                        text: text.clone(),
                        text_signature: open.signature,
                        ..TextContent::default()
                    };
                    frame.builder.complete(index, ContentBlock::Text(block));
                    out.push(ModelEvent::TextEnd {
                        content_index: index,
                        content: text,
                        partial: frame.builder.snapshot(),
                    });
                } else {
                    let block = ThinkingContent {
                        thinking: text.clone(),
                        thinking_signature: open.signature,
                        ..ThinkingContent::default()
                    };
                    frame.builder.complete(index, ContentBlock::Thinking(block));
                    out.push(ModelEvent::ThinkingEnd {
                        content_index: index,
                        content: text,
                        partial: frame.builder.snapshot(),
                    });
                }
                Ok(())
            }
            Kind::Tool => {
                let arguments = match parse_arguments(&open.args) {
                    Ok(arguments) => arguments,
                    Err(e) => {
                        let message = format!(
                            "the arguments of tool call \"{}\" ({}) are not a JSON object: {e}; received: {}",
                            open.id,
                            open.name,
                            clip(&open.args, QUOTE)
                        );
                        // Kept open so the error leaves the call out.
                        self.open = Some(open);
                        return Err(message.into());
                    }
                };
                if is_json_blank(&open.args) {
                    self.push_delta(frame, Kind::Tool, index, "{}", out);
                }
                let call = ToolCall {
                    id: open.id,
                    name: open.name,
                    arguments,
                    thought_signature: open.signature,
                    ..ToolCall::default()
                };
                frame.end_tool_call(index, call, out);
                Ok(())
            }
        }
    }

    /// The provider stopped for length: an open tool call whose argument
    /// text was cut is completed leniently (see [`cut_json`](crate::cut_json))
    /// with the completion as its last delta, then closed. A text that is
    /// not the start of a JSON object fails to close, as in
    /// [`close`](Self::close).
    pub(crate) fn close_cut(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        self.flush_escapes(frame, true, out);
        if let Some(args) = self.open_arguments() {
            if !is_json_blank(args) && parse_arguments(args).is_err() {
                if let Some(suffix) = completion(args) {
                    self.append(frame, &suffix, out)?;
                }
            }
        }
        self.close(frame, out)
    }

    /// Sets the late header fields and the usage (with its cost) on the
    /// final message.
    fn finish_message(&self, frame: &Frame, message: &mut AssistantMessage) {
        for (key, value) in &self.late_extra {
            message.extra.insert(key.clone(), value.clone());
        }
        if let Some(usage) = &self.usage {
            message.usage = usage.clone();
            frame.price(&mut message.usage);
        }
    }

    /// Closes the open block and ends in `done` with `reason`.
    pub(crate) fn done(
        &mut self,
        frame: &mut Frame,
        reason: DoneReason,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        if frame.is_finished() {
            return Ok(());
        }
        self.start(frame, out);
        self.close(frame, out)?;
        let mut message = frame.builder.snapshot().to_message();
        self.finish_message(frame, &mut message);
        message.stop_reason = reason.stop_reason();
        frame.end_done(reason, message, out);
        Ok(())
    }

    /// Completes the message of an `error`: an open text or thinking
    /// block keeps its text so far (and its signature); an open tool call
    /// is kept only if its argument text is already a JSON object; the
    /// late header fields and the usage (with its cost) are set.
    pub(crate) fn settle(&self, frame: &Frame, message: &mut AssistantMessage) {
        // The provider's words in it (an error event's message) may hold
        // lone surrogates.
        if let Some(text) = message.error_message.take() {
            message.error_message = Some(self.unmarked(text));
        }
        if let Some(open) = &self.open {
            match open.kind {
                Kind::Tool => match parse_arguments(&open.args) {
                    Ok(arguments) if !is_json_blank(&open.args) => {
                        if let Some(slot) = message.content.get_mut(open.index) {
                            *slot = ContentBlock::ToolCall(ToolCall {
                                id: open.id.clone(),
                                name: open.name.clone(),
                                arguments,
                                thought_signature: open.signature.clone(),
                                ..ToolCall::default()
                            });
                        }
                    }
                    _ => message.content.truncate(open.index),
                },
                Kind::Thinking => {
                    if let Some(ContentBlock::Thinking(t)) = message.content.get_mut(open.index) {
                        t.thinking_signature.clone_from(&open.signature);
                    }
                }
                Kind::Text => {
                    if let Some(ContentBlock::Text(t)) = message.content.get_mut(open.index) {
                        t.text_signature.clone_from(&open.signature);
                    }
                }
            }
        }
        self.finish_message(frame, message);
    }
}

/// Reads one payload of type `T` from `data` (already surrogate-marked),
/// or the error message naming `what` it should have been. A payload that
/// fails to parse is tried once more with its numbers too large for an
/// `f64` (a usage count of `1e400`) saturated (see
/// [Numbers](crate::json#numbers)), kept in `saturated`.
pub(crate) fn read_payload<'a, T: serde::Deserialize<'a>>(
    data: &'a str,
    saturated: &'a mut Option<String>,
    what: &str,
) -> Result<T, String> {
    if let Ok(payload) = serde_json::from_str::<T>(data) {
        return Ok(payload);
    }
    *saturated = saturate_numbers(data);
    let data: &'a str = match saturated {
        Some(text) => text,
        None => data,
    };
    serde_json::from_str::<T>(data).map_err(|_| {
        let kind = if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
            format!("JSON that is not {what}")
        } else {
            String::from("data that is not JSON")
        };
        format!("the provider sent {kind}: {}", clip(data, QUOTE))
    })
}

/// Appends `text` to block `index` of the message and emits the delta
/// event of `kind` (every projector's one way to stream a fragment).
pub(crate) fn push_delta_event(
    builder: &mut PartialBuilder,
    index: usize,
    text: &str,
    kind: Kind,
    out: &mut Vec<ModelEvent>,
) {
    let delta: Arc<str> = Arc::from(text);
    builder.append(index, delta.clone());
    let partial = builder.snapshot();
    out.push(match kind {
        Kind::Text => ModelEvent::TextDelta {
            content_index: index,
            delta,
            partial,
        },
        Kind::Thinking => ModelEvent::ThinkingDelta {
            content_index: index,
            delta,
            partial,
        },
        Kind::Tool => ModelEvent::ToolCallDelta {
            content_index: index,
            delta,
            partial,
        },
    });
}
