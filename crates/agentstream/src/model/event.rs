//! The model event protocol: Pi's `AssistantMessageEvent`.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use serde::ser::SerializeMap;

use super::cause::ErrorCause;
use super::partial::PartialMessage;
use crate::message::{AssistantMessage, StopReason, ToolCall};

/// One event of a streaming model call, in Pi's shape.
///
/// A well-formed stream is `start`, then for each content block its
/// `*_start`/`*_delta`/`*_end` events (the start and end events are
/// optional), then exactly one terminal event: `done` or `error`. The one
/// exception is a call that fails before producing anything (aborted before
/// it started, or a scripted model out of turns): it is a single `error`.
/// [`validate_events`](super::validate_events) checks all of this.
///
/// Every `partial` is the message formed so far, *including* that event's
/// delta, as an immutable O(1) snapshot.
///
/// The large payloads of `toolcall_end`, `done` and `error` are shared
/// (`Arc`), so an event is a few words, moving or cloning it is cheap, and
/// the stream's [`result`](super::ModelStream::result) shares the terminal
/// message instead of copying it. [`Arc::unwrap_or_clone`] takes one out
/// (without a copy when nothing else holds it).
///
/// Serializes to Pi's JSON: `{"type": "text_delta", "contentIndex": 0,
/// "delta": "…", "partial": {…}}`.
#[derive(Clone, PartialEq)]
pub enum ModelEvent {
    /// `start`: the call began; `partial` has no content yet.
    Start {
        /// The message so far.
        partial: PartialMessage,
    },
    /// `text_start`: a text block opens at `content_index`.
    TextStart {
        /// `contentIndex`.
        content_index: usize,
        /// The message so far.
        partial: PartialMessage,
    },
    /// `text_delta`: more text for the block at `content_index`.
    TextDelta {
        /// `contentIndex`.
        content_index: usize,
        /// The new text.
        delta: Arc<str>,
        /// The message so far, including `delta`.
        partial: PartialMessage,
    },
    /// `text_end`: the text block at `content_index` is complete.
    TextEnd {
        /// `contentIndex`.
        content_index: usize,
        /// The block's whole text.
        content: String,
        /// The message so far.
        partial: PartialMessage,
    },
    /// `thinking_start`: a thinking block opens at `content_index`.
    ThinkingStart {
        /// `contentIndex`.
        content_index: usize,
        /// The message so far.
        partial: PartialMessage,
    },
    /// `thinking_delta`: more reasoning for the block at `content_index`.
    ThinkingDelta {
        /// `contentIndex`.
        content_index: usize,
        /// The new reasoning text.
        delta: Arc<str>,
        /// The message so far, including `delta`.
        partial: PartialMessage,
    },
    /// `thinking_end`: the thinking block at `content_index` is complete.
    ThinkingEnd {
        /// `contentIndex`.
        content_index: usize,
        /// The block's whole reasoning text.
        content: String,
        /// The message so far.
        partial: PartialMessage,
    },
    /// `toolcall_start`: a tool call opens at `content_index`.
    ToolCallStart {
        /// `contentIndex`.
        content_index: usize,
        /// The message so far.
        partial: PartialMessage,
    },
    /// `toolcall_delta`: a fragment of the call's argument JSON.
    ToolCallDelta {
        /// `contentIndex`.
        content_index: usize,
        /// The raw JSON fragment.
        delta: Arc<str>,
        /// The message so far: the call has the arguments its JSON text
        /// parses to so far (partial-JSON parsing, as pi-ai does), and
        /// [`raw_arguments`](crate::message::ToolCall::raw_arguments) holds
        /// the text (not serialized). A `ScriptedModel`'s short trace shows
        /// the call as chapter 04 does instead: `arguments: {}` and the
        /// text as `rawArguments`, serialized (see
        /// [`PartialBuilder::start_tool_call_raw`](crate::model::PartialBuilder::start_tool_call_raw)).
        partial: PartialMessage,
    },
    /// `toolcall_end`: the tool call at `content_index` is complete.
    ToolCallEnd {
        /// `contentIndex`.
        content_index: usize,
        /// The complete call, with parsed arguments.
        tool_call: Arc<ToolCall>,
        /// The message so far, in which the complete call has replaced the
        /// streaming one.
        partial: PartialMessage,
    },
    /// `done`: the call ended normally. Terminal.
    Done {
        /// Why the model stopped.
        reason: DoneReason,
        /// The final message.
        message: Arc<AssistantMessage>,
    },
    /// `error`: the call failed or was aborted. Terminal.
    Error {
        /// `error` or `aborted`.
        reason: ErrorReason,
        /// The message as far as it got, with `stopReason` `error` or
        /// `aborted` and an `errorMessage`.
        error: Arc<AssistantMessage>,
        /// Why the call failed, when the producer knows (see
        /// [`EventCause`]): not part of Pi's JSON nor of the event's
        /// equality.
        cause: EventCause,
    },
}

