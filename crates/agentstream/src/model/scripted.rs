//! `ScriptedModel`: a deterministic test double that plays scripted turns
//! through the same event protocol as a real provider.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::num::NonZeroUsize;
use core::pin::Pin;

use futures_util::future::select;

use serde_json::Value;

use super::abort::{AbortSignal, ABORTED_MESSAGE};
use super::event::{terminal_reason, ErrorReason, ModelEvent};
use super::partial::PartialBuilder;
use super::stream::{AssistantMessageProducer, ModelStream};
use super::{Model, StreamOptions};
use crate::message::{
    assistant, text, AssistantMessage, ContentBlock, Context, DecodeError, StopReason,
};
use crate::sync::SpinLock;
use crate::yield_now::yield_now;

/// The error message of a call made after the script ran out.
pub const EXHAUSTED_MESSAGE: &str = "ScriptedModel has no more responses";

/// A [`Model`] that answers each call with the next scripted turn.
///
/// [`stream`](Model::stream) does this, synchronously and in this order:
/// creates the stream, records a deep copy of the context in
/// [`requests`](Self::requests), takes the next turn (advancing the cursor
/// even past the end), and returns. No event exists yet: the producer starts
/// only after a [`yield_now`] has yielded, like a JavaScript microtask. The
/// returned stream drives it when polled, so no runtime is needed; a runtime
/// adapter may spawn it instead, with the same events.
///
/// Each turn is projected onto the event protocol: `start`, then per block a
/// `text_delta`, `thinking_delta`, or `toolcall_delta` + `toolcall_end`
/// (with [`ScriptedTurn::full_sequence`] also the `*_start`/`*_end` events),
/// then `done`, or `error` for a turn whose stop reason is `error` or
/// `aborted`. A call whose signal is already aborted gets a single `error`
/// (`aborted`, [`ABORTED_MESSAGE`]); a call after the script ran out gets a
/// single `error` ([`EXHAUSTED_MESSAGE`]). Both are still recorded and
/// consume a turn.
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use futures_util::{FutureExt, StreamExt};
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
///
/// // Poll by hand, no runtime: the first poll yields (the "microtask").
/// let mut types = Box::pin(stream.by_ref().map(|e| e.type_name()).collect::<Vec<_>>());
/// let types = loop {
///     if let Some(types) = types.as_mut().now_or_never() {
///         break types;
///     }
/// };
/// assert_eq!(types, ["start", "text_delta", "done"]);
/// assert_eq!(stream.result().now_or_never().unwrap().text(), "hi");
/// assert_eq!(model.requests().len(), 1);
/// ```
pub struct ScriptedModel {
    turns: Vec<Arc<ScriptedTurn>>,
    state: SpinLock<ScriptState>,
    pacer: Option<Pacer>,
}

/// Makes the pause between two deltas of a chunked turn: a timer future of
/// some runtime, for example. See [`ScriptedModel::with_pacer`].
pub type Pacer = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

struct ScriptState {
    cursor: usize,
    requests: Vec<Context>,
}

/// One scripted answer, with how to play it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedTurn {
    reply: ScriptedReply,
    chunks: NonZeroUsize,
    full_sequence: bool,
}

/// What a scripted turn answers.
// Turns are built once and shared behind an `Arc`, so the size difference
// between the variants costs nothing per call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// A complete assistant message; its stop reason decides `done` or
    /// `error`.
    Message(AssistantMessage),
    /// A failed call.
    Failure(ScriptedFailure),
}

/// A failed call: `{stopReason: "error" | "aborted", errorMessage,
/// partialText?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedFailure {
    /// `error` or `aborted`.
    pub reason: ErrorReason,
    /// The `errorMessage` of the resulting message.
    pub error_message: String,
    /// Text produced before the failure, streamed before the `error` event.
    pub partial_text: Option<String>,
}

impl ScriptedTurn {
    /// A turn answering with `message`.
    pub fn message(message: AssistantMessage) -> Self {
        Self::from_reply(ScriptedReply::Message(message))
    }

    /// A turn that fails with `reason` and `error_message`.
    pub fn failure(reason: ErrorReason, error_message: impl Into<String>) -> Self {
        Self::from_reply(ScriptedReply::Failure(ScriptedFailure {
            reason,
            error_message: error_message.into(),
            partial_text: None,
        }))
    }

    fn from_reply(reply: ScriptedReply) -> Self {
        Self {
            reply,
            chunks: NonZeroUsize::MIN,
            full_sequence: false,
        }
    }

    /// For a failure turn: the text streamed before the failure. No effect
    /// on a message turn.
    pub fn with_partial_text(mut self, partial_text: impl Into<String>) -> Self {
        if let ScriptedReply::Failure(failure) = &mut self.reply {
            failure.partial_text = Some(partial_text.into());
        }
        self
    }

