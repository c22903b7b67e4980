//! [`OpenAiStream`]: the SSE decoder and the chunk projector joined, for an
//! HTTP adapter to feed with response bytes.

use alloc::string::String;
use alloc::vec::{Drain, Vec};

use serde_json::Value;

use agentstream::message::AssistantMessage;
use agentstream::model::{AbortSignal, AssistantMessageProducer, ModelEvent};

use super::projector::ChunkProjector;
use super::wire::{clip, error_text};
use crate::driver::{SseDriver, SseProjector, BODY_QUOTE};
use crate::http::{self, ResponseStream};
use crate::limits::Limits;
use crate::sse::SseEvent;

/// One streaming Chat Completions response, bytes in, [`ModelEvent`]s out.
///
/// This is everything an HTTP adapter needs besides the HTTP itself. It is
/// the OpenAI [`ResponseStream`]: [`http::exchange`](crate::http::exchange)
/// does the following for an adapter, which can also do it by hand:
///
/// 1. builds the request body with
///    [`build_request`](super::build_request) and sends it;
/// 2. on a status other than 2xx, calls [`http_error`](Self::http_error)
///    with the status, the body and the `Retry-After` header, and pushes
///    the one resulting event;
/// 3. otherwise calls [`feed`](Self::feed) with each piece of the body as
///    it arrives and pushes the events it returns, then
///    [`finish_input`](Self::finish_input) at the end of the body;
/// 4. calls [`abort`](Self::abort) when the caller's [`AbortSignal`] fires
///    while it waits for bytes (and stops reading),
///    [`interrupt`](Self::interrupt) with a message naming the timeout
///    when an idle or connect timeout passes, and [`fail`](Self::fail) for
///    a transport error.
///
/// Once [`is_finished`](Self::is_finished) is true, exactly one terminal
/// event has been returned and every later call returns nothing, so the
/// adapter may stop reading. [`feed`](Self::feed) also checks the signal
/// given to [`new`](Self::new) before it decodes anything.
///
/// Every buffer is bounded by the stream's [`Limits`]
/// ([`with_limits`](Self::with_limits); [`Limits::DEFAULT`] otherwise): a
/// response past one ends in `error` naming the limit, with what was
/// received before it kept, and is finished, so the adapter stops reading.
///
/// `event: error` SSE events are reported as errors with their data; other
/// named events (such as `ping`) are skipped. A 2xx body that holds no SSE
/// event at all (a plain JSON error, for example) ends in `error` quoting it.
///
/// ```
/// use agentstream::model::{validate_events, ModelEvent, ModelStream};
/// use agentstream_wire::openai::OpenAiStream;
/// use futures_executor::block_on;
/// use futures_util::StreamExt;
///
/// // What an adapter's producer looks like; the body pieces would come
/// // from the HTTP client.
/// let body: Vec<&'static [u8]> = vec![
///     b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He",
///     b"llo\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
///     b"data: [DONE]\n\n",
/// ];
/// let mut stream = ModelStream::driven(|mut producer| async move {
///     let mut openai = OpenAiStream::new("gpt-4o", "openai", None);
///     for piece in body {
///         if !OpenAiStream::push_all(&mut producer, openai.feed(piece)) || openai.is_finished() {
///             return;
///         }
///     }
///     OpenAiStream::push_all(&mut producer, openai.finish_input());
/// });
/// let events: Vec<ModelEvent> = block_on(stream.by_ref().collect());
/// assert!(validate_events(&events).is_empty());
/// assert_eq!(block_on(stream.result()).text(), "Hello");
/// ```
#[derive(Debug)]
pub struct OpenAiStream {
    inner: SseDriver<ChunkProjector>,
}

impl OpenAiStream {
    /// The typed cause of the terminal `error` this stream produced while
    /// decoding (a protocol violation, a limit, an error the provider sent
    /// in the stream) or of an abort it saw; `None` otherwise. See
    /// [`cause`](crate::cause).
    pub fn error_cause(&self) -> Option<agentstream::model::ErrorCause> {
        self.inner.error_cause()
    }

