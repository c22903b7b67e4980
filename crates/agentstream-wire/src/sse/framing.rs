//! [`Framing`]: how a protocol's response body is cut into events, the
//! one property of a protocol [`SseStream`](super::SseStream) reads to
//! pick its decoder. SSE for every protocol but Bedrock, whose body is
//! AWS event-stream messages, each handed on as an [`SseEvent`] (its
//! `:event-type` or `:exception-type` as the event, its payload as the
//! data) so one projector machinery reads both.

use alloc::string::String;

use super::{SseDecoder, SseEvent};
use crate::cause::Failure;
use crate::eventstream::{EventStreamDecoder, Message};
use crate::limits::Limits;

/// The framing of a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Framing {
    /// Server-Sent Events (`text/event-stream`).
    Sse,
    /// AWS event-stream messages (`application/vnd.amazon.eventstream`).
    EventStream,
}

impl Framing {
    /// The `content-type` of a streamed body in this framing.
    pub fn content_type(self) -> &'static str {
        match self {
            Framing::Sse => "text/event-stream",
            Framing::EventStream => "application/vnd.amazon.eventstream",
        }
    }
}

/// The decoder of one body, by its [`Framing`].
#[derive(Debug)]
pub(crate) enum BodyDecoder {
    Sse(SseDecoder),
    EventStream(EventStreamDecoder),
}

impl BodyDecoder {
    pub(crate) fn new(framing: Framing, limits: Limits) -> Self {
        match framing {
            Framing::Sse => BodyDecoder::Sse(SseDecoder::new().with_limits(limits)),
            Framing::EventStream => {
                BodyDecoder::EventStream(EventStreamDecoder::new().with_limits(limits))
            }
        }
    }

    /// Decodes `bytes`, handing each completed event to `sink`.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        mut sink: impl FnMut(&SseEvent),
    ) -> Result<(), Failure> {
        match self {
            BodyDecoder::Sse(decoder) => decoder.feed_ref(bytes, sink).map_err(Failure::from),
            BodyDecoder::EventStream(decoder) => {
                decoder.feed(bytes);
                drain(decoder, &mut sink)
            }
        }
    }

    /// The body ended: hands on what is pending.
    pub(crate) fn finish(&mut self, sink: impl FnMut(&SseEvent)) -> Result<(), Failure> {
        match self {
            BodyDecoder::Sse(decoder) => {
                decoder.finish_ref(sink);
                Ok(())
            }
            BodyDecoder::EventStream(decoder) => decoder
                .finish()
                .map_err(|error| Failure::from(alloc::format!("{error}"))),
        }
    }
}

fn drain(
    decoder: &mut EventStreamDecoder,
    sink: &mut impl FnMut(&SseEvent),
) -> Result<(), Failure> {
    while let Some(message) = decoder.next_message() {
        let message = message.map_err(|error| Failure::from(alloc::format!("{error}")))?;
        sink(&as_event(&message));
    }
    Ok(())
}

/// An event-stream message as the event a projection reads: `event`
/// messages by `:event-type`, `exception` messages by `:exception-type`,
/// `error` messages as an `error` event whose data is
/// `{"code": :error-code, "message": :error-message}`.
fn as_event(message: &Message<'_>) -> SseEvent {
    let payload = String::from_utf8_lossy(message.payload()).into_owned();
    match message.header_str(":message-type") {
        Some("exception") => {
            let kind = message.header_str(":exception-type").unwrap_or("exception");
            SseEvent::message(payload).with_event(kind)
        }
        Some("error") => {
            let body = serde_json::json!({
                "code": message.header_str(":error-code"),
                "message": message.header_str(":error-message"),
            });
            SseEvent::message(serde_json::to_string(&body).unwrap_or_default()).with_event("error")
        }
        _ => {
            let kind = message.header_str(":event-type").unwrap_or("message");
            SseEvent::message(payload).with_event(kind)
        }
    }
}
