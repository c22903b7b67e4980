//! [`Projection`], what a provider knows (its payloads, read one SSE event
//! at a time), and [`Projector`], the one type that owns the [`Frame`]
//! and gives every provider the same outside: the constructors, the
//! limits, prices and timestamp, the terminal verbs (`abort`, `interrupt`,
//! `fail`) and the [`SseProjector`] implementation an [`SseStream`]
//! drives.
//!
//! [`SseStream`]: super::SseStream

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::{assistant, AssistantMessage, StopReason};
use agentstream::model::{ErrorCause, ErrorReason, ModelEvent, ABORTED_MESSAGE};

use super::{Frame, Framing, SseEvent, SseProjector};
use crate::cause::Failure;
use crate::limits::Limits;
use crate::pricing::Pricing;

/// A provider's reading of its stream: its SSE events to the event
/// protocol, over the [`Frame`] its [`Projector`] lends it. The frame
/// holds the message being built and the lifecycle (`start`, the one
/// terminal event, limits, prices, timestamp); the projection holds what
/// only its wire format knows (which block is open, the usage it read,
/// the stop reason) and writes the content events itself.
///
/// The projector calls [`on_event`](Self::on_event) (or
/// [`on_data`](Self::on_data)) and [`on_end`](Self::on_end) only while
/// the frame has not finished, and [`settle`](Self::settle) when the
/// message ends in `error` (a failure, an abort, a timeout).
///
/// A protocol whose events carry text to append, and `end` to finish:
///
/// ```
/// use std::sync::Arc;
///
/// use agentstream::message::{AssistantMessage, StopReason, TextContent};
/// use agentstream::model::{validate_events, DoneReason, ErrorReason, ModelEvent};
/// use agentstream_wire::sse::{Frame, Projection, Projector, SseEvent};
///
/// #[derive(Debug, Default)]
/// struct Lines {
///     /// The text block, once open.
///     open: Option<usize>,
/// }
///
/// impl Projection for Lines {
///     const API: &'static str = "lines";
///
///     fn for_header(_header: &AssistantMessage) -> Self {
///         Self::default()
///     }
///
///     fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
///         frame.start(out);
///         if event.event_type() == "end" {
///             let mut message = frame.builder().snapshot().to_message();
///             message.stop_reason = StopReason::Stop;
///             return frame.end_done(DoneReason::Stop, message, out);
///         }
///         let content_index = match self.open {
///             Some(index) => index,
///             None => {
///                 let index = frame.builder_mut().start_text(TextContent::default());
///                 let partial = frame.builder().snapshot();
///                 out.push(ModelEvent::TextStart { content_index: index, partial });
///                 *self.open.insert(index)
///             }
///         };
///         let delta: Arc<str> = event.data.as_str().into();
///         frame.builder_mut().append(content_index, delta.clone());
///         let partial = frame.builder().snapshot();
///         out.push(ModelEvent::TextDelta { content_index, delta, partial });
///     }
///
///     fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
///         let text = "the stream ended before `end`".into();
///         frame.terminate(ErrorReason::Error, text, None, |_, _| {}, out);
///     }
/// }
///
/// let mut projector = Projector::<Lines>::new("m", "p");
/// let mut out = Vec::new();
/// projector.push_event(&SseEvent::message("Hel"), &mut out);
/// projector.push_event(&SseEvent::message("lo"), &mut out);
/// projector.finish(&mut out);
/// assert!(validate_events(&out).is_empty());
/// assert_eq!(out.last().unwrap().terminal_message().unwrap().text(), "Hello");
/// assert!(projector.is_finished());
/// ```
pub trait Projection {
    /// The `api` the messages record: Pi's name of the protocol.
    const API: &'static str;

    /// How the response body is cut into events: SSE unless the
    /// protocol says otherwise (Bedrock's event-stream messages).
    fn framing() -> Framing
    where
        Self: Sized,
    {
        Framing::Sse
    }

