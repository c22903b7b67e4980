//! The content blocks of the [`AnthropicProjector`](super::AnthropicProjector):
//! [`Blocks`] owns them and their counts, a front-end feeding the
//! projector's [`Frame`] (its message and its limits), which the projector
//! hands it with each event: opening one from its
//! `content_block_start`, routing each delta and stop to the block its
//! `index` names, and ending it (a tool call's argument text parsed into
//! its arguments).
//!
//! Blocks are keyed by their wire `index`. The event protocol needs
//! content indices that never decrease, so one block at a time is *live*
//! (its events go out at once); a block started while another is open
//! waits, its deltas kept, and goes out whole (start, one delta with what
//! it received, and its end if it already stopped) when the blocks before
//! it end. Anthropic itself sends one block at a time.

use alloc::borrow::Cow;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use agentstream::message::{TextContent, ThinkingContent, ToolCall};
use agentstream::model::ModelEvent;

use super::payload::Delta;
use crate::cause::Failure;
use crate::event_writer::{push_delta_event, Kind as DeltaKind};
use crate::json::{is_json_blank, parse_arguments};
use crate::limits::{Limit, LimitExceeded};
use crate::sse::Frame;
use crate::surrogates::{replace_markers, EscapeJoiner, SurrogateJoiner};

/// What a block is, with what it has gathered.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    Text,
    Thinking {
        signature: Option<String>,
    },
    /// Complete from its start: its opaque `data`.
    Redacted {
        data: String,
    },
    Tool {
        id: String,
        name: String,
        /// The argument text so far (lone surrogate escapes replaced).
        args: String,
        escapes: EscapeJoiner,
    },
    /// A block of a type we do not know: its deltas are skipped.
    Skipped,
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Thinking { .. } => "thinking",
            Kind::Redacted { .. } => "redacted_thinking",
            Kind::Tool { .. } => "tool_use",
            Kind::Skipped => "unknown",
        }
    }
}

/// One block that started and has not ended.
#[derive(Debug, Clone)]
pub(super) struct Block {
    pub(super) kind: Kind,
    /// Its content index, once its events went out.
    pub(super) content: Option<usize>,
    /// Text or thinking received while it waited.
    waiting_text: String,
    /// Joins surrogate halves split across its deltas.
    pub(super) joiner: SurrogateJoiner,
    /// Its `content_block_stop` came while it waited.
    pub(super) stopped: bool,
}

/// The open blocks: by wire index, the live one, and the waiting ones in
/// the order they started; with the counts the limits bound and what the
/// stop reason decides about a cut tool call.
#[derive(Debug, Default)]
pub(super) struct Blocks {
    pub(super) open: BTreeMap<u64, Block>,
    live: Option<u64>,
    waiting: VecDeque<u64>,
    /// Content blocks and tool calls started so far, for the limits.
    block_count: usize,
    tool_calls: usize,
    /// A tool call has started.
    has_tool_calls: bool,
    /// The live tool call stopped with argument text that is not JSON: it
    /// waits for the stop reason (`max_tokens` completes it leniently).
    pub(super) cut_candidate: bool,
    /// The provider stopped for length: blocks ended now complete a cut
    /// tool call's argument text (see [`cut_json`](crate::cut_json)).
    pub(super) cut: bool,
}

impl Blocks {
    /// The live block, if any.
    pub(super) fn live(&self) -> Option<&Block> {
        self.open.get(&self.live?)
    }

    /// Whether a tool call has started.
    pub(super) fn has_tool_calls(&self) -> bool {
        self.has_tool_calls
    }

    /// Whether the live tool call waits for the stop reason; it no longer
    /// does after this call.
    pub(super) fn take_cut_candidate(&mut self) -> bool {
        core::mem::take(&mut self.cut_candidate)
    }

    /// The provider stopped for length (`true`): blocks ended from now on
    /// complete a cut tool call's argument text.
    pub(super) fn set_cut(&mut self, cut: bool) {
        self.cut = cut;
    }
}

