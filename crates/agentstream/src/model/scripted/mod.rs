//! `ScriptedModel`: a deterministic test double that plays scripted turns
//! through the same event protocol as a real provider.

mod player;
mod turn;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

pub use turn::{ScriptedFailure, ScriptedReply, ScriptedTurn};

use crate::message::ContentBlock;

#[cfg(doc)]
use super::abort::ABORTED_MESSAGE;
use super::stream::ModelStream;
use super::{Model, StreamOptions};
use crate::message::Context;
use crate::rt::Pause;
use crate::sync::Lock;
#[cfg(doc)]
use crate::yield_now::yield_now;

/// The error message of a call made after the script ran out.
pub const EXHAUSTED_MESSAGE: &str = "ScriptedModel has no more responses";

/// A [`Model`] that answers each call with the next scripted turn.
///
/// [`stream`](Model::stream) does this, synchronously and in this order:
/// creates the stream, records a deep copy of the context in
/// [`requests`](Self::requests) if the model was made
/// [`recording_requests`](Self::recording_requests), takes the next turn
/// (advancing the cursor even past the end), and returns. No event exists yet: the producer starts
/// only after a [`yield_now`] has yielded, like a JavaScript microtask. The
/// returned stream drives it when polled, so no runtime is needed; a runtime
/// adapter may spawn it instead, with the same events.
///
/// # Two traces
///
/// Each turn is projected onto the event protocol in one of two shapes,
/// chosen per turn:
///
/// | | short trace (default; chapter 04's) | full sequence ([`ScriptedTurn::full_sequence`]; pi-ai's) |
/// |---|---|---|
/// | per block | `text_delta`, `thinking_delta`, or `toolcall_delta` + `toolcall_end` | the same with `text_start`/`text_end`, `thinking_start`/`thinking_end`, `toolcall_start` around them |
/// | a streaming tool call in the partial | `arguments: {}` and `rawArguments`: the JSON text received so far | the arguments parsed so far (partial-JSON parsing), no `rawArguments` |
/// | a failed turn with no content | `start → error`: the failure is played as its message | a lone `error`, as when a provider's request fails |
///
/// Both end with `done`, or `error` for a turn whose stop reason is
/// `error` or `aborted`; the terminal event carries the scripted message,
/// which is also [`result`](ModelStream::result). Two failures come
/// before any turn is played and are a lone `error` in both shapes: a
/// call whose signal is already aborted (`aborted`, [`ABORTED_MESSAGE`])
/// and a call after the script ran out ([`EXHAUSTED_MESSAGE`]). Both are
/// still recorded (when recording) and consume a turn.
///
/// Chapter 04's tool-call turn, in the short trace (the chapter's own
/// values):
///
/// ```
/// use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use futures_util::StreamExt;
/// use serde_json::json;
///
/// let turn = assistant(
///     [text("先看"), tool_call("c1", "read", json!({"path": "README.md"}))],
///     StopReason::ToolUse,
/// );
/// let model = ScriptedModel::new([turn]);
/// let context = Context::from_messages([user("请求一").into()]);
/// let events: Vec<_> = futures_executor::block_on(
///     model.stream(&context, StreamOptions::default()).collect(),
/// );
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["start", "text_delta", "toolcall_delta", "toolcall_end", "done"]);
///
/// // `toolcall_delta`'s partial: the structured arguments are not
/// // finished, `rawArguments` holds the JSON text.
/// let delta = serde_json::to_value(&events[2]).unwrap();
/// assert_eq!(delta["contentIndex"], 1);
/// assert_eq!(
///     delta["partial"]["content"][1],
///     json!({"type": "toolCall", "id": "c1", "name": "read",
///            "arguments": {}, "rawArguments": "{\"path\":\"README.md\"}"})
/// );
/// // `toolcall_end` puts the complete call in the same place.
/// let end = serde_json::to_value(&events[3]).unwrap();
/// assert_eq!(end["partial"]["content"][1]["arguments"], json!({"path": "README.md"}));
/// assert_eq!(end["partial"]["content"][0]["text"], "先看");
/// ```
///
/// The same turn as the full sequence, and a failure without partial text
/// in both shapes:
///
/// ```
/// use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
/// use agentstream::model::{ErrorReason, Model, ScriptedModel, ScriptedTurn, StreamOptions};
/// use futures_util::StreamExt;
/// use serde_json::json;
///
/// let turn = assistant(
///     [text("先看"), tool_call("c1", "read", json!({"path": "README.md"}))],
///     StopReason::ToolUse,
/// );
/// let cancelled = || ScriptedTurn::failure(ErrorReason::Aborted, "user cancelled");
/// let model = ScriptedModel::new([
///     ScriptedTurn::message(turn).full_sequence(),
///     cancelled(),
///     cancelled().full_sequence(),
/// ]);
/// let context = Context::from_messages([user("请求一").into()]);
/// let play = || {
///     futures_executor::block_on(model.stream(&context, StreamOptions::default()).collect::<Vec<_>>())
/// };
///
/// let events = play();
/// let types: Vec<_> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(
///     types,
///     ["start", "text_start", "text_delta", "text_end",
///      "toolcall_start", "toolcall_delta", "toolcall_end", "done"]
/// );
/// let delta = serde_json::to_value(&events[5]).unwrap();
/// assert_eq!(
///     delta["partial"]["content"][1],
///     json!({"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}})
/// );
///
/// let short: Vec<_> = play().iter().map(|e| e.type_name()).collect();
/// assert_eq!(short, ["start", "error"]);
/// let full: Vec<_> = play().iter().map(|e| e.type_name()).collect();
/// assert_eq!(full, ["error"]);
/// ```
///
/// By default nothing of a request is kept: a model that serves many calls
/// (a server, a benchmark, a long agent run) holds only its script. A test
/// that reads the contexts sent asks for them with
/// [`recording_requests`](Self::recording_requests).
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]).recording_requests();
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
///
/// // Any executor runs it; the stream drives its own producer.
/// futures_executor::block_on(async {
///     let types: Vec<_> = stream.by_ref().map(|e| e.type_name()).collect().await;
///     assert_eq!(types, ["start", "text_delta", "done"]);
///     assert_eq!(stream.result().await.text(), "hi");
/// });
/// assert_eq!(model.requests()[0], context);
/// ```
pub struct ScriptedModel {
    turns: Vec<ScriptStep>,
    state: Lock<ScriptState>,
    pacer: Option<Pause>,
    /// Whether [`Model::stream`] keeps a copy of each context.
    records_requests: bool,
}