    /// The header of the messages of `model` from `provider`: `api`
    /// [`API`](Self::API), timestamp 0, no content.
    fn header(model: String, provider: String) -> AssistantMessage
    where
        Self: Sized,
    {
        AssistantMessage {
            api: Self::API.into(),
            provider,
            model,
            ..assistant([], StopReason::Stop)
        }
    }

    /// The projection of one response whose messages start from
    /// `header`.
    fn for_header(header: &AssistantMessage) -> Self
    where
        Self: Sized;

    /// Reads one SSE event: the one input verb.
    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>);

    /// Reads the `data` of one SSE event whose type does not matter to the
    /// protocol. Default: [`on_event`](Self::on_event) of a `message`
    /// event with `data` (a copy); a protocol that reads only the data
    /// implements this and has `on_event` call it.
    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        self.on_event(frame, &SseEvent::message(data), out);
    }

    /// The body ended: ends in `done`, or in `error` for a truncated one.
    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>);

    /// Adds what the projection knows to the message of an `error`: its
    /// open block as far as it got, its usage (priced with
    /// [`Frame::price`]). Default: nothing.
    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        let _ = (frame, message);
    }
}

/// The crate's way for a projection to end in `error` with a failure it
/// found in a payload: [`Frame::terminate`] with the projection's
/// [`settle`](Projection::settle).
pub(crate) trait Fail: Projection {
    fn fail(&mut self, frame: &mut Frame, failure: Failure, out: &mut Vec<ModelEvent>) {
        frame.fail_with(failure, |frame, message| self.settle(frame, message), out);
    }
}

impl<P: Projection> Fail for P {}

/// A provider's projector: the [`Frame`] and the provider's
/// [`Projection`] `P` joined, with the methods every provider shares and
/// the [`SseProjector`] implementation. The provider projectors are this
/// type: [`OpenAiProjector`](crate::openai::OpenAiProjector),
/// [`AnthropicProjector`](crate::anthropic::AnthropicProjector),
/// [`ResponsesProjector`](crate::responses::ResponsesProjector),
/// [`GeminiProjector`](crate::gemini::GeminiProjector). See
/// [`Projection`] for a new one.
#[derive(Debug)]
pub struct Projector<P> {
    frame: Frame,
    projection: P,
}

impl<P: Projection> Projector<P> {
    /// A projector for messages of `model` from `provider`, with the
    /// protocol's [`header`](Projection::header) (its `api`, timestamp 0).
    pub fn new(model: impl Into<String>, provider: impl Into<String>) -> Self {
        Self::with_header(P::header(model.into(), provider.into()))
    }

    /// A projector whose messages start from `header` (its content is
    /// ignored; its usage and stop reason are replaced at the end).
    pub fn with_header(header: AssistantMessage) -> Self {
        Self {
            projection: P::for_header(&header),
            frame: Frame::new(header),
        }
    }

    /// The frame: the message so far and its lifecycle.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The provider's projection.
    pub fn projection(&self) -> &P {
        &self.projection
    }