    /// Splits every text, thinking text and tool-argument JSON into up to
    /// `chunks` deltas (at character boundaries), yielding to the executor
    /// between deltas. An abort between deltas ends the call with
    /// `error(aborted)` carrying what was streamed so far.
    pub fn chunked(mut self, chunks: NonZeroUsize) -> Self {
        self.chunks = chunks;
        self
    }

    /// Also emits `text_start`/`text_end`, `thinking_start`/`thinking_end`
    /// and `toolcall_start` around the deltas. The default is the short
    /// trace (`start`, deltas, `toolcall_end`, terminal).
    pub fn full_sequence(mut self) -> Self {
        self.full_sequence = true;
        self
    }

    /// What this turn answers.
    pub fn reply(&self) -> &ScriptedReply {
        &self.reply
    }

    /// The message `result()` resolves to when this turn plays to its end.
    ///
    /// A failure becomes a message whose content is `[text(partial_text)]`
    /// (or empty), with the failure's stop reason and error message.
    pub fn final_message(&self) -> AssistantMessage {
        match &self.reply {
            ScriptedReply::Message(message) => message.clone(),
            ScriptedReply::Failure(failure) => {
                let content = failure.partial_text.as_deref().map(text);
                let mut message = assistant(content, failure.reason.stop_reason());
                message.error_message = Some(failure.error_message.clone());
                message
            }
        }
    }

    /// Parses a turn from Pi's JSON: an assistant message, or a failure
    /// `{"stopReason": "error"|"aborted", "errorMessage": "…",
    /// "partialText": "…"}` (`partialText` optional).
    ///
    /// # Errors
    /// A [`DecodeError`] naming the JSON path, for a value that is neither,
    /// a stop reason the protocol cannot end with, or a malformed message
    /// (for example a tool call without an id).
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(object) = &value else {
            return Err(DecodeError::new(
                "expected a turn: an assistant message or a failure object",
            ));
        };
        if object.contains_key("role") || object.contains_key("content") {
            match object.get("role") {
                Some(Value::String(role)) if role == "assistant" => {}
                Some(other) => {
                    return Err(DecodeError::new(alloc::format!(
                        "expected role \"assistant\", found {other}"
                    ))
                    .within_key("role"))
                }
                None => return Err(DecodeError::new("missing field \"role\"").within_key("role")),
            }
            let message = AssistantMessage::from_value(value)?;
            if terminal_reason(&message.stop_reason).is_none() {
                return Err(DecodeError::new(alloc::format!(
                    "unknown stopReason \"{}\": expected stop, length, toolUse, error or aborted",
                    message.stop_reason.as_str()
                ))
                .within_key("stopReason"));
            }
            return Ok(Self::message(message));
        }
        Self::failure_from_object(object)
    }

    fn failure_from_object(object: &serde_json::Map<String, Value>) -> Result<Self, DecodeError> {
        let string = |key: &str| -> Result<Option<String>, DecodeError> {
            match object.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(DecodeError::new(alloc::format!(
                    "expected a string, found {other}"
                ))
                .within_key(key)),
            }
        };
        if let Some(key) = object
            .keys()
            .find(|key| !matches!(key.as_str(), "stopReason" | "errorMessage" | "partialText"))
        {
            return Err(DecodeError::new(
                "unknown field in a failure turn (expected stopReason, errorMessage, partialText)",
            )
            .within_key(key));
        }
        let reason = match string("stopReason")?.as_deref() {
            Some("error") => ErrorReason::Error,
            Some("aborted") => ErrorReason::Aborted,
            Some(other) => {
                return Err(DecodeError::new(alloc::format!(
                    "a failure turn's stopReason must be \"error\" or \"aborted\", found \"{other}\""
                ))
                .within_key("stopReason"))
            }
            None => {
                return Err(DecodeError::new(
                    "expected a turn: an assistant message (with \"role\") or a failure (with \"stopReason\")",
                ))
            }
        };
        let error_message = string("errorMessage")?.ok_or_else(|| {
            DecodeError::new("missing field \"errorMessage\"").within_key("errorMessage")
        })?;
        let mut turn = Self::failure(reason, error_message);
        if let Some(partial) = string("partialText")? {
            turn = turn.with_partial_text(partial);
        }
        Ok(turn)
    }
}

impl From<AssistantMessage> for ScriptedTurn {
    fn from(message: AssistantMessage) -> Self {
        Self::message(message)
    }
}

impl ScriptedModel {
    /// A model that plays `turns` in order, one per call.
    pub fn new<T: Into<ScriptedTurn>>(turns: impl IntoIterator<Item = T>) -> Self {
        Self {
            turns: turns
                .into_iter()
                .map(|turn| Arc::new(turn.into()))
                .collect(),
            state: SpinLock::new(ScriptState {
                cursor: 0,
                requests: Vec::new(),
            }),
            pacer: None,
        }
    }

