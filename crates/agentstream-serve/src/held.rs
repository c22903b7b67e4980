//! Scripted turns held compactly, their message built when they answer.
//!
//! A decoded assistant message is large for what a script says: the
//! bench's turn (a sentence and one tool call) holds about 1.7 kB once
//! decoded (its `Usage`, its content blocks, the three `"scripted"`
//! names, the tool call's argument map), where its own text is under
//! 100 bytes. A turn of its own, which answers once, is kept instead as
//! a [`Compact`]: its blocks' strings (a tool call's arguments as their
//! JSON text) and its stop reason, and its message is built again when
//! it answers. Only a turn that comes back equal to its decoded message
//! is held so (checked when the script loads); anything else (a usage, a
//! model name, a signature, a field Pi's JSON carries beside the known
//! ones, a failure) keeps its decoded message.
//!
//! A turn that answers again keeps one decoded message, so that its
//! answer is filled in from its template (see
//! [`template`](crate::template)): a script element written more than
//! once shares one (see [`split_script`](crate::lanes::split_script)),
//! and a compact turn (a rule's reply, or an ordered turn played by a
//! second test id or after a reset) decodes its message for good on its
//! second answer (see [`Lazy`]). Memory then grows with the turns that
//! answer twice, never with the calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use agentstream::message::{
    assistant, text, thinking, tool_call, AssistantMessage, ContentBlock, StopReason, SCRIPTED,
};
use agentstream::model::{ErrorReason, ScriptStep, ScriptedReply, ScriptedTurn};
use serde_json::{Map, Value};

/// A message turn held as its blocks' strings (see the
/// [module documentation](self)).
#[derive(Debug, Clone)]
pub(crate) struct Compact {
    blocks: Box<[Block]>,
    stop: Reason,
}

/// One content block of a [`Compact`] turn.
#[derive(Debug, Clone)]
enum Block {
    Text(Box<str>),
    Thinking(Box<str>),
    ToolCall(Box<Call>),
}

/// A tool call: its id, its name and its arguments' JSON text.
#[derive(Debug, Clone)]
struct Call {
    id: Box<str>,
    name: Box<str>,
    arguments: Box<str>,
}

/// The stop reasons a scripted message may end with.
#[derive(Debug, Clone, Copy)]
enum Reason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

impl Reason {
    fn of(reason: &StopReason) -> Option<Self> {
        Some(match reason {
            StopReason::Stop => Self::Stop,
            StopReason::Length => Self::Length,
            StopReason::ToolUse => Self::ToolUse,
            StopReason::Error => Self::Error,
            StopReason::Aborted => Self::Aborted,
            _ => return None,
        })
    }

    fn reason(self) -> StopReason {
        match self {
            Self::Stop => StopReason::Stop,
            Self::Length => StopReason::Length,
            Self::ToolUse => StopReason::ToolUse,
            Self::Error => StopReason::Error,
            Self::Aborted => StopReason::Aborted,
        }
    }
}

impl Compact {
    /// `turn` held compactly, if its message comes back equal from the
    /// compact form (a plain message turn, played in one chunk, whose
    /// fields but its blocks and stop reason are the builder's); `None`
    /// otherwise.
    pub(crate) fn of(turn: &ScriptedTurn) -> Option<Self> {
        let ScriptedReply::Message(message) = turn.reply() else {
            return None;
        };
        let blocks = message
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text(t) => Some(Block::Text(t.text.as_str().into())),
                ContentBlock::Thinking(t) => Some(Block::Thinking(t.thinking.as_str().into())),
                ContentBlock::ToolCall(call) => Some(Block::ToolCall(Box::new(Call {
                    id: call.id.as_str().into(),
                    name: call.name.as_str().into(),
                    arguments: serde_json::to_string(&call.arguments).ok()?.into(),
                }))),
                _ => None,
            })
            .collect::<Option<Box<[Block]>>>()?;
        let compact = Compact {
            blocks,
            stop: Reason::of(&message.stop_reason)?,
        };
        // Whatever the compact form leaves out (a signature, a usage, a
        // name, an unknown field) makes it unequal; a turn built is played
        // in one chunk, the short trace.
        let plain = turn.chunks().get() == 1 && !turn.is_full_sequence();
        (plain && compact.message().ok().as_ref() == Some(&**message)).then_some(compact)
    }

    /// The message this turn answers with, built anew.
    ///
    /// # Errors
    /// The JSON error of a tool call's arguments (never, for arguments
    /// written by [`of`](Self::of)).
    fn message(&self) -> Result<AssistantMessage, serde_json::Error> {
        let blocks = self
            .blocks
            .iter()
            .map(|block| {
                Ok(match block {
                    Block::Text(t) => text(&**t),
                    Block::Thinking(t) => thinking(&**t),
                    Block::ToolCall(call) => {
                        let arguments: Map<String, Value> = serde_json::from_str(&call.arguments)?;
                        tool_call(&*call.id, &*call.name, Value::Object(arguments))
                    }
                })
            })
            .collect::<Result<Vec<ContentBlock>, serde_json::Error>>()?;
        Ok(assistant(blocks, self.stop.reason()))
    }

    /// The turn, built anew (a message of its own, shared with nothing).
    pub(crate) fn turn(&self) -> ScriptedTurn {
        match self.message() {
            Ok(message) => ScriptedTurn::message(message),
            Err(error) => ScriptedTurn::failure(
                ErrorReason::Error,
                format!("agentstream serve: a held turn's arguments do not read back: {error}"),
            ),
        }
    }
}