/// The typed [`ErrorCause`] an `error` event carries, attached where the
/// failure is known (a projector, the HTTP exchange, a deadline's
/// signal) so it travels with the event and the result, as an outcome
/// travels with its value through a oneshot channel.
///
/// It is not serialized (Pi's event has no such field) and takes no part
/// in equality: two events that differ only in their cause are equal, so
/// an event compares with Pi's golden events whatever its producer knew.
/// Boxed, so it adds one word to the event.
#[derive(Clone, Debug, Default)]
pub struct EventCause(Option<Box<ErrorCause>>);

impl EventCause {
    /// No cause: the producer gave none (the event's `errorMessage` is
    /// always there).
    pub const NONE: Self = Self(None);

    /// The cause `cause`.
    pub fn new(cause: ErrorCause) -> Self {
        Self(Some(Box::new(cause)))
    }

    /// The cause, if any.
    pub fn get(&self) -> Option<&ErrorCause> {
        self.0.as_deref()
    }

    /// Whether a cause is attached.
    pub fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

impl From<ErrorCause> for EventCause {
    fn from(cause: ErrorCause) -> Self {
        Self::new(cause)
    }
}

impl From<Option<ErrorCause>> for EventCause {
    fn from(cause: Option<ErrorCause>) -> Self {
        Self(cause.map(Box::new))
    }
}

impl PartialEq for EventCause {
    /// Always true: the cause is not part of an event's value (see the
    /// type's documentation).
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Why a call ended with `done`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DoneReason {
    /// `stop`
    Stop,
    /// `length`
    Length,
    /// `toolUse`
    ToolUse,
}

/// Why a call ended with `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorReason {
    /// `error`: the call failed.
    Error,
    /// `aborted`: the caller's signal aborted it.
    Aborted,
}

impl DoneReason {
    /// The reason a `done` event gives for a message that stopped with
    /// `stop_reason`; `None` for the reasons a stream does not end with
    /// `done` (`error`, `aborted`, and any other).
    ///
    /// ```
    /// use agentstream::message::StopReason;
    /// use agentstream::model::DoneReason;
    ///
    /// assert_eq!(DoneReason::from_stop_reason(&StopReason::ToolUse), Some(DoneReason::ToolUse));
    /// assert_eq!(DoneReason::from_stop_reason(&StopReason::Aborted), None);
    /// ```
    pub fn from_stop_reason(stop_reason: &StopReason) -> Option<Self> {
        match stop_reason {
            StopReason::Stop => Some(Self::Stop),
            StopReason::Length => Some(Self::Length),
            StopReason::ToolUse => Some(Self::ToolUse),
            _ => None,
        }
    }

    /// The matching stop reason.
    pub fn stop_reason(self) -> StopReason {
        match self {
            Self::Stop => StopReason::Stop,
            Self::Length => StopReason::Length,
            Self::ToolUse => StopReason::ToolUse,
        }
    }

    /// Pi's JSON string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
        }
    }
}

impl ErrorReason {
    /// The matching stop reason.
    pub fn stop_reason(self) -> StopReason {
        match self {
            Self::Error => StopReason::Error,
            Self::Aborted => StopReason::Aborted,
        }
    }

    /// Pi's JSON string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Aborted => "aborted",
        }
    }
}