/// One step of a script: a fixed turn, or a function of the request that
/// decides the turn when the call comes.
///
/// Fixed turns and functions mix freely in one script:
///
/// ```
/// use agentstream::message::{assistant, text, tool_call, user, Context, Message, StopReason};
/// use agentstream::model::{Model, ScriptStep, ScriptedModel, StreamOptions};
/// use serde_json::json;
///
/// let model = ScriptedModel::new([
///     ScriptStep::from(assistant([tool_call("", "read", json!({"path": "a"}))], StopReason::ToolUse)),
///     // The second answer counts the messages the loop sent.
///     ScriptStep::reply(|request: &Context| {
///         assistant([text(format!("{} messages", request.messages.len()))], StopReason::Stop).into()
///     }),
/// ]);
/// let context = Context::from_messages([user("hi").into()]);
/// futures_executor::block_on(async {
///     let first = model.stream(&context, StreamOptions::default()).result().await;
///     // An empty tool-call id is filled in deterministically.
///     assert_eq!(first.tool_calls().next().unwrap().id, "call_0_0");
///     let second = model.stream(&context, StreamOptions::default()).result().await;
///     assert_eq!(second.text(), "1 messages");
/// });
/// ```
#[derive(Clone)]
pub enum ScriptStep {
    /// Always this turn.
    Turn(Arc<ScriptedTurn>),
    /// The turn this function returns for the call's context.
    Reply(Arc<dyn Fn(&Context) -> ScriptedTurn + Send + Sync>),
}