    /// A stream for a response of `model_id` from `provider_name`, observing
    /// `signal`. Messages have `api` `openai-completions` and timestamp 0
    /// (see [`with_timestamp`](Self::with_timestamp)).
    pub fn new(
        model_id: impl Into<String>,
        provider_name: impl Into<String>,
        signal: Option<AbortSignal>,
    ) -> Self {
        Self::with_projector(ChunkProjector::new(model_id, provider_name), signal)
    }

    /// A stream whose messages start from `header` (see
    /// [`ChunkProjector::with_header`]).
    pub fn with_header(header: AssistantMessage, signal: Option<AbortSignal>) -> Self {
        Self::with_projector(ChunkProjector::with_header(header), signal)
    }

    fn with_projector(projector: ChunkProjector, signal: Option<AbortSignal>) -> Self {
        Self {
            inner: SseDriver::new(projector, signal),
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

    /// The body ended: returns the remaining events, ending in `done` or,
    /// for a truncated body, `error`.
    pub fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        self.inner.finish_input()
    }

    /// The caller aborted: returns the `error` event with reason `aborted`
    /// and everything received so far (nothing once finished).
    pub fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.inner.abort()
    }

    /// A timeout (or another interruption that is not the caller's
    /// signal): returns the `error` event with reason `aborted`, `message`
    /// as its `errorMessage`, and everything received so far.
    pub fn interrupt(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.inner.interrupt(message.into())
    }

    /// A transport failure (connection reset, TLS error, …): returns an
    /// `error` event with `message` and everything received so far.
    pub fn fail(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.inner.fail(message.into())
    }

    /// A response with a non-success `status`: returns one `error` event
    /// whose message names the status and the provider's message, taken
    /// from `body` (`{"error": {"message": …}}`, `{"message": …}`, or the
    /// start of the text), plus `retry_after` (the `Retry-After` header)
    /// when given.
    ///
    /// ```
    /// use agentstream_wire::openai::OpenAiStream;
    ///
    /// let mut stream = OpenAiStream::new("gpt-4o", "openai", None);
    /// let body = br#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#;
    /// let events: Vec<_> = stream.http_error(429, body, Some("20")).collect();
    /// let message = events[0].terminal_message().unwrap();
    /// assert_eq!(
    ///     message.error_message.as_deref(),
    ///     Some("HTTP 429 Too Many Requests: Rate limit reached (code: rate_limit_exceeded); retry after 20")
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

    /// Pushes `events` into `producer`; `false` when the producer refused
    /// one (the stream ended or nobody listens any more), so the adapter
    /// can stop. The same as [`http::push_all`].
    pub fn push_all(
        producer: &mut AssistantMessageProducer,
        events: impl IntoIterator<Item = ModelEvent>,
    ) -> bool {
        http::push_all(producer, events)
    }
}

impl ResponseStream for OpenAiStream {
    fn is_finished(&self) -> bool {
        OpenAiStream::is_finished(self)
    }

    fn error_cause(&self) -> Option<agentstream::model::ErrorCause> {
        self.inner.error_cause()
    }

    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        OpenAiStream::feed(self, bytes)
    }

    fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        OpenAiStream::finish_input(self)
    }

    fn abort(&mut self) -> Drain<'_, ModelEvent> {
        OpenAiStream::abort(self)
    }

    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        OpenAiStream::interrupt(self, message)
    }

    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        OpenAiStream::fail(self, message)
    }

    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        OpenAiStream::http_error(self, status, body, retry_after)
    }
}

impl SseProjector for ChunkProjector {
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        match event.event_type() {
            "message" => self.push_data(&event.data, out),
            "error" => {
                let message = match serde_json::from_str::<Value>(&event.data) {
                    Ok(value) => error_text(value.get("error").unwrap_or(&value)),
                    Err(_) => clip(&event.data, BODY_QUOTE),
                };
                self.fail(message, out);
            }
            _ => {}
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        ChunkProjector::finish(self, out);
    }

    fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        ChunkProjector::abort(self, out);
    }

    fn interrupt(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        ChunkProjector::interrupt(self, message, out);
    }

    fn fail(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        ChunkProjector::fail(self, message, out);
    }

    fn is_finished(&self) -> bool {
        ChunkProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        ChunkProjector::set_limits(self, limits);
    }
}
