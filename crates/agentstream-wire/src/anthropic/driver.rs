//! [`AnthropicStream`]: the SSE decoder and the event projector joined,
//! for an HTTP adapter to feed with response bytes.

use alloc::string::String;
use alloc::vec::{Drain, Vec};

use agentstream::message::AssistantMessage;
use agentstream::model::{AbortSignal, ModelEvent};

use super::projector::EventProjector;
use crate::driver::{SseDriver, SseProjector};
use crate::http::ResponseStream;
use crate::limits::Limits;
use crate::sse::SseEvent;

/// One streaming Messages response, bytes in, [`ModelEvent`]s out: the
/// Anthropic [`ResponseStream`], driven by
/// [`http::exchange`](crate::http::exchange) like
/// [`OpenAiStream`](crate::openai::OpenAiStream), with the same rules for
/// limits, aborts, timeouts and bodies that are not event streams.
///
/// Each SSE event's data goes to the [`EventProjector`] whatever its
/// `event:` name (the payload's `type` names it). An HTTP error status
/// gives one `error` naming the status and the provider's message
/// (`{"type":"error","error":{"type":"rate_limit_error","message":…}}`
/// reads as `… (code: rate_limit_error)`) and the `Retry-After` header.
///
/// ```
/// use agentstream::model::{validate_events, ModelEvent};
/// use agentstream_wire::anthropic::AnthropicStream;
///
/// let body = concat!(
///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}}\n\n",
///     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
///     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
///     "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
///     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
///     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
/// );
/// let mut stream = AnthropicStream::new("claude-sonnet-4-5", "anthropic", None);
/// let mut events: Vec<ModelEvent> = Vec::new();
/// for piece in body.as_bytes().chunks(7) {
///     events.extend(stream.feed(piece));
/// }
/// events.extend(stream.finish_input());
/// assert!(validate_events(&events).is_empty());
/// let message = events.last().and_then(ModelEvent::terminal_message).unwrap();
/// assert_eq!((message.text().as_str(), message.usage.total_tokens), ("Hi", Some(4)));
/// ```
#[derive(Debug)]
pub struct AnthropicStream {
    inner: SseDriver<EventProjector>,
}

impl AnthropicStream {
    /// The typed cause of the terminal `error` this stream produced while
    /// decoding (a protocol violation, a limit, an error the provider sent
    /// in the stream) or of an abort it saw; `None` otherwise. See
    /// [`cause`](crate::cause).
    pub fn error_cause(&self) -> Option<agentstream::model::ErrorCause> {
        self.inner.error_cause()
    }

    /// A stream for a response of `model_id` from `provider_name`,
    /// observing `signal`. Messages have `api` `anthropic-messages` and
    /// timestamp 0 (see [`with_timestamp`](Self::with_timestamp)).
    pub fn new(
        model_id: impl Into<String>,
        provider_name: impl Into<String>,
        signal: Option<AbortSignal>,
    ) -> Self {
        Self::with_projector(EventProjector::new(model_id, provider_name), signal)
    }

    /// A stream whose messages start from `header` (see
    /// [`EventProjector::with_header`]).
    pub fn with_header(header: AssistantMessage, signal: Option<AbortSignal>) -> Self {
        Self::with_projector(EventProjector::with_header(header), signal)
    }

    fn with_projector(projector: EventProjector, signal: Option<AbortSignal>) -> Self {
        Self {
            inner: SseDriver::new(projector, signal),
        }
    }

    /// Sets the limits on this response (see [`Limits`]). Only has an
    /// effect before any input.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.inner.set_limits(limits);
        self
    }

    /// Sets the prices that fill `usage.cost` of the final message (see
    /// [`Pricing`](crate::pricing::Pricing)).
    #[must_use]
    pub fn with_pricing(mut self, pricing: Option<crate::pricing::Pricing>) -> Self {
        self.inner.projector.set_pricing(pricing);
        self
    }

    /// Sets the timestamp (Unix milliseconds) of the messages. Only has an
    /// effect before any input.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp_ms: u64) -> Self {
        self.inner.projector.set_timestamp(timestamp_ms);
        self
    }

    /// Whether the terminal event was returned.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Decodes the next piece of the body and returns the events it
    /// completes. Aborts first if the signal has fired.
    pub fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        self.inner.feed(bytes)
    }

    /// The body ended: the remaining events, ending in `done` or, for a
    /// truncated body, `error`.
    pub fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        self.inner.finish_input()
    }

    /// The caller aborted: the `error` event with reason `aborted`.
    pub fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.inner.abort()
    }

    /// A timeout: the `error` event with reason `aborted` and `message`.
    pub fn interrupt(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.inner.interrupt(message.into())
    }

    /// A transport failure: an `error` event with `message`.
    pub fn fail(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.inner.fail(message.into())
    }

    /// A response with a non-success `status`: one `error` event naming
    /// the status, the provider's message and `retry_after`.
    ///
    /// ```
    /// use agentstream_wire::anthropic::AnthropicStream;
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
        self.inner.http_error(status, body, retry_after)
    }
}

impl ResponseStream for AnthropicStream {
    fn is_finished(&self) -> bool {
        AnthropicStream::is_finished(self)
    }

    fn error_cause(&self) -> Option<agentstream::model::ErrorCause> {
        self.inner.error_cause()
    }

    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        AnthropicStream::feed(self, bytes)
    }

    fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        AnthropicStream::finish_input(self)
    }

    fn abort(&mut self) -> Drain<'_, ModelEvent> {
        AnthropicStream::abort(self)
    }

    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        AnthropicStream::interrupt(self, message)
    }

    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        AnthropicStream::fail(self, message)
    }

    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        AnthropicStream::http_error(self, status, body, retry_after)
    }
}

impl SseProjector for EventProjector {
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.push_data(&event.data, out);
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        EventProjector::finish(self, out);
    }

    fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        EventProjector::abort(self, out);
    }

    fn interrupt(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        EventProjector::interrupt(self, message, out);
    }

    fn fail(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        EventProjector::fail(self, message, out);
    }

    fn is_finished(&self) -> bool {
        EventProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        EventProjector::set_limits(self, limits);
    }
}
