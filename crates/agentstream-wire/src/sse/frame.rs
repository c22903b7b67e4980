//! [`Frame`]: the lifecycle of one projected message, the same for every
//! provider: the message being built, whether `start` and the terminal
//! event were produced, the limits, the prices, the timestamp, and the
//! typed cause the terminal `error` carried.
//!
//! A [`Projector`](super::Projector) owns one `Frame` and lends it to its
//! provider's [`Projection`](super::Projection) with every input; the
//! frame produces `start` once, at most one terminal event (`done`, or
//! `error` with its cause on the event), and nothing after it.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{AssistantMessage, ToolCall, Usage};
use agentstream::model::{DoneReason, ErrorCause, ErrorReason, ModelEvent, PartialBuilder};

use crate::cause::Failure;
use crate::limits::Limits;
use crate::pricing::Pricing;

/// The lifecycle of one projected message, the same for every provider:
/// the message being built, whether `start` and the terminal event were
/// produced, the limits, the prices, the timestamp, and the typed cause
/// the terminal `error` carried. A [`Projector`](super::Projector) owns
/// one and lends it to its [`Projection`](super::Projection) (which shows
/// one in use) with every input; the frame produces `start` once, at most
/// one terminal event (`done`, or `error` with its cause on the event),
/// and nothing after it.
///
/// ```
/// use agentstream::message::{assistant, StopReason};
/// use agentstream::model::{DoneReason, ErrorReason, ModelEvent};
/// use agentstream_wire::sse::Frame;
///
/// let mut frame = Frame::new(assistant([], StopReason::Stop));
/// let mut out = Vec::new();
/// frame.start(&mut out);
/// frame.start(&mut out); // `start` is produced once
/// let message = frame.builder().snapshot().to_message();
/// frame.end_done(DoneReason::Stop, message, &mut out);
/// // Nothing after the terminal event.
/// frame.terminate(ErrorReason::Error, "late".into(), None, |_, _| {}, &mut out);
/// let types: Vec<&str> = out.iter().map(ModelEvent::type_name).collect();
/// assert_eq!(types, ["start", "done"]);
/// assert!(frame.is_finished());
/// ```
#[derive(Debug)]
pub struct Frame {
    /// The message so far.
    pub(crate) builder: PartialBuilder,
    started: bool,
    finished: bool,
    /// The limits on blocks, calls and argument text.
    pub(crate) limits: Limits,
    pricing: Option<Pricing>,
    /// The cause the terminal `error` carried, once there was one.
    cause: Option<ErrorCause>,
}

impl Frame {
    /// A frame whose messages start from `header`, with [`Limits::DEFAULT`].
    pub fn new(header: AssistantMessage) -> Self {
        Self {
            builder: PartialBuilder::new(header),
            started: false,
            finished: false,
            limits: Limits::DEFAULT,
            pricing: None,
            cause: None,
        }
    }

    /// The message so far.
    pub fn builder(&self) -> &PartialBuilder {
        &self.builder
    }

    /// The message so far, to add content to: a projection opens,
    /// appends to and completes blocks here (see [`PartialBuilder`]) and
    /// pushes the matching events.
    pub fn builder_mut(&mut self) -> &mut PartialBuilder {
        &mut self.builder
    }