impl ScriptStep {
    /// A step whose turn is `reply(context)`, decided when the call comes.
    pub fn reply(reply: impl Fn(&Context) -> ScriptedTurn + Send + Sync + 'static) -> Self {
        Self::Reply(Arc::new(reply))
    }

    fn turn(&self, context: &Context) -> Arc<ScriptedTurn> {
        match self {
            Self::Turn(turn) => Arc::clone(turn),
            Self::Reply(reply) => Arc::new(reply(context)),
        }
    }
}

impl From<ScriptedTurn> for ScriptStep {
    fn from(turn: ScriptedTurn) -> Self {
        Self::Turn(Arc::new(turn))
    }
}

impl From<crate::message::AssistantMessage> for ScriptStep {
    fn from(message: crate::message::AssistantMessage) -> Self {
        Self::Turn(Arc::new(ScriptedTurn::message(message)))
    }
}

impl fmt::Debug for ScriptStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Turn(turn) => f.debug_tuple("Turn").field(turn).finish(),
            Self::Reply(_) => f.write_str("Reply(..)"),
        }
    }
}

struct ScriptState {
    cursor: usize,
    /// Empty unless recording. Shared, so that [`ScriptedModel::requests`]
    /// copies only pointers under the lock and the deep copies outside it.
    requests: Vec<Arc<Context>>,
}

impl ScriptedModel {
    /// A model that plays `turns` in order, one per call: assistant
    /// messages, [`ScriptedTurn`]s or [`ScriptStep`]s.
    ///
    /// A tool call whose id is empty gets `call_<n>_<i>` when it is played,
    /// `n` being the call's index (0 for the first call) and `i` the
    /// block's index in the message, so that ids are deterministic also in
    /// turns a function builds.
    pub fn new<T: Into<ScriptStep>>(turns: impl IntoIterator<Item = T>) -> Self {
        Self {
            turns: turns.into_iter().map(Into::into).collect(),
            state: Lock::new(ScriptState {
                cursor: 0,
                requests: Vec::new(),
            }),
            pacer: None,
            records_requests: false,
        }
    }

    /// Pauses between the deltas of chunked turns with `pacer`, instead of
    /// a bare [`yield_now`]. The core has no clock; a
    /// [`Pause::new`] on a runtime's [`Timer`](crate::rt::Timer) (a host
    /// crate's `pacer`) makes a scripted call take real time, so timeouts
    /// can cut it off. An abort ends the pause early.
    #[must_use]
    pub fn with_pacer(mut self, pacer: Pause) -> Self {
        self.pacer = Some(pacer);
        self
    }

    /// Records a deep copy of the context of every call, for
    /// [`requests`](Self::requests) to return. Meant for tests: the log
    /// grows with every call and is never trimmed.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, user, Context, StopReason};
    /// use agentstream::model::{Model, ScriptedModel, StreamOptions};
    ///
    /// let turns = || [assistant([text("hi")], StopReason::Stop)];
    /// let context = Context::from_messages([user("hello").into()]);
    /// let (plain, recording) = (ScriptedModel::new(turns()), ScriptedModel::new(turns()).recording_requests());
    /// drop(plain.stream(&context, StreamOptions::default()));
    /// drop(recording.stream(&context, StreamOptions::default()));
    /// assert!(plain.requests().is_empty(), "a plain model keeps nothing");
    /// assert_eq!(recording.requests(), [context]);
    /// ```
    #[must_use]
    pub fn recording_requests(mut self) -> Self {
        self.records_requests = true;
        self
    }

    /// Whether the model records the contexts it is sent
    /// ([`recording_requests`](Self::recording_requests)).
    pub fn is_recording_requests(&self) -> bool {
        self.records_requests
    }