    /// Pauses between the deltas of chunked turns with the future `pacer`
    /// returns, instead of a bare [`yield_now`]. The core has no clock; a
    /// runtime adapter passes its timer here so that a scripted call takes
    /// real time and timeouts can cut it off. An abort ends the pause early.
    pub fn with_pacer<F>(mut self, pacer: impl Fn() -> F + Send + Sync + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.pacer = Some(Arc::new(move || {
            Box::pin(pacer()) as Pin<Box<dyn Future<Output = ()> + Send>>
        }));
        self
    }

    /// Deep copies of the contexts of every call so far, in call order.
    pub fn requests(&self) -> Vec<Context> {
        self.state.with(|state| state.requests.clone())
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

impl Model for ScriptedModel {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        // The copy is made outside the lock; only the push happens inside.
        let snapshot = context.clone();
        let turns = &self.turns;
        let turn = self.state.with(|state| {
            state.requests.push(snapshot);
            let turn = turns.get(state.cursor).cloned();
            state.cursor += 1;
            turn
        });
        let signal = options.signal;
        let pacer = self.pacer.clone();
        ModelStream::driven(move |producer| play(producer, turn, signal, pacer))
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("turns", &self.turns.len())
            .field("calls", &self.calls())
            .field("paced", &self.pacer.is_some())
            .finish_non_exhaustive()
    }
}

/// The producer of one scripted call.
async fn play(
    mut out: AssistantMessageProducer,
    turn: Option<Arc<ScriptedTurn>>,
    signal: Option<AbortSignal>,
    pacer: Option<Pacer>,
) {
    yield_now().await;
    if signal.as_ref().is_some_and(AbortSignal::is_aborted) {
        let mut error = assistant([], StopReason::Aborted);
        error.error_message = Some(ABORTED_MESSAGE.into());
        let _ = out.push(ModelEvent::Error {
            reason: ErrorReason::Aborted,
            error: Box::new(error),
        });
        return;
    }
    let Some(turn) = turn else {
        let mut error = assistant([], StopReason::Error);
        error.error_message = Some(EXHAUSTED_MESSAGE.into());
        let _ = out.push(ModelEvent::Error {
            reason: ErrorReason::Error,
            error: Box::new(error),
        });
        return;
    };
    let message = turn.final_message();
    let mut header = message.clone();
    header.stop_reason = StopReason::Stop;
    header.error_message = None;
    let mut player = Player {
        out,
        builder: PartialBuilder::new(header),
        chunks: turn.chunks.get(),
        full_sequence: turn.full_sequence,
        deltas: 0,
        signal,
        pacer,
    };
    let partial = player.builder.snapshot();
    player.emit(ModelEvent::Start { partial });
    for block in &message.content {
        if player.play_block(block).await.is_err() {
            let error = player
                .builder
                .to_error_message(StopReason::Aborted, ABORTED_MESSAGE);
            player.emit(ModelEvent::Error {
                reason: ErrorReason::Aborted,
                error: Box::new(error),
            });
            return;
        }
    }
    let terminal = match terminal_reason(&message.stop_reason) {
        Some(Ok(reason)) => ModelEvent::Done {
            reason,
            message: Box::new(message),
        },
        Some(Err(reason)) => ModelEvent::Error {
            reason,
            error: Box::new(message),
        },
        None => {
            let error_message = alloc::format!(
                "ScriptedModel cannot end a turn with stopReason \"{}\"",
                message.stop_reason.as_str()
            );
            let error = player
                .builder
                .to_error_message(StopReason::Error, error_message);
            ModelEvent::Error {
                reason: ErrorReason::Error,
                error: Box::new(error),
            }
        }
    };
    player.emit(terminal);
}

/// Projects one scripted message onto events.
struct Player {
    out: AssistantMessageProducer,
    builder: PartialBuilder,
    chunks: usize,
    full_sequence: bool,
    /// Deltas emitted so far; a pause precedes every delta but the first.
    deltas: usize,
    signal: Option<AbortSignal>,
    pacer: Option<Pacer>,
}

/// The signal aborted between two deltas.
struct AbortedMidStream;

impl Player {
    fn emit(&mut self, event: ModelEvent) {
        // Refused only when nobody observes the call; the script plays on
        // regardless, so the trace does not depend on the consumer.
        let _ = self.out.push(event);
    }

