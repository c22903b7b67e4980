//! Server-Sent Events: the incremental [`SseDecoder`] (`decoder.rs`), a
//! matching encoder ([`encode_event`], `encoder.rs`), [`SseStream`]
//! (`stream.rs`), the decoder joined with a provider's [`SseProjector`]:
//! the response stream of every SSE provider, and the one projector frame
//! every provider shares: [`Frame`] (`frame.rs`, the message's lifecycle)
//! owned by [`Projector`] (`projector.rs`) over the provider's
//! [`Projection`] (what only its payloads say).
//!
//! [`SseDecoder`] follows the WHATWG HTML standard, section "Interpreting an
//! event stream", on a byte stream fed in arbitrary pieces:
//!
//! - Bytes are decoded as UTF-8 one complete line at a time, so a character
//!   split across two chunks is reassembled; invalid sequences become
//!   U+FFFD, as the standard's UTF-8 decode does.
//! - One leading byte order mark (`EF BB BF`) is stripped, even when split
//!   across chunks. A second one is kept.
//! - CR, LF and CRLF each end a line, also when the CR and the LF arrive in
//!   different chunks.
//! - A line starting with `:` is a comment and is ignored.
//! - `field:value` and `field: value`: exactly one space after the colon is
//!   stripped. A line without a colon is a field with an empty value.
//! - `data` lines are joined with `\n`; an empty line dispatches the event.
//!   An event with no `data` line is not dispatched (its `event` type is
//!   reset).
//! - `event` sets the type of the next event (empty means `message`), `id`
//!   sets the last event ID unless the value contains U+0000 (it persists
//!   across events and an empty value clears it), and `retry` sets the
//!   reconnection time when its value is ASCII digits only. Other fields are
//!   ignored.
//!
//! # Limits
//!
//! A line longer than [`Limits::max_line_bytes`](crate::limits::Limits::max_line_bytes) or an event whose data
//! grows past [`Limits::max_event_data_bytes`](crate::limits::Limits::max_event_data_bytes) is refused: `feed` returns
//! [`LimitExceeded`](crate::limits::LimitExceeded) after handing on every event completed before it, and
//! the decoder ignores all later input. The partial line buffer never grows
//! past the line limit, so an endless line costs bounded memory.
//!
//! # End of input
//!
//! The standard discards an event that is not followed by an empty line.
//! Real bodies often lack the last blank line (a proxy strips it, or the
//! server writes `data: [DONE]\n` and closes), so by default
//! [`SseDecoder::finish`] follows [`EndOfInput::Dispatch`]: an unterminated
//! last line is processed as a line, then a pending event that has data is
//! dispatched. [`EndOfInput::Discard`] gives the standard's behaviour. A
//! caller that must tell a truncated body apart does it one level up, from
//! the payloads (the chunk projector ends a stream without `[DONE]` or a
//! `finish_reason` in `error`).
//!
//! ```
//! use agentstream_wire::sse::SseDecoder;
//!
//! let mut decoder = SseDecoder::new();
//! let mut events = decoder.feed_to_vec(b"\xEF\xBB\xBFdata: {\"a\":\r")?;
//! events.extend(decoder.feed_to_vec(b"\n: keep-alive\ndata:1}\n\ndata: [DONE]\n")?);
//! events.extend(decoder.finish_to_vec());
//! let data: Vec<&str> = events.iter().map(|e| e.data.as_str()).collect();
//! assert_eq!(data, ["{\"a\":\n1}", "[DONE]"]);
//! # Ok::<(), agentstream_wire::limits::LimitExceeded>(())
//! ```

use alloc::string::String;
use alloc::sync::Arc;

mod decoder;
mod encoder;
mod frame;
mod framing;
mod projector;
mod stream;

pub use decoder::{EndOfInput, SseDecoder};
pub use encoder::{encode_comment, encode_event, encode_retry, SseEncodeError};
pub use frame::Frame;
pub(crate) use framing::BodyDecoder;
pub use framing::Framing;
pub(crate) use projector::Fail;
pub use projector::{Projection, Projector};
pub use stream::{SseProjector, SseStream};

/// One dispatched event.
///
/// Build one with [`message`](Self::message) and the `with_*` setters:
///
/// ```
/// use agentstream_wire::sse::SseEvent;
///
/// let event = SseEvent::message("{}").with_event("delta").with_id("7");
/// assert_eq!((event.event_type(), event.id.as_deref()), ("delta", Some("7")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event type set by an `event` field; `None` for the default type
    /// `message` (an empty `event` value also means `message`).
    pub event: Option<String>,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last event ID at dispatch time; `None` when it is empty.
    pub id: Option<Arc<str>>,
}

impl SseEvent {
    /// An event of the default type with `data`.
    pub fn message(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// Sets the event type (`message` or empty is the default type).
    #[must_use]
    pub fn with_event(mut self, event: impl Into<String>) -> Self {
        self.event = Some(event.into());
        self
    }

    /// Sets the event ID.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The event type: the `event` field, or `message`.
    pub fn event_type(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}
