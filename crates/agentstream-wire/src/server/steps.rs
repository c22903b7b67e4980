//! What the stream encoders write from: one step of an answer, borrowed.
//!
//! A model event gives one ([`Wire::from`]). A complete message gives the
//! same steps its scripted play would have given as events
//! ([`message_steps`]), so a scripted turn is answered without the
//! model's event stream, its snapshots and its copies, and the encoders
//! have one input either way.

use alloc::borrow::Cow;

use agentstream::message::{AssistantMessage, ContentBlock, ToolCall, Usage};
use agentstream::model::{BlockShape, DoneReason, ModelEvent, PartialMessage};

/// The message so far, as a step sees it: a model event's snapshot, or
/// the first `len` blocks of a complete message (the blocks a snapshot
/// holds at the same step). A message's current block is complete where
/// a snapshot's is still empty or partial; the encoders read only what
/// both have alike (ids, names, signatures, and the blocks before it),
/// which the tests check byte for byte.
#[derive(Clone, Copy)]
pub enum Blocks<'a> {
    /// A model event's snapshot.
    Partial(&'a PartialMessage),
    /// The first `len` blocks of a complete message.
    Message {
        /// The complete message.
        message: &'a AssistantMessage,
        /// How many of its blocks the step sees.
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

    /// Block `index`, borrowed (see [`PartialMessage::block_shape`]): what
    /// an encoder reads of a block when it starts (a tool call's id and
    /// name).
    pub fn shape(self, index: usize) -> Option<BlockShape<'a>> {
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
pub enum Kind {
    /// A text block.
    Text,
    /// A thinking block.
    Thinking,
    /// A tool call (its arguments' JSON streams).
    ToolCall,
}

/// One step of an answer: a [`ModelEvent`] with its parts borrowed.
#[derive(Clone, Copy)]
pub enum Wire<'a> {
    /// The answer starts.
    Start(Blocks<'a>),
    /// Block `index` starts (`text_start`, `thinking_start`,
    /// `toolcall_start`).
    BlockStart {
        /// The block's kind.
        kind: Kind,
        /// The block's index in the message.
        index: usize,
        /// The message so far.
        blocks: Blocks<'a>,
    },
    /// A piece of block `index`'s text (for a tool call, of its
    /// arguments' JSON).
    Delta {
        /// The block's kind.
        kind: Kind,
        /// The block's index in the message.
        index: usize,
        /// The piece.
        delta: &'a str,
        /// The message so far.
        blocks: Blocks<'a>,
    },
    /// Text or thinking block `index` ends.
    BlockEnd {
        /// The block's kind.
        kind: Kind,
        /// The block's index in the message.
        index: usize,
        /// The message so far.
        blocks: Blocks<'a>,
    },
    /// Tool call `index` ends, whole.
    ToolCallEnd {
        /// The block's index in the message.
        index: usize,
        /// The whole call.
        call: &'a ToolCall,
        /// The message so far.
        blocks: Blocks<'a>,
    },
    /// The answer ends well.
    Done {
        /// Why it ended.
        reason: DoneReason,
        /// The final message.
        message: &'a AssistantMessage,
    },
    /// The answer fails (the failed message).
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

/// A stream encoder whose blocks are sent one at a time, each opened,
/// given its deltas and closed (Anthropic's and Bedrock's): the block
/// steps of an answer are driven the same way for both by
/// [`block_step`].
pub(crate) trait OneBlockAtATime {
    /// The encoder's own kinds of block.
    type Kind: Copy;

    /// The encoder's kind of a step's kind.
    fn kind_of(kind: Kind) -> Self::Kind;

    /// The Pi index of the open block.
    fn open_index(&self) -> Option<usize>;

    /// Makes the block of Pi index `pi` the open one (closing another);
    /// `shape` is looked up only when it opens.
    fn open<'a>(
        &mut self,
        pi: usize,
        shape: impl FnOnce() -> Option<BlockShape<'a>>,
        kind: Self::Kind,
        out: &mut crate::server::Events,
    );

    /// Sends `text` as deltas of the open block.
    fn deltas(&mut self, text: &str, out: &mut crate::server::Events);

    /// Closes the open block, if any.
    fn close(&mut self, out: &mut crate::server::Events);
}

/// Drives `encoder` through a block's `step` (a start, a delta, an end, a
/// tool call's end with its whole arguments when none streamed); `false`
/// for a step that is not a block's (the answer's start, end or error),
/// which the encoder writes itself.
pub(crate) fn block_step<E: OneBlockAtATime>(
    encoder: &mut E,
    step: Wire<'_>,
    out: &mut crate::server::Events,
) -> bool {
    let kind = E::kind_of(step.kind());
    match step {
        Wire::BlockStart { index, blocks, .. } => {
            encoder.open(index, || blocks.shape(index), kind, out);
        }
        Wire::Delta {
            index,
            delta,
            blocks,
            ..
        } => {
            encoder.open(index, || blocks.shape(index), kind, out);
            encoder.deltas(delta, out);
        }
        Wire::BlockEnd { index, blocks, .. } => {
            encoder.open(index, || blocks.shape(index), kind, out);
            encoder.close(out);
        }
        Wire::ToolCallEnd { index, call, .. } => {
            let fresh = encoder.open_index() != Some(index);
            let kind = E::kind_of(Kind::ToolCall);
            encoder.open(index, || Some(BlockShape::ToolCall(call)), kind, out);
            if fresh {
                let text = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into());
                encoder.deltas(&text, out);
            }
            encoder.close(out);
        }
        _ => return false,
    }
    true
}

/// Calls `step` with the steps of `message` ending with `reason`: the
/// events a `ScriptedModel` plays for such a turn in one chunk, `start`,
/// per block its delta (with its start and end events for the
/// `full_sequence`, and a tool call's end), then `done`. Images and
/// blocks of unknown types have no step of their own.
pub fn message_steps(
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

#[cfg(test)]
mod tests {
    use core::num::NonZeroUsize;

    use agentstream::message::{
        assistant, image, text, thinking, tool_call, user, ContentBlock, Context, StopReason,
    };
    use agentstream::model::{Model, ScriptedModel, ScriptedReply, ScriptedTurn, StreamOptions};
    use futures_util::StreamExt;
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::server::{Encoder, Events};
    use crate::{anthropic, gemini, openai, responses};
    use alloc::string::String;
    use alloc::vec::Vec;

    /// The encoders of every protocol, as a server with `chunks`, usage
    /// and pings makes them.
    fn encoders(chunks: usize, usage: bool, ping: bool) -> [Encoder; 4] {
        [
            Encoder::OpenAi(
                openai::encode::StreamEncoder::new("id", "m", 7)
                    .with_usage(usage)
                    .with_chunks(chunks),
            ),
            Encoder::Anthropic(
                anthropic::encode::StreamEncoder::new("id", "m")
                    .with_chunks(chunks)
                    .with_ping(ping),
            ),
            Encoder::Responses(
                responses::encode::StreamEncoder::new("id", "m", 7).with_chunks(chunks),
            ),
            Encoder::Gemini(gemini::encode::StreamEncoder::new("id", "m").with_chunks(chunks)),
        ]
    }

    fn block() -> impl Strategy<Value = ContentBlock> {
        let words = "[a-z \"\\\\\n\u{e9}\u{1f600}]{0,12}";
        prop_oneof![
            words.prop_map(text),
            words.prop_map(thinking),
            (words, words).prop_map(|(t, signature)| {
                let ContentBlock::Thinking(mut block) = thinking(t) else {
                    unreachable!("a thinking block")
                };
                block.thinking_signature = Some(signature);
                ContentBlock::Thinking(block)
            }),
            (words, any::<bool>()).prop_map(|(signature, redacted)| {
                let ContentBlock::Thinking(mut block) = thinking("") else {
                    unreachable!("a thinking block")
                };
                block.thinking_signature = Some(signature);
                block.redacted = Some(redacted);
                ContentBlock::Thinking(block)
            }),
            (words, words, "[a-z]{0,3}").prop_map(|(value, name, id)| {
                tool_call(id, name, json!({"q": value, "n": [1, {"x": null}]}))
            }),
            "[a-z]{0,4}".prop_map(|data| image(data, "image/png")),
        ]
    }

    fn turn() -> impl Strategy<Value = ScriptedTurn> {
        let reason = prop_oneof![
            Just(StopReason::Stop),
            Just(StopReason::Length),
            Just(StopReason::ToolUse)
        ];
        (
            proptest::collection::vec(block(), 0..5),
            reason,
            any::<u32>(),
            any::<bool>(),
        )
            .prop_map(|(blocks, reason, tokens, full)| {
                let mut message = assistant(blocks, reason);
                message.usage.input = u64::from(tokens % 1000);
                message.usage.output = u64::from(tokens / 1000);
                let turn = ScriptedTurn::message(message);
                if full {
                    turn.full_sequence()
                } else {
                    turn
                }
            })
    }

    /// The SSE text of `turn` through `ScriptedModel`'s events, and
    /// through its message's steps.
    fn both(turn: &ScriptedTurn, chunks: usize, usage: bool, ping: bool) -> [(String, String); 4] {
        let context = Context::from_messages([user("hi").into()]);
        let events: Vec<_> = futures_executor::block_on(
            ScriptedModel::new([turn.clone()])
                .stream(&context, StreamOptions::default())
                .collect(),
        );
        let taken = ScriptedModel::new([turn.clone()])
            .take_turn(&context)
            .expect("a turn");
        let ScriptedReply::Message(message) = taken.reply() else {
            unreachable!("a message turn")
        };
        let reason = match events.last() {
            Some(ModelEvent::Done { reason, .. }) => *reason,
            other => panic!("the turn ends with {other:?}"),
        };
        let mut generic = encoders(chunks, usage, ping);
        let mut direct = encoders(chunks, usage, ping);
        core::array::from_fn(|k| {
            let (mut by_events, mut by_steps) = (Events::default(), Events::default());
            for event in &events {
                generic[k].encode(Wire::from(event), &mut by_events);
            }
            message_steps(message, reason, taken.is_full_sequence(), |step| {
                direct[k].encode(step, &mut by_steps);
            });
            (
                by_events.into_strings().concat(),
                by_steps.into_strings().concat(),
            )
        })
    }

    proptest! {
        #[test]
        fn a_message_is_written_as_its_events_are(
            turn in turn(),
            chunks in 1..4_usize,
            usage in any::<bool>(),
            ping in any::<bool>(),
        ) {
            for (protocol, (by_events, by_steps)) in ["openai", "anthropic", "responses", "google"]
                .into_iter()
                .zip(both(&turn, chunks, usage, ping))
            {
                prop_assert_eq!(by_events, by_steps, "{}", protocol);
            }
        }
    }

    #[test]
    fn the_steps_follow_the_players_events() {
        // One block of each kind, with the fields the encoders look up.
        let turn = ScriptedTurn::message(assistant(
            [
                image("AA", "image/png"),
                text("a \"b\""),
                tool_call("", "ls", json!({"path": "."})),
                thinking("hm"),
            ],
            StopReason::ToolUse,
        ))
        .chunked(NonZeroUsize::MIN)
        .full_sequence();
        let [openai, anthropic, responses, google] = both(&turn, 2, true, true);
        // Gemini's function calls carry no id.
        for (by_events, by_steps) in [openai, anthropic, responses] {
            assert_eq!(by_events, by_steps);
            assert!(by_events.contains("call_0_2"), "{by_events}");
        }
        assert_eq!(google.0, google.1);
    }
}