impl Blocks {
    /// `content_block_start` for wire index `wire`.
    pub(super) fn open_block(
        &mut self,
        frame: &mut Frame,
        marked: bool,
        wire: Option<u64>,
        block: Option<&Value>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let wire = wire.ok_or("the provider sent a content_block_start without an index")?;
        if self.open.contains_key(&wire) {
            return Err(format!(
                "the provider started content block {wire} while a block with that index is open"
            )
            .into());
        }
        let kind = block.and_then(|b| b.get("type")).and_then(Value::as_str);
        if matches!(
            kind,
            Some("text" | "thinking" | "redacted_thinking" | "tool_use")
        ) {
            if self.block_count >= frame.limits.max_content_blocks {
                return Err(exceeded(frame, Limit::ContentBlocks));
            }
            self.block_count += 1;
        }
        if kind == Some("tool_use") {
            if self.tool_calls >= frame.limits.max_tool_calls {
                return Err(exceeded(frame, Limit::ToolCalls));
            }
            self.tool_calls += 1;
        }
        let text_of = |name: &str| {
            let text = block
                .and_then(|b| b.get(name))
                .and_then(Value::as_str)
                .unwrap_or("");
            replace_markers(text, marked).into_owned()
        };
        let kind = match kind {
            Some("text") => Kind::Text,
            Some("thinking") => Kind::Thinking {
                signature: Some(text_of("signature")).filter(|s| !s.is_empty()),
            },
            Some("redacted_thinking") => Kind::Redacted {
                data: text_of("data"),
            },
            Some("tool_use") => {
                self.has_tool_calls = true;
                Kind::Tool {
                    id: text_of("id"),
                    name: text_of("name"),
                    args: String::new(),
                    escapes: EscapeJoiner::default(),
                }
            }
            _ => Kind::Skipped,
        };
        let skipped = matches!(kind, Kind::Skipped);
        self.open.insert(
            wire,
            Block {
                kind,
                content: None,
                waiting_text: String::new(),
                joiner: SurrogateJoiner::default(),
                stopped: false,
            },
        );
        if skipped {
            return Ok(());
        }
        if self.live.is_some() {
            self.waiting.push_back(wire);
        } else {
            self.go_live(frame, wire, out)?;
        }
        // A text or thinking block may start with some text.
        let initial = match block.map(|b| (b.get("type"), b)) {
            Some((Some(Value::String(t)), b)) if t == "text" => b.get("text"),
            Some((Some(Value::String(t)), b)) if t == "thinking" => b.get("thinking"),
            _ => None,
        };
        if let Some(initial) = initial.and_then(Value::as_str).filter(|t| !t.is_empty()) {
            self.append(frame, marked, wire, initial, out)?;
        }
        Ok(())
    }