/// How a stop reason ends a stream: `Ok` for `done`, `Err` for `error`, and
/// `None` for a reason the protocol has no terminal event for.
pub(crate) fn terminal_reason(stop_reason: &StopReason) -> Option<Result<DoneReason, ErrorReason>> {
    if let Some(reason) = DoneReason::from_stop_reason(stop_reason) {
        return Some(Ok(reason));
    }
    match stop_reason {
        StopReason::Error => Some(Err(ErrorReason::Error)),
        StopReason::Aborted => Some(Err(ErrorReason::Aborted)),
        _ => None,
    }
}

impl ModelEvent {
    /// A `done` event.
    pub fn done(reason: DoneReason, message: AssistantMessage) -> Self {
        Self::Done {
            reason,
            message: Arc::new(message),
        }
    }

    /// An `error` event.
    pub fn error(reason: ErrorReason, error: AssistantMessage) -> Self {
        Self::Error {
            reason,
            error: Arc::new(error),
            cause: EventCause::NONE,
        }
    }

    /// The same event with `cause` attached, when it is an `error`
    /// (other events are returned as they are).
    #[must_use]
    pub fn with_cause(mut self, cause: ErrorCause) -> Self {
        self.attach_cause(cause);
        self
    }

    /// Attaches `cause` to this event when it is an `error`, replacing
    /// any cause it had; other events are left alone.
    pub fn attach_cause(&mut self, cause: ErrorCause) {
        if let Self::Error { cause: slot, .. } = self {
            *slot = EventCause::new(cause);
        }
    }

    /// The typed cause of an `error` event, when its producer attached
    /// one; `None` for every other event.
    pub fn error_cause(&self) -> Option<&ErrorCause> {
        match self {
            Self::Error { cause, .. } => cause.get(),
            _ => None,
        }
    }

    /// Pi's `type` string, for example `"text_delta"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::TextStart { .. } => "text_start",
            Self::TextDelta { .. } => "text_delta",
            Self::TextEnd { .. } => "text_end",
            Self::ThinkingStart { .. } => "thinking_start",
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::ThinkingEnd { .. } => "thinking_end",
            Self::ToolCallStart { .. } => "toolcall_start",
            Self::ToolCallDelta { .. } => "toolcall_delta",
            Self::ToolCallEnd { .. } => "toolcall_end",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }

    /// The block this event is about, for block events.
    pub fn content_index(&self) -> Option<usize> {
        match self {
            Self::TextStart { content_index, .. }
            | Self::TextDelta { content_index, .. }
            | Self::TextEnd { content_index, .. }
            | Self::ThinkingStart { content_index, .. }
            | Self::ThinkingDelta { content_index, .. }
            | Self::ThinkingEnd { content_index, .. }
            | Self::ToolCallStart { content_index, .. }
            | Self::ToolCallDelta { content_index, .. }
            | Self::ToolCallEnd { content_index, .. } => Some(*content_index),
            Self::Start { .. } | Self::Done { .. } | Self::Error { .. } => None,
        }
    }

    /// The message so far, for every event but `done` and `error`.
    pub fn partial(&self) -> Option<&PartialMessage> {
        match self {
            Self::Start { partial }
            | Self::TextStart { partial, .. }
            | Self::TextDelta { partial, .. }
            | Self::TextEnd { partial, .. }
            | Self::ThinkingStart { partial, .. }
            | Self::ThinkingDelta { partial, .. }
            | Self::ThinkingEnd { partial, .. }
            | Self::ToolCallStart { partial, .. }
            | Self::ToolCallDelta { partial, .. }
            | Self::ToolCallEnd { partial, .. } => Some(partial),
            Self::Done { .. } | Self::Error { .. } => None,
        }
    }

    /// The delta text of a `*_delta` event.
    pub fn delta(&self) -> Option<&str> {
        match self {
            Self::TextDelta { delta, .. }
            | Self::ThinkingDelta { delta, .. }
            | Self::ToolCallDelta { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// The final message of a terminal event (`done` or `error`).
    pub fn terminal_message(&self) -> Option<&AssistantMessage> {
        self.shared_terminal_message().map(|message| &**message)
    }

    /// [`terminal_message`](Self::terminal_message) as the event holds it:
    /// cloning the `Arc` shares the message without a copy.
    pub fn shared_terminal_message(&self) -> Option<&Arc<AssistantMessage>> {
        match self {
            Self::Done { message, .. } => Some(message),
            Self::Error { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether this is `done` or `error`.
    pub fn is_terminal(&self) -> bool {
        self.terminal_message().is_some()
    }
}

impl fmt::Debug for ModelEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct(self.type_name());
        if let Some(index) = self.content_index() {
            s.field("content_index", &index);
        }
        match self {
            Self::TextDelta { delta, .. }
            | Self::ThinkingDelta { delta, .. }
            | Self::ToolCallDelta { delta, .. } => {
                s.field("delta", delta);
            }
            Self::TextEnd { content, .. } | Self::ThinkingEnd { content, .. } => {
                s.field("content", content);
            }
            Self::ToolCallEnd { tool_call, .. } => {
                s.field("tool_call", tool_call);
            }
            Self::Done { reason, message } => {
                s.field("reason", reason).field("message", message);
            }
            Self::Error { reason, error, .. } => {
                s.field("reason", reason).field("error", error);
            }
            _ => {}
        }
        if let Some(partial) = self.partial() {
            s.field("partial", partial);
        }
        s.finish()
    }
}

impl serde::Serialize for ModelEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.write(serializer, true)
    }
}

/// A [`ModelEvent`] serialized without its `partial`: see
/// [`ModelEvent::without_partial`].
#[derive(Debug, Clone, Copy)]
pub struct WithoutPartial<'a>(&'a ModelEvent);

