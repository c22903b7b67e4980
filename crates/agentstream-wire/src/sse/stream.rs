//! [`SseStream`]: the part of a streamed response every SSE protocol
//! shares (the SSE decoder, the response-size limit, the abort check, a
//! body that is not an event stream, the HTTP error message), over a
//! provider's [`SseProjector`]. [`OpenAiStream`](crate::openai::OpenAiStream)
//! and [`AnthropicStream`](crate::anthropic::AnthropicStream) are this type
//! over their projectors.

use alloc::format;
use alloc::string::String;
use alloc::vec::{Drain, Vec};

use agentstream::message::AssistantMessage;
use agentstream::model::{AbortSignal, ErrorCause, ErrorReason, ModelEvent, ABORTED_MESSAGE};

use super::{BodyDecoder, Framing, SseEvent};
use crate::cause::Failure;
use crate::error_body::{body_message, http_error_message};
use crate::http::ResponseStream;
use crate::limits::{Limit, LimitExceeded, Limits};
use crate::pricing::Pricing;

/// How much of a body that is not an event stream is kept to report it.
const NON_SSE_PREFIX: usize = 4096;

/// A provider's projector as the stream drives it: the payloads of its SSE
/// events to the event protocol. Implemented once, by
/// [`Projector`](super::Projector) over any [`Projection`](super::Projection);
/// a new SSE provider writes a `Projection` and gets the rest.
pub trait SseProjector {
    /// How the body is cut into events (see [`Framing`]).
    fn framing() -> Framing
    where
        Self: Sized,
    {
        Framing::Sse
    }
    /// A projector for a response of `model_id` from `provider`, whose
    /// messages have timestamp 0.
    fn for_model(model_id: String, provider: String) -> Self
    where
        Self: Sized;
    /// A projector whose messages start from `header`.
    fn from_header(header: AssistantMessage) -> Self
    where
        Self: Sized;
    /// Handles one decoded SSE event.
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>);
    /// The body ended.
    fn finish(&mut self, out: &mut Vec<ModelEvent>);
    /// Ends in `error` with `reason`, `message` as its `errorMessage` and
    /// `cause` on the event (see
    /// [`ModelEvent::error_cause`](agentstream::model::ModelEvent::error_cause)),
    /// unless already finished: the one terminal verb for a failure found
    /// outside the payloads (an abort, a timeout, a transport error, a
    /// limit of the stream). A failure the projector finds in a payload
    /// carries its own cause.
    fn terminate(
        &mut self,
        reason: ErrorReason,
        message: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    );
    /// Whether the terminal event was produced.
    fn is_finished(&self) -> bool;
    /// Sets the limits on blocks, calls and arguments.
    fn set_limits(&mut self, limits: Limits);
    /// Sets the prices that fill `usage.cost`.
    fn set_pricing(&mut self, pricing: Option<Pricing>);
    /// Sets the timestamp (Unix milliseconds) of the messages.
    fn set_timestamp(&mut self, timestamp_ms: u64);
}

/// One streaming SSE response, bytes in, [`ModelEvent`]s out: the SSE
/// decoder and a provider's projector `P` joined, with the response
/// limits. The provider's [`ResponseStream`], driven by
/// [`http::exchange`](crate::http::exchange).
///
/// [`exchange`](crate::http::exchange) does the following, which a caller
/// can also do by hand: on a status other than 2xx it calls
/// [`http_error`](Self::http_error) with the status, the body and the
/// `Retry-After` header; otherwise [`feed`](Self::feed) with each piece of
/// the body as it arrives, then [`finish_input`](Self::finish_input) at
/// its end; [`abort`](Self::abort) when the caller's [`AbortSignal`]
/// fires, [`interrupt`](Self::interrupt) with a message naming the timeout
/// when an idle or connect timeout passes, and [`fail`](Self::fail) for a
/// transport error.
///
/// Once [`is_finished`](Self::is_finished) is true, exactly one terminal
/// event has been returned and every later call returns nothing.
/// [`feed`](Self::feed) also checks the signal given to [`new`](Self::new)
/// before it decodes anything. Every buffer is bounded by the stream's
/// [`Limits`] ([`with_limits`](Self::with_limits); [`Limits::DEFAULT`]
/// otherwise): a response past one ends in `error` naming the limit, with
/// what was received before it kept. A 2xx body that holds no SSE event at
/// all (a plain JSON error, for example) ends in `error` quoting it.
///
/// ```
/// use agentstream::model::{validate_events, ModelEvent, ModelStream};
/// use agentstream_wire::http::push_all;
/// use agentstream_wire::openai::OpenAiStream;
/// use futures_executor::block_on;
/// use futures_util::StreamExt;
///
/// // What a producer looks like; the body pieces would come from the
/// // HTTP client.
/// let body: Vec<&'static [u8]> = vec![
///     b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He",
///     b"llo\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
///     b"data: [DONE]\n\n",
/// ];
/// let mut stream = ModelStream::driven(|mut producer| async move {
///     let mut openai = OpenAiStream::new("gpt-4o", "openai", None);
///     for piece in body {
///         if !push_all(&mut producer, openai.feed(piece)) || openai.is_finished() {
///             return;
///         }
///     }
///     push_all(&mut producer, openai.finish_input());
/// });
/// let events: Vec<ModelEvent> = block_on(stream.by_ref().collect());
/// assert!(validate_events(&events).is_empty());
/// assert_eq!(block_on(stream.result()).text(), "Hello");
/// ```
#[derive(Debug)]
pub struct SseStream<P> {
    /// The body's decoder, by the projector's [`Framing`].
    decoder: BodyDecoder,
    projector: P,
    signal: Option<AbortSignal>,
    out: Vec<ModelEvent>,
    /// The body so far while no SSE event has been seen (up to a limit).
    prefix: Option<Vec<u8>>,
    limits: Limits,
    /// Body bytes fed so far.
    received: u64,
}

