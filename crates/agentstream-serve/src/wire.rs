//! What the stream encoders write from: one step of an answer, borrowed.
//!
//! A model event gives one ([`Wire::from`]). A complete message gives the
//! same steps its scripted play would have given as events
//! ([`message_steps`]), so a scripted turn is answered without the
//! model's event stream, its snapshots and its copies, and the encoders
//! have one input either way.

use std::borrow::Cow;

use agentstream::message::{AssistantMessage, ContentBlock, ToolCall, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent, PartialMessage};

/// The message so far, as a step sees it: a model event's snapshot, or
/// the first `len` blocks of a complete message (the blocks a snapshot
/// holds at the same step).
#[derive(Clone, Copy)]
pub(crate) enum Blocks<'a> {
    Partial(&'a PartialMessage),
    Message {
        message: &'a AssistantMessage,
        len: usize,
    },
}

impl<'a> Blocks<'a> {
    /// The message's usage as it stands.
    pub(crate) fn usage(self) -> &'a Usage {
        match self {
            Self::Partial(partial) => &partial.header().usage,
            Self::Message { message, .. } => &message.usage,
        }
    }

    /// Block `index`, borrowed (see [`PartialMessage::block_shape`]).
    pub(crate) fn shape(self, index: usize) -> Option<BlockShape<'a>> {
        match self {
            Self::Partial(partial) => partial.block_shape(index),
            Self::Message { message, len } => {
                message.content[..len].get(index).map(BlockShape::from)
            }
        }
    }

    /// Block `index`, whole.
    pub(crate) fn block(self, index: usize) -> Option<Cow<'a, ContentBlock>> {
        match self {
            Self::Partial(partial) => partial.content_block(index).map(Cow::Owned),
            Self::Message { message, len } => message.content[..len].get(index).map(Cow::Borrowed),
        }
    }
}

/// The kinds of block whose text streams as deltas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// One step of an answer: a [`ModelEvent`] with its parts borrowed.
#[derive(Clone, Copy)]
pub(crate) enum Wire<'a> {
    /// The answer starts.
    Start(Blocks<'a>),
    /// Block `index` starts (`text_start`, `thinking_start`,
    /// `toolcall_start`).
    BlockStart {
        kind: Kind,
        index: usize,
        blocks: Blocks<'a>,
    },
    /// A piece of block `index`'s text (for a tool call, of its
    /// arguments' JSON).
    Delta {
        kind: Kind,
        index: usize,
        delta: &'a str,
        blocks: Blocks<'a>,
    },
    /// Text or thinking block `index` ends.
    BlockEnd {
        kind: Kind,
        index: usize,
        blocks: Blocks<'a>,
    },
    /// Tool call `index` ends, whole.
    ToolCallEnd {
        index: usize,
        call: &'a ToolCall,
        blocks: Blocks<'a>,
    },
    /// The answer ends well.
    Done {
        reason: DoneReason,
        message: &'a AssistantMessage,
    },
    /// The answer fails.
    Error(&'a AssistantMessage),
}

impl Wire<'_> {
    /// The kind of block a step of a block is about (tool call for the
    /// others).
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Self::BlockStart { kind, .. }
            | Self::Delta { kind, .. }
            | Self::BlockEnd { kind, .. } => *kind,
            _ => Kind::ToolCall,
        }
    }
}

impl<'a> From<&'a ModelEvent> for Wire<'a> {
    fn from(event: &'a ModelEvent) -> Self {
        let start = |kind, index: &usize, partial| Wire::BlockStart {
            kind,
            index: *index,
            blocks: Blocks::Partial(partial),
        };
        let delta = |kind, index: &usize, delta: &'a str, partial| Wire::Delta {
            kind,
            index: *index,
            delta,
            blocks: Blocks::Partial(partial),
        };
        match event {
            ModelEvent::Start { partial } => Wire::Start(Blocks::Partial(partial)),
            ModelEvent::TextStart {
                content_index,
                partial,
            } => start(Kind::Text, content_index, partial),
            ModelEvent::ThinkingStart {
                content_index,
                partial,
            } => start(Kind::Thinking, content_index, partial),
            ModelEvent::ToolCallStart {
                content_index,
                partial,
            } => start(Kind::ToolCall, content_index, partial),
            ModelEvent::TextDelta {
                content_index,
                delta: text,
                partial,
            } => delta(Kind::Text, content_index, text, partial),
            ModelEvent::ThinkingDelta {
                content_index,
                delta: text,
                partial,
            } => delta(Kind::Thinking, content_index, text, partial),
            ModelEvent::ToolCallDelta {
                content_index,
                delta: text,
                partial,
            } => delta(Kind::ToolCall, content_index, text, partial),
            ModelEvent::TextEnd {
                content_index,
                partial,
                ..
            } => Wire::BlockEnd {
                kind: Kind::Text,
                index: *content_index,
                blocks: Blocks::Partial(partial),
            },
            ModelEvent::ThinkingEnd {
                content_index,
                partial,
                ..
            } => Wire::BlockEnd {
                kind: Kind::Thinking,
                index: *content_index,
                blocks: Blocks::Partial(partial),
            },
            ModelEvent::ToolCallEnd {
                content_index,
                tool_call,
                partial,
            } => Wire::ToolCallEnd {
                index: *content_index,
                call: tool_call,
                blocks: Blocks::Partial(partial),
            },
            ModelEvent::Done { reason, message } => Wire::Done {
                reason: *reason,
                message,
            },
            ModelEvent::Error { error, .. } => Wire::Error(error),
        }
    }
}

/// Calls `step` with the steps of `message` ending with `reason`: the
/// events a `ScriptedModel` plays for such a turn in one chunk, `start`,
/// per block its delta (with its start and end events for the
/// `full_sequence`, and a tool call's end), then `done`. Images and
/// blocks of unknown types have no step of their own.
pub(crate) fn message_steps(
    message: &AssistantMessage,
    reason: DoneReason,
    full_sequence: bool,
    mut step: impl FnMut(Wire<'_>),
) {
    step(Wire::Start(Blocks::Message { message, len: 0 }));
    for (index, block) in message.content.iter().enumerate() {
        let blocks = Blocks::Message {
            message,
            len: index + 1,
        };
        let arguments;
        let (kind, delta) = match block {
            ContentBlock::Text(text) => (Kind::Text, text.text.as_str()),
            ContentBlock::Thinking(thinking) => (Kind::Thinking, thinking.thinking.as_str()),
            ContentBlock::ToolCall(call) => {
                // A map of JSON values always serializes.
                arguments = serde_json::to_string(&call.arguments).unwrap_or_default();
                (Kind::ToolCall, arguments.as_str())
            }
            _ => continue,
        };
        if full_sequence {
            step(Wire::BlockStart {
                kind,
                index,
                blocks,
            });
        }
        step(Wire::Delta {
            kind,
            index,
            delta,
            blocks,
        });
        match block {
            ContentBlock::ToolCall(call) => step(Wire::ToolCallEnd {
                index,
                call,
                blocks,
            }),
            _ if full_sequence => step(Wire::BlockEnd {
                kind,
                index,
                blocks,
            }),
            _ => {}
        }
    }
    step(Wire::Done { reason, message });
}