impl serde::Serialize for WithoutPartial<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.write(serializer, false)
    }
}

impl ModelEvent {
    /// The event as JSON without its `partial` (the message formed so far,
    /// which Pi's shape repeats in every event): the compact shape, whose
    /// size is linear in the answer. The terminal events keep their
    /// complete `message` or `error`.
    ///
    /// ```
    /// use agentstream::message::{assistant, StopReason, TextContent};
    /// use agentstream::model::{ModelEvent, PartialBuilder};
    ///
    /// let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
    /// let index = builder.start_text(TextContent::default());
    /// builder.append(index, "Hi".into());
    /// let event = ModelEvent::TextDelta {
    ///     content_index: index,
    ///     delta: "Hi".into(),
    ///     partial: builder.snapshot(),
    /// };
    /// let compact = serde_json::to_string(&event.without_partial()).unwrap();
    /// assert_eq!(compact, r#"{"type":"text_delta","contentIndex":0,"delta":"Hi"}"#);
    /// assert!(serde_json::to_string(&event).unwrap().contains(r#""partial":"#));
    /// ```
    pub fn without_partial(&self) -> WithoutPartial<'_> {
        WithoutPartial(self)
    }

    /// Writes the event, with its `partial` when `with_partial`.
    fn write<S: serde::Serializer>(
        &self,
        serializer: S,
        with_partial: bool,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.type_name())?;
        if let Some(index) = self.content_index() {
            map.serialize_entry("contentIndex", &index)?;
        }
        match self {
            Self::TextDelta { delta, .. }
            | Self::ThinkingDelta { delta, .. }
            | Self::ToolCallDelta { delta, .. } => map.serialize_entry("delta", &**delta)?,
            Self::TextEnd { content, .. } | Self::ThinkingEnd { content, .. } => {
                map.serialize_entry("content", content)?
            }
            Self::ToolCallEnd { tool_call, .. } => map.serialize_entry("toolCall", &**tool_call)?,
            Self::Done { reason, message } => {
                map.serialize_entry("reason", reason.as_str())?;
                map.serialize_entry("message", &**message)?;
            }
            Self::Error { reason, error, .. } => {
                map.serialize_entry("reason", reason.as_str())?;
                map.serialize_entry("error", &**error)?;
            }
            _ => {}
        }
        if let Some(partial) = self.partial().filter(|_| with_partial) {
            map.serialize_entry("partial", partial)?;
        }
        map.end()
    }
}