impl<P: SseProjector> SseStream<P> {
    /// A stream for a response of `model_id` from `provider_name`,
    /// observing `signal`. Messages have the projector's `api` and
    /// timestamp 0 (see [`with_timestamp`](Self::with_timestamp)).
    pub fn new(
        model_id: impl Into<String>,
        provider_name: impl Into<String>,
        signal: Option<AbortSignal>,
    ) -> Self {
        Self::with_projector(P::for_model(model_id.into(), provider_name.into()), signal)
    }

    /// A stream whose messages start from `header` (see the projector's
    /// `with_header`).
    pub fn with_header(header: AssistantMessage, signal: Option<AbortSignal>) -> Self {
        Self::with_projector(P::from_header(header), signal)
    }

    /// A stream over `projector`, observing `signal`.
    pub fn with_projector(projector: P, signal: Option<AbortSignal>) -> Self {
        Self {
            decoder: BodyDecoder::new(P::framing(), Limits::DEFAULT),
            projector,
            signal,
            out: Vec::new(),
            prefix: Some(Vec::new()),
            limits: Limits::DEFAULT,
            received: 0,
        }
    }

    /// Sets the limits on this response (see [`Limits`]). Only has an
    /// effect before any input.
    ///
    /// ```
    /// use agentstream::model::ModelEvent;
    /// use agentstream_wire::limits::Limits;
    /// use agentstream_wire::openai::OpenAiStream;
    ///
    /// let limits = Limits::default().with_max_line_bytes(64);
    /// let mut stream = OpenAiStream::new("gpt-4o", "openai", None).with_limits(limits);
    /// let events: Vec<ModelEvent> = stream.feed(&[b'x'; 100]).collect();
    /// let message = events[0].terminal_message().unwrap();
    /// assert_eq!(
    ///     message.error_message.as_deref(),
    ///     Some("response limit exceeded: an SSE line is longer than max_line_bytes (64)")
    /// );
    /// assert!(stream.is_finished());
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self.decoder = BodyDecoder::new(P::framing(), limits);
        self.projector.set_limits(limits);
        self
    }

    /// Sets the prices that fill `usage.cost` of the final message (see
    /// [`Pricing`]).
    #[must_use]
    pub fn with_pricing(mut self, pricing: Option<Pricing>) -> Self {
        self.projector.set_pricing(pricing);
        self
    }

    /// Sets the timestamp (Unix milliseconds) of the messages. Only has an
    /// effect before any input.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp_ms: u64) -> Self {
        self.projector.set_timestamp(timestamp_ms);
        self
    }

    /// Whether the terminal event was returned.
    pub fn is_finished(&self) -> bool {
        self.projector.is_finished()
    }

    fn aborted(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::is_aborted)
    }

    /// Decodes the next piece of the body and returns the events it
    /// completes. Aborts first if the signal has fired.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Drain<'_, ModelEvent> {
        if self.aborted() {
            self.abort_now();
            return self.out.drain(..);
        }
        if self.projector.is_finished() {
            return self.out.drain(..);
        }
        // The part within the response limit is decoded; the rest refused.
        let room = self.limits.max_response_bytes.saturating_sub(self.received);
        let too_long = u64::try_from(bytes.len()).map_or(true, |len| len > room);
        if too_long {
            bytes = &bytes[..usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len())];
        }
        self.received = self.received.saturating_add(bytes.len() as u64);
        if let Some(prefix) = &mut self.prefix {
            let room = NON_SSE_PREFIX.saturating_sub(prefix.len());
            prefix.extend_from_slice(&bytes[..room.min(bytes.len())]);
        }
        let Self {
            decoder,
            projector,
            out,
            prefix,
            ..
        } = self;
        let decoded = decoder.feed(bytes, |event| {
            *prefix = None;
            projector.push_event(event, out);
        });
        let failure = match decoded {
            Err(failure) => Some(failure),
            Ok(()) if too_long => {
                Some(LimitExceeded::new(Limit::ResponseBytes, &self.limits).into())
            }
            Ok(()) => None,
        };
        if let Some(failure) = failure {
            self.prefix = None;
            let Failure { message, cause } = failure;
            self.projector
                .terminate(ErrorReason::Error, message, Some(cause), &mut self.out);
        }
        self.out.drain(..)
    }

    /// The body ended: returns the remaining events, ending in `done` or,
    /// for a truncated body, `error`.
    pub fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        if self.aborted() {
            self.abort_now();
            return self.out.drain(..);
        }
        let Self {
            decoder,
            projector,
            out,
            prefix,
            ..
        } = self;
        let finished = decoder.finish(|event| {
            *prefix = None;
            projector.push_event(event, out);
        });
        if let Err(Failure { message, cause }) = finished {
            self.prefix = None;
            self.projector
                .terminate(ErrorReason::Error, message, Some(cause), &mut self.out);
        }
        match self.prefix.take() {
            Some(body) if !body.iter().all(u8::is_ascii_whitespace) => {
                let message = format!(
                    "the response is not an event stream: {}",
                    body_message(&body)
                );
                self.projector.terminate(
                    ErrorReason::Error,
                    message,
                    Some(ErrorCause::Protocol),
                    &mut self.out,
                );
            }
            _ => self.projector.finish(&mut self.out),
        }
        self.out.drain(..)
    }

    /// Ends in `error(aborted)` with the signal's
    /// [`cause`](AbortSignal::cause) ([`ErrorCause::Aborted`] unless a
    /// deadline gave another).
    fn abort_now(&mut self) {
        let cause = self
            .signal
            .as_ref()
            .map_or(ErrorCause::Aborted, AbortSignal::cause);
        self.projector.terminate(
            ErrorReason::Aborted,
            ABORTED_MESSAGE.into(),
            Some(cause),
            &mut self.out,
        );
    }

    /// The caller aborted: returns the `error` event with reason `aborted`
    /// and everything received so far (nothing once finished).
    pub fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.abort_now();
        self.out.drain(..)
    }

    /// A timeout (or another interruption that is not the caller's
    /// signal): returns the `error` event with reason `aborted`, `message`
    /// as its `errorMessage`, and everything received so far.
    pub fn interrupt(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.projector
            .terminate(ErrorReason::Aborted, message.into(), None, &mut self.out);
        self.out.drain(..)
    }

    /// A transport failure (connection reset, TLS error, …): returns an
    /// `error` event with `message` and everything received so far.
    pub fn fail(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.projector
            .terminate(ErrorReason::Error, message.into(), None, &mut self.out);
        self.out.drain(..)
    }

    /// A response with a non-success `status`: returns one `error` event
    /// whose message names the status and the provider's message, taken
    /// from `body` (`{"error": {"message": …}}`, `{"message": …}`, or the
    /// start of the text), plus `retry_after` (the `Retry-After` header)
    /// when given.
    ///
    /// ```
    /// use agentstream_wire::anthropic::AnthropicStream;
    /// use agentstream_wire::openai::OpenAiStream;
    ///
    /// let mut stream = OpenAiStream::new("gpt-4o", "openai", None);
    /// let body = br#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#;
    /// let events: Vec<_> = stream.http_error(429, body, Some("20")).collect();
    /// assert_eq!(
    ///     events[0].terminal_message().unwrap().error_message.as_deref(),
    ///     Some("HTTP 429 Too Many Requests: Rate limit reached (code: rate_limit_exceeded); retry after 20")
    /// );
    ///
    /// let mut stream = AnthropicStream::new("claude-sonnet-4-5", "anthropic", None);
    /// let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    /// let events: Vec<_> = stream.http_error(529, body, Some("3")).collect();
    /// assert_eq!(
    ///     events[0].terminal_message().unwrap().error_message.as_deref(),
    ///     Some("HTTP 529 Overloaded: Overloaded (code: overloaded_error); retry after 3")
    /// );
    /// ```
    pub fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        let message = http_error_message(status, body, retry_after);
        self.projector
            .terminate(ErrorReason::Error, message, None, &mut self.out);
        self.out.drain(..)
    }
}

impl<P: SseProjector> ResponseStream for SseStream<P> {
    fn is_finished(&self) -> bool {
        SseStream::is_finished(self)
    }

    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        SseStream::feed(self, bytes)
    }

    fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        SseStream::finish_input(self)
    }

    fn abort(&mut self) -> Drain<'_, ModelEvent> {
        SseStream::abort(self)
    }

    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        SseStream::interrupt(self, message)
    }

    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        SseStream::fail(self, message)
    }

    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        SseStream::http_error(self, status, body, retry_after)
    }
}
