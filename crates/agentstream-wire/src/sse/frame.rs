//! [`Frame`]: the lifecycle of one projected message, the same for every
//! provider: the message being built, whether `start` and the terminal
//! event were produced, the limits, the prices, the timestamp, and the
//! typed cause the terminal `error` carried.
//!
//! A provider's projector reads its wire format and owns one `Frame`; the
//! frame produces `start` once, at most one terminal event (`done`, or
//! `error` with its cause on the event), and nothing after it.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use agentstream::message::{AssistantMessage, Usage};
use agentstream::model::{DoneReason, ErrorCause, ErrorReason, ModelEvent, PartialBuilder};

use crate::limits::Limits;
use crate::pricing::Pricing;

/// See the [module documentation](self).
#[derive(Debug)]
pub(crate) struct Frame {
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
    pub(crate) fn new(header: AssistantMessage) -> Self {
        Self {
            builder: PartialBuilder::new(header),
            started: false,
            finished: false,
            limits: Limits::DEFAULT,
            pricing: None,
            cause: None,
        }
    }

    /// Whether `start` was produced.
    pub(crate) fn is_started(&self) -> bool {
        self.started
    }

    /// Whether the terminal event was produced; later input is ignored.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// Sets the prices that fill `usage.cost` of the final message.
    pub(crate) fn set_pricing(&mut self, pricing: Option<Pricing>) {
        self.pricing = pricing;
    }

    /// Fills the costs of `usage` when the frame has prices.
    pub(crate) fn price(&self, usage: &mut Usage) {
        if let Some(pricing) = &self.pricing {
            pricing.apply(usage);
        }
    }

    /// Changes the message header; only before `start`.
    pub(crate) fn edit_header(&mut self, edit: impl FnOnce(&mut AssistantMessage)) {
        if !self.started {
            let mut header = self.builder.snapshot().to_message();
            edit(&mut header);
            self.builder = PartialBuilder::new(header);
        }
    }

    /// Sets the timestamp (Unix milliseconds) of the messages; only
    /// before `start`.
    pub(crate) fn set_timestamp(&mut self, timestamp_ms: u64) {
        self.edit_header(|h| h.timestamp = timestamp_ms);
    }

    /// Produces `start`, the first time only.
    pub(crate) fn start(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::Start {
                partial: self.builder.snapshot(),
            });
        }
    }

    /// The message so far as the message of an `error` with `reason` and
    /// `text` (open blocks as far as they got).
    pub(crate) fn error_message(&self, reason: ErrorReason, text: String) -> AssistantMessage {
        self.builder.to_error_message(reason.stop_reason(), text)
    }

    /// Ends in `done` with `reason` and `message`.
    pub(crate) fn end_done(
        &mut self,
        reason: DoneReason,
        message: AssistantMessage,
        out: &mut Vec<ModelEvent>,
    ) {
        self.finished = true;
        out.push(ModelEvent::done(reason, message));
    }

    /// Ends in `error` with `reason` and `message`, `cause` on the event.
    pub(crate) fn end_error(
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

    /// The cause the terminal `error` carried, if any.
    pub(crate) fn error_cause(&self) -> Option<ErrorCause> {
        self.cause.clone()
    }
}