    /// The limits on blocks, calls and argument text.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Sets the limits on blocks, calls and argument text (see
    /// [`Limits`]). Default: [`Limits::DEFAULT`].
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Whether `start` was produced.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Whether the terminal event was produced; later input is ignored.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Sets the prices that fill `usage.cost` of the final message (see
    /// [`Pricing`]); the projection applies them with
    /// [`price`](Self::price). Without them the costs stay 0.
    pub fn set_pricing(&mut self, pricing: Option<Pricing>) {
        self.pricing = pricing;
    }

    /// Fills the costs of `usage` when the frame has prices (see
    /// [`set_pricing`](Self::set_pricing)).
    pub fn price(&self, usage: &mut Usage) {
        if let Some(pricing) = &self.pricing {
            pricing.apply(usage);
        }
    }

    /// Changes the message header (its `extra` fields, say); only before
    /// `start`.
    pub fn edit_header(&mut self, edit: impl FnOnce(&mut AssistantMessage)) {
        if !self.started {
            let mut header = self.builder.snapshot().to_message();
            edit(&mut header);
            self.builder = PartialBuilder::new(header);
        }
    }

    /// Sets the timestamp (Unix milliseconds) of the messages; only
    /// before `start`.
    pub fn set_timestamp(&mut self, timestamp_ms: u64) {
        self.edit_header(|h| h.timestamp = timestamp_ms);
    }

    /// Completes tool call block `index` with `call` (its parsed
    /// arguments) and produces its `toolcall_end`.
    pub fn end_tool_call(&mut self, index: usize, call: ToolCall, out: &mut Vec<ModelEvent>) {
        let call = Arc::new(call);
        self.builder.complete_tool_call(index, call.clone());
        out.push(ModelEvent::ToolCallEnd {
            content_index: index,
            tool_call: call,
            partial: self.builder.snapshot(),
        });
    }

    /// Produces `start`, the first time only.
    pub fn start(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::Start {
                partial: self.builder.snapshot(),
            });
        }
    }

    /// The message so far as the message of an `error` with `reason` and
    /// `text` (open blocks as far as they got); what
    /// [`terminate`](Self::terminate) starts from.
    pub fn error_message(&self, reason: ErrorReason, text: String) -> AssistantMessage {
        self.builder.to_error_message(reason.stop_reason(), text)
    }

    /// Ends in `done` with `reason` and `message` (the projection's final
    /// message, usually [`builder`](Self::builder)'s snapshot with its
    /// stop reason and usage set).
    pub fn end_done(
        &mut self,
        reason: DoneReason,
        message: AssistantMessage,
        out: &mut Vec<ModelEvent>,
    ) {
        self.finished = true;
        out.push(ModelEvent::done(reason, message));
    }

    /// Ends in `error` with `reason` and `message`, `cause` on the event
    /// (see [`ModelEvent::error_cause`]).
    pub fn end_error(
        &mut self,
        reason: ErrorReason,
        message: AssistantMessage,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        self.finished = true;
        self.cause.clone_from(&cause);
        out.push(ModelEvent::Error {
            reason,
            error: Arc::new(message),
            cause: cause.into(),
        });
    }

    /// Ends in `error` with `reason`, `text` as its `errorMessage` and
    /// `cause` on the event, unless already ended: the message so far
    /// (open blocks as far as they got), completed by `settle` (what the
    /// projection adds: its open block, its usage), is the event's message.
    pub fn terminate(
        &mut self,
        reason: ErrorReason,
        text: String,
        cause: Option<ErrorCause>,
        settle: impl FnOnce(&Self, &mut AssistantMessage),
        out: &mut Vec<ModelEvent>,
    ) {
        if self.finished {
            return;
        }
        let mut message = self.error_message(reason, text);
        settle(self, &mut message);
        self.end_error(reason, message, cause, out);
    }

    /// Ends in `error` with a failure found in the payloads, its cause on
    /// the event (see [`terminate`](Self::terminate)).
    pub(crate) fn fail_with(
        &mut self,
        failure: Failure,
        settle: impl FnOnce(&Self, &mut AssistantMessage),
        out: &mut Vec<ModelEvent>,
    ) {
        let reason = ErrorReason::Error;
        self.terminate(reason, failure.message, Some(failure.cause), settle, out);
    }

    /// The typed cause the terminal `error` carries (see
    /// [`ModelEvent::error_cause`]), once the frame ended in one with a
    /// cause: a failure found in the response (the provider's error or
    /// failing stop reason, with its code; a limit; a protocol violation)
    /// or an abort. `None` before, after `done`, and for a failure whose
    /// caller knows the cause (a transport error, an interruption).
    pub fn error_cause(&self) -> Option<ErrorCause> {
        self.cause.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::{assistant, StopReason};

    #[test]
    fn one_start_one_terminal_event_with_its_cause() {
        let mut frame = Frame::new(assistant([], StopReason::Stop));
        let mut out = Vec::new();
        frame.set_timestamp(7);
        frame.start(&mut out);
        frame.start(&mut out);
        frame.set_timestamp(9);
        assert_eq!(out.len(), 1);
        assert!(frame.is_started() && !frame.is_finished());
        let message = frame.error_message(ErrorReason::Error, "boom".into());
        assert_eq!(message.timestamp, 7);
        frame.end_error(
            ErrorReason::Error,
            message,
            Some(ErrorCause::Protocol),
            &mut out,
        );
        assert!(frame.is_finished());
        assert!(matches!(out[1].error_cause(), Some(ErrorCause::Protocol)));
        assert!(matches!(frame.error_cause(), Some(ErrorCause::Protocol)));
    }
}