    /// Waits between two deltas; `Err` if the signal aborted meanwhile.
    async fn pause(&self) -> Result<(), AbortedMidStream> {
        match (&self.pacer, &self.signal) {
            (Some(pacer), Some(signal)) => {
                select(pacer(), signal.aborted()).await;
            }
            (Some(pacer), None) => pacer().await,
            (None, _) => yield_now().await,
        }
        match &self.signal {
            Some(signal) if signal.is_aborted() => Err(AbortedMidStream),
            _ => Ok(()),
        }
    }

    async fn play_block(&mut self, block: &ContentBlock) -> Result<(), AbortedMidStream> {
        match block {
            ContentBlock::Text(content) => {
                let index = self.builder.start_text(content.clone());
                if self.full_sequence {
                    let partial = self.builder.snapshot();
                    self.emit(ModelEvent::TextStart {
                        content_index: index,
                        partial,
                    });
                }
                self.stream_text(index, &content.text, |content_index, delta, partial| {
                    ModelEvent::TextDelta {
                        content_index,
                        delta,
                        partial,
                    }
                })
                .await?;
                if self.full_sequence {
                    let partial = self.builder.snapshot();
                    self.emit(ModelEvent::TextEnd {
                        content_index: index,
                        content: content.text.clone(),
                        partial,
                    });
                }
            }
            ContentBlock::Thinking(content) => {
                let index = self.builder.start_thinking(content.clone());
                if self.full_sequence {
                    let partial = self.builder.snapshot();
                    self.emit(ModelEvent::ThinkingStart {
                        content_index: index,
                        partial,
                    });
                }
                self.stream_text(index, &content.thinking, |content_index, delta, partial| {
                    ModelEvent::ThinkingDelta {
                        content_index,
                        delta,
                        partial,
                    }
                })
                .await?;
                if self.full_sequence {
                    let partial = self.builder.snapshot();
                    self.emit(ModelEvent::ThinkingEnd {
                        content_index: index,
                        content: content.thinking.clone(),
                        partial,
                    });
                }
            }
            ContentBlock::ToolCall(call) => {
                let index = self.builder.start_tool_call(call.clone());
                if self.full_sequence {
                    let partial = self.builder.snapshot();
                    self.emit(ModelEvent::ToolCallStart {
                        content_index: index,
                        partial,
                    });
                }
                let raw = serde_json::to_string(&call.arguments).unwrap_or_default();
                self.stream_text(index, &raw, |content_index, delta, partial| {
                    ModelEvent::ToolCallDelta {
                        content_index,
                        delta,
                        partial,
                    }
                })
                .await?;
                self.builder.complete(index, block.clone());
                let partial = self.builder.snapshot();
                self.emit(ModelEvent::ToolCallEnd {
                    content_index: index,
                    tool_call: Box::new(call.clone()),
                    partial,
                });
            }
            // Blocks with no events of their own (images, unknown types)
            // appear in the next snapshot.
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => {
                self.builder.push_complete(block.clone());
            }
        }
        Ok(())
    }

    /// Streams `text` into block `index` as up to `self.chunks` deltas.
    async fn stream_text(
        &mut self,
        index: usize,
        text: &str,
        event: impl Fn(usize, Arc<str>, super::PartialMessage) -> ModelEvent,
    ) -> Result<(), AbortedMidStream> {
        for piece in split_chunks(text, self.chunks) {
            if self.chunks > 1 && self.deltas > 0 {
                self.pause().await?;
            }
            self.deltas += 1;
            let delta: Arc<str> = piece.into();
            self.builder.append(index, delta.clone());
            let partial = self.builder.snapshot();
            self.emit(event(index, delta, partial));
        }
        Ok(())
    }
}

/// Splits `text` into at most `chunks` pieces of about equal byte length,
/// at character boundaries. An empty text gives one empty piece.
fn split_chunks(text: &str, chunks: usize) -> impl Iterator<Item = &str> {
    let target = text.len().div_ceil(chunks.max(1)).max(1);
    let mut rest = Some(text);
    core::iter::from_fn(move || {
        let current = rest?;
        if current.len() <= target {
            rest = None;
            return Some(current);
        }
        let mut cut = target;
        while !current.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = current.split_at(cut);
        rest = if tail.is_empty() { None } else { Some(tail) };
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::split_chunks;
    use alloc::vec::Vec;

    #[test]
    fn split_chunks_respects_counts_and_char_boundaries() {
        let pieces = |t, n| split_chunks(t, n).collect::<Vec<_>>();
        assert_eq!(pieces("", 3), [""]);
        assert_eq!(pieces("abcdef", 1), ["abcdef"]);
        assert_eq!(pieces("abcdef", 3), ["ab", "cd", "ef"]);
        assert_eq!(pieces("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(pieces("ab", 5), ["a", "b"]);
        assert_eq!(pieces("héllo", 2).concat(), "héllo");
        assert!(pieces("日本語テキスト", 4).len() <= 4);
    }
}