    /// Handles one decoded SSE event; nothing once finished.
    pub fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        if !self.frame.is_finished() {
            self.projection.on_event(&mut self.frame, event, out);
        }
    }

    /// Handles the `data` of one SSE event (see
    /// [`Projection::on_data`]); nothing once finished.
    pub fn push_data(&mut self, data: &str, out: &mut Vec<ModelEvent>) {
        if !self.frame.is_finished() {
            self.projection.on_data(&mut self.frame, data, out);
        }
    }

    /// The body ended: the message ends in `done`, or in `error` when the
    /// response is truncated; nothing once finished.
    pub fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.frame.is_finished() {
            self.projection.on_end(&mut self.frame, out);
        }
    }

    /// Sets the limits on content blocks, tool calls and argument text
    /// (see [`Limits`]); a message past one ends in `error` naming it,
    /// with what came before kept. Default: [`Limits::DEFAULT`].
    pub fn set_limits(&mut self, limits: Limits) {
        self.frame.set_limits(limits);
    }

    /// Sets the prices that fill `usage.cost` of the final message (see
    /// [`Pricing`]). Without them the costs stay 0.
    pub fn set_pricing(&mut self, pricing: Option<Pricing>) {
        self.frame.set_pricing(pricing);
    }

    /// Sets the timestamp (Unix milliseconds) of the messages. Only has
    /// an effect before `start`.
    pub fn set_timestamp(&mut self, timestamp_ms: u64) {
        self.frame.set_timestamp(timestamp_ms);
    }

    /// Whether a terminal event was produced; later input is ignored.
    pub fn is_finished(&self) -> bool {
        self.frame.is_finished()
    }

    /// Whether `start` was produced.
    pub fn is_started(&self) -> bool {
        self.frame.is_started()
    }

    /// The typed cause the terminal `error` carries (see
    /// [`Frame::error_cause`]): `None` before, after `done`, and for
    /// [`fail`](Self::fail) and [`interrupt`](Self::interrupt), whose
    /// caller knows the cause.
    pub fn error_cause(&self) -> Option<ErrorCause> {
        self.frame.error_cause()
    }

    /// Ends in `error` with `reason`, `text` as its `errorMessage` and
    /// `cause` on the event, unless already ended: the message so far,
    /// completed by the projection's [`settle`](Projection::settle), is
    /// the event's message.
    pub fn terminate(
        &mut self,
        reason: ErrorReason,
        text: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        let Self { frame, projection } = self;
        let settle = |frame: &Frame, message: &mut AssistantMessage| {
            projection.settle(frame, message);
        };
        frame.terminate(reason, text, cause, settle, out);
    }

    /// Ends the stream in `error` with reason `aborted`,
    /// [`ABORTED_MESSAGE`] and the cause [`Aborted`](ErrorCause::Aborted).
    pub fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        let cause = Some(ErrorCause::Aborted);
        self.terminate(ErrorReason::Aborted, ABORTED_MESSAGE.into(), cause, out);
    }

    /// Ends the stream in `error` with reason `aborted` and `message`:
    /// the call was cut short by something other than the caller's
    /// signal, such as a timeout, and `message` says what.
    pub fn interrupt(&mut self, message: impl Into<String>, out: &mut Vec<ModelEvent>) {
        self.terminate(ErrorReason::Aborted, message.into(), None, out);
    }

    /// Ends the stream in `error` with `message`, for failures found
    /// outside the payloads (an HTTP status, a broken connection), unless
    /// it already ended. The event carries no cause: the caller knows it
    /// (see
    /// [`ModelEvent::attach_cause`](agentstream::model::ModelEvent::attach_cause)).
    pub fn fail(&mut self, message: impl Into<String>, out: &mut Vec<ModelEvent>) {
        self.terminate(ErrorReason::Error, message.into(), None, out);
    }
}

impl<P: Projection> SseProjector for Projector<P> {
    fn framing() -> Framing {
        P::framing()
    }

    fn for_model(model_id: String, provider: String) -> Self {
        Self::new(model_id, provider)
    }

    fn from_header(header: AssistantMessage) -> Self {
        Self::with_header(header)
    }

    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        Projector::push_event(self, event, out);
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        Projector::finish(self, out);
    }

    fn terminate(
        &mut self,
        reason: ErrorReason,
        message: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        Projector::terminate(self, reason, message, cause, out);
    }

    fn is_finished(&self) -> bool {
        Projector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        Projector::set_limits(self, limits);
    }

    fn set_pricing(&mut self, pricing: Option<Pricing>) {
        Projector::set_pricing(self, pricing);
    }

    fn set_timestamp(&mut self, timestamp_ms: u64) {
        Projector::set_timestamp(self, timestamp_ms);
    }
}
