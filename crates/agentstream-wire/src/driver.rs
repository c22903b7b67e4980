//! The part of a streamed response every SSE protocol shares: the SSE
//! decoder, the response-size limit, the abort check, a body that is not
//! an event stream, and the HTTP error message. Each provider supplies its
//! projector ([`SseProjector`]); `OpenAiStream` and `AnthropicStream` are
//! thin wrappers over [`SseDriver`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::{Drain, Vec};

use serde_json::Value;

use agentstream::model::{AbortSignal, ErrorCause, ModelEvent};

use crate::cause::{error_message_of, limit_cause, projector_cause};

use crate::json::clip;
use crate::limits::{Limit, LimitExceeded, Limits};
use crate::openai::wire::error_text;
use crate::sse::{SseDecoder, SseEvent};

/// How much of a body that is not an event stream is kept to report it.
const NON_SSE_PREFIX: usize = 4096;

/// How many characters of an HTTP error body an error message quotes.
pub(crate) const BODY_QUOTE: usize = 500;

/// A provider's projector, as the driver needs it.
pub(crate) trait SseProjector {
    /// Handles one decoded SSE event.
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>);
    /// The body ended.
    fn finish(&mut self, out: &mut Vec<ModelEvent>);
    /// `error(aborted)` with the abort message.
    fn abort(&mut self, out: &mut Vec<ModelEvent>);
    /// `error(aborted)` with `message`.
    fn interrupt(&mut self, message: String, out: &mut Vec<ModelEvent>);
    /// `error` with `message`.
    fn fail(&mut self, message: String, out: &mut Vec<ModelEvent>);
    /// Whether the terminal event was produced.
    fn is_finished(&self) -> bool;
    /// Sets the limits on blocks, calls and arguments.
    fn set_limits(&mut self, limits: Limits);
}

/// The SSE decoder and a projector joined, with the response limits.
#[derive(Debug)]
pub(crate) struct SseDriver<P> {
    decoder: SseDecoder,
    pub(crate) projector: P,
    signal: Option<AbortSignal>,
    out: Vec<ModelEvent>,
    /// The body so far while no SSE event has been seen (up to a limit).
    prefix: Option<Vec<u8>>,
    limits: Limits,
    /// Body bytes fed so far.
    received: u64,
    /// The typed cause of the terminal `error`, once the driver knows it.
    cause: Option<ErrorCause>,
}

impl<P: SseProjector> SseDriver<P> {
    pub(crate) fn new(projector: P, signal: Option<AbortSignal>) -> Self {
        Self {
            decoder: SseDecoder::new(),
            projector,
            signal,
            out: Vec::new(),
            prefix: Some(Vec::new()),
            limits: Limits::DEFAULT,
            received: 0,
            cause: None,
        }
    }

    /// The cause of the terminal `error` the driver produced while
    /// decoding (a protocol violation, a limit, a provider error), or of
    /// an abort it saw; `None` otherwise.
    pub(crate) fn error_cause(&self) -> Option<ErrorCause> {
        self.cause.clone()
    }

    /// Records the cause of a terminal `error` the projector just pushed.
    fn note_failure(
        cause: &mut Option<ErrorCause>,
        out: &[ModelEvent],
        data: Option<&str>,
        limits: &Limits,
    ) {
        if cause.is_none() {
            if let Some(message) = out.last().and_then(error_message_of) {
                *cause = Some(projector_cause(message, data, limits));
            }
        }
    }

    pub(crate) fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
        self.decoder = SseDecoder::new().with_limits(limits);
        self.projector.set_limits(limits);
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.projector.is_finished()
    }

    fn aborted(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::is_aborted)
    }

    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Drain<'_, ModelEvent> {
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
            cause,
            limits,
            ..
        } = self;
        let decoded = decoder.feed_ref(bytes, |event| {
            *prefix = None;
            let finished = projector.is_finished();
            projector.push_event(event, out);
            if !finished && projector.is_finished() {
                Self::note_failure(cause, out, Some(&event.data), limits);
            }
        });
        let exceeded = match decoded {
            Err(exceeded) => Some(exceeded),
            Ok(()) if too_long => Some(LimitExceeded::new(Limit::ResponseBytes, &self.limits)),
            Ok(()) => None,
        };
        if let Some(exceeded) = exceeded {
            self.prefix = None;
            if !self.projector.is_finished() {
                self.cause.get_or_insert(limit_cause(exceeded));
            }
            self.projector.fail(exceeded.to_string(), &mut self.out);
        }
        self.out.drain(..)
    }

    pub(crate) fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        if self.aborted() {
            self.abort_now();
            return self.out.drain(..);
        }
        let Self {
            decoder,
            projector,
            out,
            prefix,
            cause,
            limits,
            ..
        } = self;
        decoder.finish_ref(|event| {
            *prefix = None;
            let finished = projector.is_finished();
            projector.push_event(event, out);
            if !finished && projector.is_finished() {
                Self::note_failure(cause, out, Some(&event.data), limits);
            }
        });
        let finished = self.projector.is_finished();
        match self.prefix.take() {
            Some(body) if !body.iter().all(u8::is_ascii_whitespace) => {
                let message = format!(
                    "the response is not an event stream: {}",
                    body_message(&body)
                );
                if !finished {
                    self.cause.get_or_insert(ErrorCause::Protocol);
                }
                self.projector.fail(message, &mut self.out);
            }
            _ => {
                self.projector.finish(&mut self.out);
                if !finished && self.projector.is_finished() {
                    Self::note_failure(&mut self.cause, &self.out, None, &self.limits);
                }
            }
        }
        self.out.drain(..)
    }

    fn abort_now(&mut self) {
        if !self.projector.is_finished() {
            self.cause.get_or_insert(ErrorCause::Aborted);
        }
        self.projector.abort(&mut self.out);
    }

    pub(crate) fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.abort_now();
        self.out.drain(..)
    }

    pub(crate) fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        self.projector.interrupt(message, &mut self.out);
        self.out.drain(..)
    }

    pub(crate) fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        self.projector.fail(message, &mut self.out);
        self.out.drain(..)
    }

    pub(crate) fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        let message = http_error_message(status, body, retry_after);
        self.projector.fail(message, &mut self.out);
        self.out.drain(..)
    }
}

/// `HTTP {status} {reason}: {provider message}; retry after {retry}`.
pub(crate) fn http_error_message(status: u16, body: &[u8], retry_after: Option<&str>) -> String {
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
    message
}

/// The provider's message in an error body: `{"error": {"message", "code"
/// or "type"}}` (OpenAI and Anthropic alike), `{"message"}`, or the start
/// of the text.
pub(crate) fn body_message(body: &[u8]) -> String {
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
        529 => "Overloaded",
        _ => return None,
    })
}