    /// Makes block `wire` live: its start, and what it gathered while it
    /// waited.
    fn go_live(
        &mut self,
        frame: &mut Frame,
        wire: u64,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(block) = self.open.get_mut(&wire) else {
            return Ok(());
        };
        self.live = Some(wire);
        let (index, event) = match &block.kind {
            Kind::Text => {
                let index = frame.builder.start_text(TextContent::default());
                (index, DeltaKind::Text)
            }
            Kind::Thinking { .. } | Kind::Redacted { .. } => {
                let index = frame.builder.start_thinking(ThinkingContent::default());
                (index, DeltaKind::Thinking)
            }
            Kind::Tool { id, name, .. } => {
                let index = frame.builder.start_tool_call(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    ..ToolCall::default()
                });
                (index, DeltaKind::Tool)
            }
            Kind::Skipped => return Ok(()),
        };
        block.content = Some(index);
        let gathered = match &block.kind {
            Kind::Tool { args, .. } => args.clone(),
            _ => core::mem::take(&mut block.waiting_text),
        };
        let stopped = block.stopped;
        let partial = frame.builder.snapshot();
        out.push(match event {
            DeltaKind::Text => ModelEvent::TextStart {
                content_index: index,
                partial,
            },
            DeltaKind::Thinking => ModelEvent::ThinkingStart {
                content_index: index,
                partial,
            },
            DeltaKind::Tool => ModelEvent::ToolCallStart {
                content_index: index,
                partial,
            },
        });
        if !gathered.is_empty() {
            push_delta_event(&mut frame.builder, index, &gathered, event, out);
        }
        if stopped || matches!(block_kind(self, wire), Some(Kind::Redacted { .. })) {
            // A redacted block is complete at once; its stop only removes
            // it.
            self.end_live(frame, out)?;
        }
        Ok(())
    }

    /// Ends the live block and makes the next waiting one live.
    pub(super) fn end_live(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(wire) = self.live else {
            return Ok(());
        };
        self.end_block(frame, wire, out)?;
        self.live = None;
        if let Some(next) = self.waiting.pop_front() {
            self.go_live(frame, next, out)?;
        }
        Ok(())
    }

    /// A delta for wire index `wire`.
    pub(super) fn push_delta(
        &mut self,
        frame: &mut Frame,
        marked: bool,
        wire: Option<u64>,
        delta: &Delta<'_>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let kind = delta.kind.as_deref();
        let wire = self.route(wire, "content_block_delta")?;
        let Some(block) = self.open.get_mut(&wire) else {
            return Err(format!(
                "the provider sent a {} for content block {wire}, which is not open",
                kind.unwrap_or("delta")
            )
            .into());
        };
        let fits = match (&block.kind, kind) {
            (Kind::Skipped, _) => return Ok(()),
            (Kind::Text, Some("text_delta")) => true,
            (Kind::Thinking { .. }, Some("thinking_delta" | "signature_delta")) => true,
            (Kind::Tool { .. }, Some("input_json_delta")) => true,
            (_, Some("text_delta" | "thinking_delta" | "signature_delta" | "input_json_delta")) => {
                false
            }
            // Delta types we do not know (`citations_delta`, …).
            _ => return Ok(()),
        };
        if !fits {
            return Err(format!(
                "the provider sent a {} for content block {wire}, which is a {} block",
                kind.unwrap_or("delta"),
                block.kind.name()
            )
            .into());
        }
        let field = match kind {
            Some("text_delta") => &delta.text,
            Some("thinking_delta") => &delta.thinking,
            Some("signature_delta") => &delta.signature,
            _ => &delta.partial_json,
        };
        let part = field.as_deref().unwrap_or("");
        if kind == Some("signature_delta") {
            let part = replace_markers(part, marked);
            if let Kind::Thinking { signature } = &mut block.kind {
                signature.get_or_insert_with(String::new).push_str(&part);
            }
            return Ok(());
        }
        if !part.is_empty() {
            self.append(frame, marked, wire, part, out)?;
        }
        Ok(())
    }

    /// The block an event is for: its `index`, or without one (or with
    /// one that is not a number) the live block.
    fn route(&self, wire: Option<u64>, event: &str) -> Result<u64, Failure> {
        wire.or(self.live).ok_or_else(|| {
            format!("the provider sent a {event} without an index and no block is open").into()
        })
    }

    /// Appends `text` to block `wire`: a delta event when it is live, kept
    /// for later when it waits.
    fn append(
        &mut self,
        frame: &mut Frame,
        marked: bool,
        wire: u64,
        text: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let max_arguments = frame.limits.max_tool_argument_bytes;
        let Some(block) = self.open.get_mut(&wire) else {
            return Ok(());
        };
        let joined = block.joiner.join(text, marked);
        let text = joined.as_deref().unwrap_or(text);
        let (text, event) = match &mut block.kind {
            Kind::Tool { args, escapes, .. } => {
                let text = escapes.push(text);
                if args.len().saturating_add(text.len()) > max_arguments {
                    return Err(exceeded(frame, Limit::ToolArgumentBytes));
                }
                args.push_str(&text);
                (text, DeltaKind::Tool)
            }
            Kind::Thinking { .. } => (Cow::Borrowed(text), DeltaKind::Thinking),
            _ => (Cow::Borrowed(text), DeltaKind::Text),
        };
        if text.is_empty() {
            return Ok(());
        }
        match block.content {
            Some(index) => push_delta_event(&mut frame.builder, index, &text, event, out),
            None if !matches!(event, DeltaKind::Tool) => block.waiting_text.push_str(&text),
            // A waiting tool call's text is in its `args`.
            None => {}
        }
        Ok(())
    }

    /// `content_block_stop` for wire index `wire`.
    pub(super) fn stop_block(
        &mut self,
        frame: &mut Frame,
        wire: Option<u64>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let wire = self.route(wire, "content_block_stop")?;
        let Some(block) = self.open.get_mut(&wire) else {
            return Err(
                format!("the provider stopped content block {wire}, which is not open").into(),
            );
        };
        if matches!(block.kind, Kind::Skipped) {
            self.open.remove(&wire);
            return Ok(());
        }
        if self.live == Some(wire) {
            if let Kind::Tool { args, .. } = &block.kind {
                if !is_json_blank(args) && parse_arguments(args).is_err() {
                    // Cut off, if `max_tokens` follows: it waits for the
                    // stop reason (Anthropic stops the block it cut).
                    block.stopped = true;
                    self.cut_candidate = true;
                    return Ok(());
                }
            }
            return self.end_live(frame, out);
        }
        if block.content.is_some() {
            // A redacted block that already went out.
            self.open.remove(&wire);
        } else {
            block.stopped = true;
        }
        Ok(())
    }

    /// Ends every open block, in order (`message_stop` with blocks open).
    pub(super) fn close_all(
        &mut self,
        frame: &mut Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        for block in self.open.values_mut() {
            block.stopped = true;
        }
        while self.live.is_some() {
            self.end_live(frame, out)?;
        }
        self.open.clear();
        Ok(())
    }
}

fn block_kind(blocks: &Blocks, wire: u64) -> Option<&Kind> {
    blocks.open.get(&wire).map(|b| &b.kind)
}

/// The failure of exceeding `limit`, one of the frame's limits.
fn exceeded(frame: &Frame, limit: Limit) -> Failure {
    LimitExceeded::new(limit, &frame.limits).into()
}
