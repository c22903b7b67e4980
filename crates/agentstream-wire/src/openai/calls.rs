//! The tool calls the [`OpenAiProjector`](super::OpenAiProjector) tracks:
//! [`Calls`] owns their slots (argument text, whether it is already a
//! complete JSON value), finds the call a fragment belongs to, and opens,
//! streams and ends one call at a time: a front-end feeding the
//! projector's [`Frame`] (its message and its limits), which the
//! projector hands it (and decides when; see
//! [Tool calls](super::projector#tool-calls)).

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{ContentBlock, ToolCall};
use agentstream::model::ModelEvent;

use super::wire::{clip, is_json_blank, ToolCallDelta};
use crate::cause::Failure;
use crate::cut_json::cut_completion;
use crate::json::parse_arguments;
use crate::limits::{Limit, LimitExceeded};
use crate::sse::Frame;
use crate::surrogates::{replace_markers, EscapeJoiner};

/// How many characters of offending data an error message quotes.
pub(super) const QUOTE: usize = 200;

/// One tool call of the message.
#[derive(Debug, Default)]
struct Call {
    key: Option<u64>,
    id: String,
    name: String,
    /// All argument text received.
    args: String,
    /// Holds back an escape cut between fragments (see
    /// [`surrogates`](crate::surrogates)).
    escapes: EscapeJoiner,
    /// How much of `args` went out as deltas.
    emitted: usize,
    scan: JsonScan,
    /// Set once the call's block is open.
    content_index: Option<usize>,
    ended: bool,
}

/// Tracks whether a JSON text is complete without parsing it: the nesting
/// depth outside strings.
#[derive(Debug, Default, Clone, Copy)]
struct JsonScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    started: bool,
}

impl JsonScan {
    fn feed(&mut self, text: &str) {
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

    fn complete(&self) -> bool {
        self.started && self.depth == 0 && !self.in_string
    }
}

/// The message's tool calls, in the order they first appeared.
#[derive(Debug, Default)]
pub(super) struct Calls {
    calls: Vec<Call>,
    /// The call of each `index` key.
    by_key: BTreeMap<u64, usize>,
    /// The first call with each id.
    by_id: BTreeMap<String, usize>,
    /// How many calls have opened: they open in order, so these are the
    /// first `opened` of `calls`.
    opened: usize,
}

impl Calls {
    /// Whether the message has no tool call.
    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Whether call `slot`'s argument text is already a complete JSON
    /// value.
    pub(super) fn is_complete(&self, slot: usize) -> bool {
        self.calls[slot].scan.complete()
    }

    /// Whether a call waits to open: `Some(true)` when the next one has a
    /// name (a call opens only with one), `Some(false)` when it has none
    /// yet, `None` when every call has opened.
    pub(super) fn next_is_named(&self) -> Option<bool> {
        self.calls
            .get(self.opened)
            .map(|call| !call.name.is_empty())
    }

    /// The error of a message whose next call never received a name.
    pub(super) fn unnamed_error(&self) -> String {
        let id = self.calls.get(self.opened).map_or("", |call| &call.id);
        format!("tool call \"{id}\" never received a name")
    }