/// Makes the ordered turns' script steps: a turn whose message several
/// elements share (a script element written more than once, see
/// [`parse_script`](crate::parse_script)) is one shared step, answered
/// again from its template; a turn of its own is [`Lazy`] when it can
/// be: compact, its message built when it answers, until it answers a
/// second time (played by a second test id, or after a reset).
pub(crate) struct TurnSteps {
    /// How many turns hold each message, by its address.
    holders: HashMap<usize, usize>,
    /// The step of each shared message, by its address.
    shared: HashMap<usize, ScriptStep>,
}

/// The address of `turn`'s message, if it is a message.
fn address(turn: &ScriptedTurn) -> Option<usize> {
    match turn.reply() {
        ScriptedReply::Message(message) => Some(Arc::as_ptr(message) as usize),
        ScriptedReply::Failure(_) => None,
    }
}

impl TurnSteps {
    /// The steps of `turns`, every one of them: they are all alive until
    /// their steps are made, so an address names one message throughout.
    pub(crate) fn new<'a>(turns: impl IntoIterator<Item = &'a ScriptedTurn>) -> Self {
        let mut holders = HashMap::new();
        for address in turns.into_iter().filter_map(address) {
            *holders.entry(address).or_insert(0) += 1;
        }
        TurnSteps {
            holders,
            shared: HashMap::new(),
        }
    }

    /// The step of `turn`.
    pub(crate) fn step(&mut self, turn: ScriptedTurn) -> ScriptStep {
        let Some(address) = address(&turn) else {
            return ScriptStep::from(turn);
        };
        if self.holders.get(&address).is_some_and(|&n| n > 1) {
            return self
                .shared
                .entry(address)
                .or_insert_with(|| ScriptStep::from(turn))
                .clone();
        }
        match Compact::of(&turn) {
            Some(compact) => {
                let lazy = Lazy::new(compact);
                // A copy of the turn shares its message: its template.
                ScriptStep::reply(move |_| ScriptedTurn::clone(&lazy.turn()))
            }
            None => ScriptStep::from(turn),
        }
    }
}

/// A rule reply's turn: decoded, or [`Lazy`].
#[derive(Debug, Clone)]
pub(crate) enum Held {
    /// The decoded turn.
    Decoded(Arc<ScriptedTurn>),
    /// The compact turn, and what became of it.
    Compact(Box<Lazy>),
}

/// A compact turn, whether it answered, and its decoded turn once it
/// answered twice: a turn that answers once costs its compact form; one
/// that answers again keeps one message, which its template names.
#[derive(Debug)]
pub(crate) struct Lazy {
    compact: Compact,
    answered: AtomicBool,
    decoded: OnceLock<Arc<ScriptedTurn>>,
}

impl Lazy {
    fn new(compact: Compact) -> Self {
        Lazy {
            compact,
            answered: AtomicBool::new(false),
            decoded: OnceLock::new(),
        }
    }

    /// The turn of one answer: its own message on its first answer, the
    /// shared one from its second on.
    fn turn(&self) -> Arc<ScriptedTurn> {
        if let Some(turn) = self.decoded.get() {
            return turn.clone();
        }
        if !self.answered.swap(true, Ordering::Relaxed) {
            return Arc::new(self.compact.turn());
        }
        self.decoded
            .get_or_init(|| Arc::new(self.compact.turn()))
            .clone()
    }
}

impl Clone for Lazy {
    fn clone(&self) -> Self {
        Lazy {
            compact: self.compact.clone(),
            answered: AtomicBool::new(self.answered.load(Ordering::Relaxed)),
            decoded: self.decoded.clone(),
        }
    }
}