/// The public methods every projector has over its [`Frame`], written
/// once: `set_pricing`, `set_timestamp`, `is_finished`, `is_started`,
/// `error_cause`, and the terminal verbs `abort`, `interrupt`, `fail` (and
/// the crate's `fail_with`, a failure with its cause), each a call of the
/// projector's `terminate(reason, message, cause, out)`.
/// Expanded inside the projector's `impl` block with the path to its
/// frame (`frame_verbs!(frame)`, `frame_verbs!(writer.frame)`).
macro_rules! frame_verbs {
    ($($frame:ident).+) => {
        /// Sets the prices that fill `usage.cost` of the final message (see
        /// [`Pricing`](crate::pricing::Pricing)). Without them the costs
        /// stay 0.
        pub fn set_pricing(&mut self, pricing: Option<crate::pricing::Pricing>) {
            self.$($frame).+.set_pricing(pricing);
        }

        /// Sets the timestamp (Unix milliseconds) of the messages. Only has
        /// an effect before `start`.
        pub fn set_timestamp(&mut self, timestamp_ms: u64) {
            self.$($frame).+.set_timestamp(timestamp_ms);
        }

        /// Whether a terminal event was produced; later input is ignored.
        pub fn is_finished(&self) -> bool {
            self.$($frame).+.is_finished()
        }

        /// Whether `start` was produced.
        pub fn is_started(&self) -> bool {
            self.$($frame).+.is_started()
        }

        /// The typed cause the terminal `error` carries (see
        /// [`ModelEvent::error_cause`](agentstream::model::ModelEvent::error_cause)),
        /// once the projector ended in one with a cause: a failure it found
        /// in the response (the provider's error or failing stop reason,
        /// with its code; a limit; a protocol violation) or an
        /// [`abort`](Self::abort). `None` before, after `done`, and for
        /// [`fail`](Self::fail) and [`interrupt`](Self::interrupt), whose
        /// caller knows the cause.
        pub fn error_cause(&self) -> Option<agentstream::model::ErrorCause> {
            self.$($frame).+.error_cause()
        }

        /// Ends in `error` with `reason`, `text` as its `errorMessage` and
        /// `cause` on the event, unless already ended: the message so far,
        /// completed by the projector's `settle` (its open block, its
        /// usage), is the event's message.
        pub(crate) fn terminate(
            &mut self,
            reason: agentstream::model::ErrorReason,
            text: alloc::string::String,
            cause: Option<agentstream::model::ErrorCause>,
            out: &mut alloc::vec::Vec<agentstream::model::ModelEvent>,
        ) {
            if self.$($frame).+.is_finished() {
                return;
            }
            let mut message = self.$($frame).+.error_message(reason, text);
            self.settle(&mut message);
            self.$($frame).+.end_error(reason, message, cause, out);
        }

        /// Ends the stream in `error` with reason `aborted`,
        /// [`ABORTED_MESSAGE`](agentstream::model::ABORTED_MESSAGE) and the
        /// cause [`Aborted`](agentstream::model::ErrorCause::Aborted).
        pub fn abort(&mut self, out: &mut alloc::vec::Vec<agentstream::model::ModelEvent>) {
            self.terminate(
                agentstream::model::ErrorReason::Aborted,
                agentstream::model::ABORTED_MESSAGE.into(),
                Some(agentstream::model::ErrorCause::Aborted),
                out,
            );
        }

        /// Ends the stream in `error` with reason `aborted` and `message`:
        /// the call was cut short by something other than the caller's
        /// signal, such as a timeout, and `message` says what.
        pub fn interrupt(
            &mut self,
            message: impl Into<alloc::string::String>,
            out: &mut alloc::vec::Vec<agentstream::model::ModelEvent>,
        ) {
            let reason = agentstream::model::ErrorReason::Aborted;
            self.terminate(reason, message.into(), None, out);
        }

        /// Ends the stream in `error` with `message`, for failures found
        /// outside the payloads (an HTTP status, a broken connection), unless
        /// it already ended. The event carries no cause: the caller knows it
        /// (see
        /// [`ModelEvent::attach_cause`](agentstream::model::ModelEvent::attach_cause)).
        pub fn fail(
            &mut self,
            message: impl Into<alloc::string::String>,
            out: &mut alloc::vec::Vec<agentstream::model::ModelEvent>,
        ) {
            let reason = agentstream::model::ErrorReason::Error;
            self.terminate(reason, message.into(), None, out);
        }

        /// Ends in `error` with a failure found in the payloads, its cause
        /// on the event.
        pub(crate) fn fail_with(
            &mut self,
            failure: crate::cause::Failure,
            out: &mut alloc::vec::Vec<agentstream::model::ModelEvent>,
        ) {
            let reason = agentstream::model::ErrorReason::Error;
            self.terminate(reason, failure.message, Some(failure.cause), out);
        }
    };
}
pub(crate) use frame_verbs;

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