    /// Deep copies of the contexts of every call so far, in call order, if
    /// the model is [`recording_requests`](Self::recording_requests);
    /// empty otherwise ([`calls`](Self::calls) counts the calls either way).
    pub fn requests(&self) -> Vec<Context> {
        let shared = self.state.with(|state| state.requests.clone());
        shared
            .iter()
            .map(|context| Context::clone(context))
            .collect()
    }

    /// Number of calls so far (the cursor: the index of the next turn).
    pub fn calls(&self) -> usize {
        self.state.with(|state| state.cursor)
    }

    /// Turns not yet played.
    pub fn remaining(&self) -> usize {
        self.turns.len().saturating_sub(self.calls())
    }
}

impl ScriptedModel {
    /// Takes the turn for the next call, with everything
    /// [`stream`](Model::stream) does before it plays: records a copy of
    /// `context` (when [recording](Self::recording_requests)), advances the
    /// cursor (even past the end), runs a [`ScriptStep::Reply`] on
    /// `context`, and fills empty tool-call ids. `None` once the script
    /// ran out.
    ///
    /// With [`play`](Self::play), this splits `stream` in two, for a host
    /// that answers some turns without the event stream: `agentstream
    /// serve` writes a plain turn's response straight from its message.
    /// Every turn it takes must be answered one way or the other.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, user, Context, StopReason};
    /// use agentstream::model::{ScriptedModel, StreamOptions};
    ///
    /// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    /// let context = Context::from_messages([user("hello").into()]);
    /// let turn = model.take_turn(&context);
    /// assert_eq!(model.calls(), 1);
    /// let mut stream = model.play(turn, StreamOptions::default());
    /// let message = futures_executor::block_on(stream.result());
    /// assert_eq!(message.text(), "hi");
    /// assert!(model.take_turn(&context).is_none(), "the script ran out");
    /// ```
    pub fn take_turn(&self, context: &Context) -> Option<Arc<ScriptedTurn>> {
        // The copy, when recording, is made outside the lock; only the push
        // happens inside.
        let snapshot = self.records_requests.then(|| Arc::new(context.clone()));
        let turns = &self.turns;
        let (index, step) = self.state.with(|state| {
            if let Some(snapshot) = snapshot {
                state.requests.push(snapshot);
            }
            let step = turns.get(state.cursor).cloned();
            state.cursor += 1;
            (state.cursor - 1, step)
        });
        // A step's function runs outside the lock, on the caller's context.
        step.map(|step| with_call_ids(step.turn(context), index))
    }

    /// Plays a turn [taken](Self::take_turn) for a call, as
    /// [`stream`](Model::stream) plays it; `None` plays the error of a
    /// call after the script ran out ([`EXHAUSTED_MESSAGE`]). Takes no
    /// turn and records nothing.
    pub fn play(&self, turn: Option<Arc<ScriptedTurn>>, options: StreamOptions) -> ModelStream {
        let signal = options.signal;
        let pacer = self.pacer.clone();
        ModelStream::driven(move |producer| player::play(producer, turn, signal, pacer))
    }
}

impl Model for ScriptedModel {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.play(self.take_turn(context), options)
    }
}

/// `turn` with every empty tool-call id replaced by `call_<index>_<block>`.
fn with_call_ids(turn: Arc<ScriptedTurn>, index: usize) -> Arc<ScriptedTurn> {
    let ScriptedReply::Message(message) = turn.reply() else {
        return turn;
    };
    let needs_ids = message
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(call) if call.id.is_empty()));
    if !needs_ids {
        return turn;
    }
    let mut turn = ScriptedTurn::clone(&turn);
    turn.fill_call_ids(index);
    Arc::new(turn)
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("turns", &self.turns.len())
            .field("calls", &self.calls())
            .field("paced", &self.pacer.is_some())
            .field("records_requests", &self.records_requests)
            .finish_non_exhaustive()
    }
}