impl Held {
    /// `turn`, compact when it can be (see [`Compact::of`]).
    pub(crate) fn new(turn: ScriptedTurn) -> Self {
        match Compact::of(&turn) {
            Some(compact) => Self::Compact(Box::new(Lazy::new(compact))),
            None => Self::Decoded(Arc::new(turn)),
        }
    }

    /// The turn of one answer: its own message on its first answer, the
    /// shared one from its second on.
    pub(crate) fn turn(&self) -> Arc<ScriptedTurn> {
        match self {
            Self::Decoded(turn) => turn.clone(),
            Self::Compact(lazy) => lazy.turn(),
        }
    }

    /// The model its message names, if it is a message (a compact one
    /// names the builder's, `scripted`).
    pub(crate) fn model(&self) -> Option<String> {
        match self {
            Self::Decoded(turn) => match turn.reply() {
                ScriptedReply::Message(message) => Some(message.model.clone()),
                ScriptedReply::Failure(_) => None,
            },
            // A compact turn is the builders' message: their model name.
            Self::Compact(_) => Some(SCRIPTED.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(value: Value) -> ScriptedTurn {
        ScriptedTurn::from_value(value).unwrap()
    }

    #[test]
    fn a_plain_turn_comes_back_equal() {
        for value in [
            json!("Paris."),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                {"type": "thinking", "thinking": "hm"},
                {"type": "toolCall", "id": "", "name": "weather",
                 "arguments": {"city": "Paris", "n": 1.5, "nested": {"b": [1, null]}, "a": true}}],
                "stopReason": "toolUse"}),
            json!({"role": "assistant", "content": [], "stopReason": "length"}),
        ] {
            let decoded = turn(value.clone());
            let compact = Compact::of(&decoded).unwrap_or_else(|| panic!("{value}"));
            assert_eq!(compact.turn(), decoded, "{value}");
        }
    }

    #[test]
    fn anything_else_keeps_its_decoded_message() {
        for value in [
            json!({"role": "assistant", "content": [{"type": "text", "text": "a"}],
                "stopReason": "stop", "model": "gpt-x"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "a",
                "textSignature": "s"}], "stopReason": "stop"}),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "n",
                "arguments": {}, "thoughtSignature": "s"}], "stopReason": "toolUse"}),
            json!({"role": "assistant", "content": [], "stopReason": "stop",
                "usage": {"input": 3, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}),
            json!({"role": "assistant", "content": [], "stopReason": "stop", "mine": 1}),
            json!({"stopReason": "error", "errorMessage": "boom"}),
        ] {
            assert!(Compact::of(&turn(value.clone())).is_none(), "{value}");
            assert!(
                matches!(Held::new(turn(value.clone())), Held::Decoded(_)),
                "{value}"
            );
        }
        let plain = turn(json!("a"));
        let chunked = plain
            .clone()
            .chunked(std::num::NonZeroUsize::new(3).unwrap());
        assert!(Compact::of(&chunked).is_none());
        assert!(Compact::of(&plain.full_sequence()).is_none());
    }

    #[test]
    fn an_ordered_turn_of_its_own_is_compact_and_turns_written_alike_share_a_step() {
        let shared = turn(json!("b"));
        let turns = vec![turn(json!("a")), shared.clone(), shared];
        let mut steps = TurnSteps::new(&turns);
        let made: Vec<ScriptStep> = turns.into_iter().map(|t| steps.step(t)).collect();
        let (ScriptStep::Turn(one), ScriptStep::Turn(other)) = (&made[1], &made[2]) else {
            panic!("{made:?}")
        };
        assert!(Arc::ptr_eq(one, other));
        let ScriptStep::Reply(play) = &made[0] else {
            panic!("{made:?}")
        };
        let context = agentstream::message::Context::default();
        let message = |turn: ScriptedTurn| match turn.reply() {
            ScriptedReply::Message(message) => message.clone(),
            ScriptedReply::Failure(_) => panic!("a failure"),
        };
        let first = message(play(&context));
        let (second, third) = (message(play(&context)), message(play(&context)));
        assert_eq!(first.text(), "a");
        assert!(!Arc::ptr_eq(&first, &second), "its first answer is its own");
        assert!(Arc::ptr_eq(&second, &third), "later answers share one");
    }

    #[test]
    fn a_held_reply_shares_its_message_from_its_second_answer() {
        let held = Held::new(turn(json!("sunny")));
        let (first, second, third) = (held.turn(), held.turn(), held.turn());
        assert_eq!((*first).clone(), turn(json!("sunny")));
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(&second, &third));
        assert_eq!(held.model().as_deref(), Some("scripted"));
    }
}
