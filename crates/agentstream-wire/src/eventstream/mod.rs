//! AWS event-stream framing (`application/vnd.amazon.eventstream`), the
//! binary framing of Amazon Bedrock's `ConverseStream`: the incremental
//! [`EventStreamDecoder`] (`decoder.rs`, push bytes, pull messages), its
//! typed headers ([`Header`], [`HeaderValue`], `header.rs`) and the
//! matching encoder ([`encode_message`], `encoder.rs`) for `serve`.
//!
//! A message is a 12-byte prelude (the message's total length and its
//! headers' length, both big-endian `u32`, then the CRC32 of those eight
//! bytes), the headers, the payload and the CRC32 of everything before
//! it. A header is a name (one length byte, 1 to 255 bytes of UTF-8), a
//! type byte and a value of one of ten types (see [`HeaderValue`]). Both
//! checksums are CRC32 (IEEE, as zlib's), computed with `crc32fast`.
//!
//! # Limits
//!
//! A message longer than the decoder's maximum
//! ([`Limits::max_event_data_bytes`](crate::limits::Limits::max_event_data_bytes)
//! by default, settable with [`EventStreamDecoder::with_max_message_bytes`])
//! is refused as soon as its prelude arrives, before its bytes are
//! buffered, so a declared length of 4 GiB costs nothing. Any corruption
//! (a prelude or message checksum that does not match, a headers length
//! past the message, a header that runs past its section, an unknown
//! value type, a name or string that is not UTF-8) is a [`DecodeError`]
//! naming what was wrong and the stream offset of the message. The
//! decoder never panics, each byte is looked at a bounded number of
//! times, and after an error it refuses all later input (a byte stream
//! cannot be resynchronised).
//!
//! ```
//! use agentstream_wire::eventstream::{encode_message, EventStreamDecoder, Header, HeaderValue};
//!
//! let mut body = Vec::new();
//! let headers = [
//!     Header::new(":event-type", HeaderValue::String("messageStart")),
//!     Header::new(":message-type", HeaderValue::String("event")),
//! ];
//! encode_message(&headers, br#"{"role":"assistant"}"#, &mut body)?;
//!
//! let mut decoder = EventStreamDecoder::new();
//! decoder.feed(&body[..5]);
//! assert!(decoder.next_message().is_none());
//! decoder.feed(&body[5..]);
//! let message = decoder.next_message().unwrap()?;
//! assert_eq!(message.header(":event-type"), Some(HeaderValue::String("messageStart")));
//! assert_eq!(message.payload(), br#"{"role":"assistant"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decoder;
mod encoder;
mod header;

pub use decoder::{DecodeError, DecodeErrorKind, EventStreamDecoder, Message};
pub use encoder::{encode_event, encode_message, EncodeError};
pub use header::{Header, HeaderValue, Headers};

/// The prelude: total length, headers length, prelude CRC32.
pub const PRELUDE_BYTES: usize = 12;
/// The prelude and the message CRC32: the shortest message.
pub const MIN_MESSAGE_BYTES: usize = PRELUDE_BYTES + 4;

/// The CRC32 (IEEE) of `bytes`. `crc32fast` rather than a table of our
/// own: without `std` it uses slice-by-16 tables (several times a 1 KiB
/// byte-at-a-time table's speed), with `std` it detects the carry-less
/// multiply instructions at run time.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}