    /// The call a fragment belongs to; see the module documentation.
    fn resolve(
        &mut self,
        key: Option<u64>,
        id: Option<&str>,
        frame: &Frame,
    ) -> Result<usize, Failure> {
        let id = id.filter(|id| !id.is_empty());
        if let Some(key) = key {
            if let Some(&slot) = self.by_key.get(&key) {
                let own = &self.calls[slot].id;
                let Some(other_id) = id.filter(|id| !own.is_empty() && own != id) else {
                    return Ok(slot);
                };
                // Another call on the same index: the one with this id, or
                // a new one (below); either owns the index from now on.
                if let Some(&other) = self.by_id.get(other_id) {
                    self.by_key.insert(key, other);
                    return Ok(other);
                }
            } else if let Some(slot) = id
                .and_then(|id| self.by_id.get(id).copied())
                .filter(|&slot| self.calls[slot].key.is_none())
            {
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
        if self.calls.len() >= frame.limits.max_tool_calls {
            return Err(LimitExceeded::new(Limit::ToolCalls, &frame.limits).into());
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

    /// Adds a fragment to its call (its id, name and argument text; lone
    /// surrogates become U+FFFD, `marked` saying the payload had some) and
    /// returns the call's slot, or `None` for blank text after the call
    /// ended (ignored). Emits nothing: the projector then moves the open
    /// block and [`flush`](Self::flush)es the call if it is live.
    pub(super) fn push_fragment(
        &mut self,
        fragment: &ToolCallDelta<'_>,
        marked: bool,
        frame: &Frame,
    ) -> Result<Option<usize>, Failure> {
        let slot = self.resolve(fragment.index, fragment.id.as_deref(), frame)?;
        let name = fragment.function.as_ref().and_then(|f| f.name.as_deref());
        let args = fragment
            .function
            .as_ref()
            .and_then(|f| f.arguments_text())
            .unwrap_or(Cow::Borrowed(""));
        // Lone surrogates: U+FFFD in the id and name, and in the argument
        // text whether it came as a marker or as an escape.
        let call = &mut self.calls[slot];
        let args = call.escapes.push_arguments(&args, marked).into_owned();
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
                return Ok(None);
            }
            return Err(format!(
                "tool call \"{}\" ({}) received argument text after it was complete: {}",
                call.id,
                call.name,
                clip(&args, QUOTE)
            )
            .into());
        }
        if call.args.len().saturating_add(args.len()) > frame.limits.max_tool_argument_bytes {
            return Err(LimitExceeded::new(Limit::ToolArgumentBytes, &frame.limits).into());
        }
        call.args.push_str(&args);
        call.scan.feed(&args);
        Ok(Some(slot))
    }

    /// Opens the next call (the one [`next_is_named`](Self::next_is_named)
    /// looks at) as a block of the message, with what it gathered so far, and
    /// returns its slot.
    pub(super) fn open_next(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) -> usize {
        let slot = self.opened;
        self.opened += 1;
        let call = &self.calls[slot];
        let index = frame.builder.start_tool_call(ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            ..ToolCall::default()
        });
        self.calls[slot].content_index = Some(index);
        out.push(ModelEvent::ToolCallStart {
            content_index: index,
            partial: frame.builder.snapshot(),
        });
        self.flush(frame, slot, out);
        slot
    }

    /// Emits the argument text of an open call not yet sent.
    pub(super) fn flush(&mut self, frame: &mut Frame, slot: usize, out: &mut Vec<ModelEvent>) {
        let call = &mut self.calls[slot];
        let Some(index) = call.content_index else {
            return;
        };
        if call.emitted == call.args.len() {
            return;
        }
        let delta: Arc<str> = Arc::from(&call.args[call.emitted..]);
        call.emitted = call.args.len();
        frame.builder.append(index, delta.clone());
        out.push(ModelEvent::ToolCallDelta {
            content_index: index,
            delta,
            partial: frame.builder.snapshot(),
        });
    }

    /// Ends open call `slot`: its last text, then `toolcall_end` with the
    /// parsed arguments, or `Err` when they are not a JSON object. With
    /// `cut` (the provider stopped for length) a cut argument text is
    /// completed first (see [`cut_json`](crate::cut_json)).
    pub(super) fn end(
        &mut self,
        frame: &mut Frame,
        slot: usize,
        cut: bool,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let call = &mut self.calls[slot];
        if let Some(tail) = call.escapes.finish_as(cut) {
            call.scan.feed(&tail);
            call.args.push_str(&tail);
        }
        // Cut off: the completion goes out as the call's last delta.
        if let Some(suffix) = cut.then(|| cut_completion(&call.args)).flatten() {
            call.scan.feed(&suffix);
            call.args.push_str(&suffix);
        }
        self.flush(frame, slot, out);
        let position = slot;
        let call = &mut self.calls[slot];
        let Some(index) = call.content_index else {
            return Ok(());
        };
        let arguments = parse_arguments(&call.args).map_err(|e| {
            Failure::from(format!(
                "the arguments of tool call \"{}\" ({}) are not a JSON object: {e}; received: {}",
                call.id,
                call.name,
                clip(&call.args, QUOTE)
            ))
        })?;
        call.ended = true;
        if is_json_blank(&call.args) {
            let delta: Arc<str> = Arc::from("{}");
            frame.builder.append(index, delta.clone());
            out.push(ModelEvent::ToolCallDelta {
                content_index: index,
                delta,
                partial: frame.builder.snapshot(),
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
        frame.end_tool_call(index, tool_call, out);
        Ok(())
    }

    /// Open call `slot`'s part of an error's message: kept only when its
    /// argument text is already a JSON object, else left out with what
    /// follows it.
    pub(super) fn settle(&self, slot: usize, content: &mut Vec<ContentBlock>) {
        let call = &self.calls[slot];
        let Some(index) = call.content_index else {
            return;
        };
        match parse_arguments(&call.args) {
            Ok(arguments) if !is_json_blank(&call.args) => {
                content[index] = ContentBlock::ToolCall(ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments,
                    ..ToolCall::default()
                });
            }
            _ => content.truncate(index),
        }
    }
}
