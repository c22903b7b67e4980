//! Scripted turns: what a scripted call answers, and how it is played.

use alloc::string::String;
use alloc::sync::Arc;
use core::num::NonZeroUsize;

use serde_json::{Map, Value};

use crate::message::{assistant, text, AssistantMessage, DecodeError, StopReason};
use crate::model::event::{terminal_reason, ErrorReason};

/// One scripted answer, with how to play it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedTurn {
    reply: ScriptedReply,
    pub(super) chunks: NonZeroUsize,
    pub(super) full_sequence: bool,
}

/// What a scripted turn answers.
// Turns are built once and shared behind an `Arc`, so the size difference
// between the variants costs nothing per call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// A complete assistant message; its stop reason decides `done` or
    /// `error`. Shared: the `done` event of every call that plays the turn
    /// carries this `Arc`, not a copy.
    Message(Arc<AssistantMessage>),
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
        Self::from_reply(ScriptedReply::Message(Arc::new(message)))
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

    /// Gives every tool call with an empty id the id `call_<call>_<block>`
    /// (`call`, the index of the call that plays the turn; `block`, the
    /// call's index in the message's content), as a [`ScriptedModel`]
    /// does before it plays a turn; calls that have an id keep it, and a
    /// failure turn is left as it is. Only the message is copied, and only
    /// when it is shared with another turn (it sits behind an `Arc`).
    ///
    /// A server that shares one turn between calls (as `agentstream-serve`'s
    /// rules do) fills a copy per call with the same ids:
    ///
    /// ```
    /// use agentstream::message::{assistant, tool_call, ContentBlock, StopReason};
    /// use agentstream::model::{ScriptedReply, ScriptedTurn};
    /// use serde_json::json;
    ///
    /// let shared = ScriptedTurn::message(assistant(
    ///     [tool_call("", "read", json!({})), tool_call("mine", "ls", json!({}))],
    ///     StopReason::ToolUse,
    /// ));
    /// let mut turn = shared.clone();
    /// turn.fill_call_ids(3);
    /// let ScriptedReply::Message(message) = turn.reply() else { unreachable!() };
    /// let ids: Vec<&str> = message
    ///     .content
    ///     .iter()
    ///     .filter_map(|block| match block {
    ///         ContentBlock::ToolCall(call) => Some(call.id.as_str()),
    ///         _ => None,
    ///     })
    ///     .collect();
    /// assert_eq!(ids, ["call_3_0", "mine"]);
    /// assert_ne!(turn, shared, "the shared turn keeps its empty id");
    /// ```
    ///
    /// [`ScriptedModel`]: crate::model::ScriptedModel
    pub fn fill_call_ids(&mut self, call: usize) {
        if let ScriptedReply::Message(message) = &mut self.reply {
            for (block, content) in Arc::make_mut(message).content.iter_mut().enumerate() {
                if let crate::message::ContentBlock::ToolCall(tool_call) = content {
                    if tool_call.id.is_empty() {
                        tool_call.id = alloc::format!("call_{call}_{block}");
                    }
                }
            }
        }
    }

    /// Into how many deltas each text is split at most (see
    /// [`chunked`](Self::chunked); 1 by default).
    pub fn chunks(&self) -> NonZeroUsize {
        self.chunks
    }

    /// Whether the turn plays the [full sequence](Self::full_sequence) of
    /// events.
    pub fn is_full_sequence(&self) -> bool {
        self.full_sequence
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
            ScriptedReply::Message(message) => AssistantMessage::clone(message),
            ScriptedReply::Failure(failure) => {
                let content = failure.partial_text.as_deref().map(text);
                let mut message = assistant(content, failure.reason.stop_reason());
                message.error_message = Some(failure.error_message.clone());
                message
            }
        }
    }

    /// Whether this turn fails with nothing to stream: a failure without
    /// partial text, or an `error` or `aborted` message without content.
    /// The short trace plays it as `start → error`, the
    /// [full sequence](Self::full_sequence) as a lone `error` (see
    /// [`ScriptedModel`](super::ScriptedModel)); a server answers it as a
    /// failed request.
    ///
    /// ```
    /// use agentstream::message::{assistant, text, StopReason};
    /// use agentstream::model::{ErrorReason, ScriptedTurn};
    ///
    /// assert!(ScriptedTurn::failure(ErrorReason::Error, "rate limited").is_empty_failure());
    /// let with_text = ScriptedTurn::failure(ErrorReason::Error, "rate limited").with_partial_text("Wor");
    /// assert!(!with_text.is_empty_failure());
    /// assert!(ScriptedTurn::message(assistant([], StopReason::Aborted)).is_empty_failure());
    /// assert!(!ScriptedTurn::message(assistant([text("hi")], StopReason::Stop)).is_empty_failure());
    /// ```
    pub fn is_empty_failure(&self) -> bool {
        match &self.reply {
            ScriptedReply::Message(message) => {
                message.content.is_empty()
                    && matches!(terminal_reason(&message.stop_reason), Some(Err(_)))
            }
            ScriptedReply::Failure(failure) => failure.partial_text.is_none(),
        }
    }

    /// [`final_message`](Self::final_message), shared: a message turn's
    /// own `Arc`, without a copy.
    pub(super) fn shared_final_message(&self) -> Arc<AssistantMessage> {
        match &self.reply {
            ScriptedReply::Message(message) => message.clone(),
            ScriptedReply::Failure(_) => Arc::new(self.final_message()),
        }
    }

    /// Parses a turn from Pi's JSON: an assistant message, a plain string
    /// (a text turn that stops), or a failure `{"stopReason":
    /// "error"|"aborted", "errorMessage": "…", "partialText": "…"}`
    /// (`partialText` optional).
    ///
    /// An assistant message needs only `role`, `content` and `stopReason`:
    /// a missing `api`, `provider`, `model`, `usage` or `timestamp` takes
    /// the value the [`assistant`] builder gives (`"scripted"`, zero usage,
    /// timestamp 0).
    ///
    /// ```
    /// use agentstream::message::{assistant, text, tool_call, StopReason};
    /// use agentstream::model::ScriptedTurn;
    /// use serde_json::json;
    ///
    /// let short = ScriptedTurn::from_value(json!({"role": "assistant",
    ///     "content": [{"type": "toolCall", "id": "c1", "name": "read",
    ///                  "arguments": {"path": "README.md"}}],
    ///     "stopReason": "toolUse"})).unwrap();
    /// let built = assistant([tool_call("c1", "read", json!({"path": "README.md"}))],
    ///     StopReason::ToolUse);
    /// assert_eq!(short, ScriptedTurn::message(built));
    ///
    /// let plain = ScriptedTurn::from_value(json!("Paris.")).unwrap();
    /// assert_eq!(plain, ScriptedTurn::message(assistant([text("Paris.")], StopReason::Stop)));
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] naming the JSON path, for a value that is none of
    /// these, a stop reason the protocol cannot end with, or a malformed
    /// message (for example a tool call without an id, or a field of the
    /// wrong type).
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let mut object = match value {
            Value::Object(object) => object,
            Value::String(answer) => {
                return Ok(Self::message(assistant([text(answer)], StopReason::Stop)))
            }
            _ => {
                return Err(DecodeError::new(
                    "expected a turn: an assistant message, a string or a failure object",
                ))
            }
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
            fill_defaults(&mut object);
            let message = AssistantMessage::from_value(Value::Object(object))?;
            if terminal_reason(&message.stop_reason).is_none() {
                return Err(DecodeError::new(alloc::format!(
                    "unknown stopReason \"{}\": expected stop, length, toolUse, error or aborted",
                    message.stop_reason.as_str()
                ))
                .within_key("stopReason"));
            }
            return Ok(Self::message(message));
        }
        Self::failure_from_object(&object)
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

/// The fields of an assistant message a script may leave out, set as the
/// [`assistant`] builder sets them.
const DEFAULTED: [&str; 5] = ["api", "provider", "model", "usage", "timestamp"];

/// Inserts each missing [`DEFAULTED`] field of a scripted assistant
/// message with the builder's value; fields that are present (even with a
/// wrong type, which the message decoder then reports) are kept.
fn fill_defaults(object: &mut Map<String, Value>) {
    if DEFAULTED.iter().all(|key| object.contains_key(*key)) {
        return;
    }
    let Ok(Value::Object(mut defaults)) = serde_json::to_value(assistant([], StopReason::Stop))
    else {
        return;
    };
    for key in DEFAULTED {
        if !object.contains_key(key) {
            if let Some(value) = defaults.remove(key) {
                object.insert(key.into(), value);
            }
        }
    }
}

impl From<AssistantMessage> for ScriptedTurn {
    fn from(message: AssistantMessage) -> Self {
        Self::message(message)
    }
}
