//! [`OpenAiStream`]: the SSE decoder and the chunk projector joined, for an
//! HTTP adapter to feed with response bytes.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::{Drain, Vec};

use serde_json::Value;

use agentstream::message::AssistantMessage;
use agentstream::model::{AbortSignal, AssistantMessageProducer, ModelEvent};

use super::projector::ChunkProjector;
use super::wire::{clip, error_text};
use crate::http::{self, ResponseStream};
use crate::limits::{Limit, LimitExceeded, Limits};
use crate::sse::{SseDecoder, SseEvent};

/// How much of a body that is not an event stream is kept to report it.
const NON_SSE_PREFIX: usize = 4096;

/// How many characters of an HTTP error body an error message quotes.
const BODY_QUOTE: usize = 500;

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
    decoder: SseDecoder,
    projector: ChunkProjector,
    signal: Option<AbortSignal>,
    out: Vec<ModelEvent>,
    /// The body so far while no SSE event has been seen (up to a limit).
    prefix: Option<Vec<u8>>,
    limits: Limits,
    /// Body bytes fed so far.
    received: u64,
}

impl OpenAiStream {
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
            decoder: SseDecoder::new(),
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
        self.decoder = SseDecoder::new().with_limits(limits);
        self.projector.set_limits(limits);
        self
    }

    /// Sets the timestamp (Unix milliseconds) of the messages. Only has an
    /// effect before any input.
    pub fn with_timestamp(mut self, timestamp_ms: u64) -> Self {
        self.projector.set_timestamp(timestamp_ms);
        self
    }

    /// Whether the terminal event was returned.
    pub fn is_finished(&self) -> bool {
        self.projector.is_finished()
    }

    /// Decodes the next piece of the body and returns the events it
    /// completes. Aborts first if the signal has fired.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Drain<'_, ModelEvent> {
        if self.signal.as_ref().is_some_and(AbortSignal::is_aborted) {
            self.projector.abort(&mut self.out);
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
        let decoded = decoder.feed_ref(bytes, |event| {
            *prefix = None;
            project(projector, event, out);
        });
        let exceeded = match decoded {
            Err(exceeded) => Some(exceeded),
            Ok(()) if too_long => Some(LimitExceeded::new(Limit::ResponseBytes, &self.limits)),
            Ok(()) => None,
        };
        if let Some(exceeded) = exceeded {
            self.prefix = None;
            self.projector.fail(exceeded.to_string(), &mut self.out);
        }
        self.out.drain(..)
    }

    /// The body ended: returns the remaining events, ending in `done` or,
    /// for a truncated body, `error`.
    pub fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        if self.signal.as_ref().is_some_and(AbortSignal::is_aborted) {
            self.projector.abort(&mut self.out);
            return self.out.drain(..);
        }
        let Self {
            decoder,
            projector,
            out,
            prefix,
            ..
        } = self;
        decoder.finish_ref(|event| {
            *prefix = None;
            project(projector, event, out);
        });
        match self.prefix.take() {
            Some(body) if !body.iter().all(u8::is_ascii_whitespace) => {
                let message = format!(
                    "the response is not an event stream: {}",
                    body_message(&body)
                );
                self.projector.fail(message, &mut self.out);
            }
            _ => self.projector.finish(&mut self.out),
        }
        self.out.drain(..)
    }

    /// The caller aborted: returns the `error` event with reason `aborted`
    /// and everything received so far (nothing once finished).
    pub fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.projector.abort(&mut self.out);
        self.out.drain(..)
    }

    /// A timeout (or another interruption that is not the caller's
    /// signal): returns the `error` event with reason `aborted`, `message`
    /// as its `errorMessage`, and everything received so far.
    pub fn interrupt(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.projector.interrupt(message, &mut self.out);
        self.out.drain(..)
    }

    /// A transport failure (connection reset, TLS error, …): returns an
    /// `error` event with `message` and everything received so far.
    pub fn fail(&mut self, message: impl Into<String>) -> Drain<'_, ModelEvent> {
        self.projector.fail(message, &mut self.out);
        self.out.drain(..)
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
        let mut message = format!("HTTP {status}");
        if let Some(reason) = status_reason(status) {
            message.push(' ');
            message.push_str(reason);
        }
        let text = body_message(body);
        if !text.is_empty() {
            message.push_str(": ");
            message.push_str(&text);
        }
        if let Some(retry) = retry_after.map(str::trim).filter(|r| !r.is_empty()) {
            message.push_str("; retry after ");
            message.push_str(retry);
        }
        self.projector.fail(message, &mut self.out);
        self.out.drain(..)
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

fn project(projector: &mut ChunkProjector, event: &SseEvent, out: &mut Vec<ModelEvent>) {
    match event.event_type() {
        "message" => projector.push_data(&event.data, out),
        "error" => {
            let message = match serde_json::from_str::<Value>(&event.data) {
                Ok(value) => error_text(value.get("error").unwrap_or(&value)),
                Err(_) => clip(&event.data, BODY_QUOTE),
            };
            projector.fail(message, out);
        }
        _ => {}
    }
}

/// The provider's message in an error body.
fn body_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => match value.get("error") {
            Some(error) => error_text(error),
            None => error_text(&value),
        },
        Err(_) => clip(text.trim(), BODY_QUOTE),
    }
}

fn status_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}
