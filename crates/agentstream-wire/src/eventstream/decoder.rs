//! [`EventStreamDecoder`]: bytes in, validated [`Message`]s out.

use alloc::vec::Vec;
use core::fmt;

use super::header::{self, HeaderError, Headers};
use super::{crc32, HeaderValue, MIN_MESSAGE_BYTES, PRELUDE_BYTES};
use crate::limits::Limits;

/// What was wrong with the input; see [`DecodeError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The prelude's CRC32 does not match its first eight bytes.
    PreludeCrc {
        /// The checksum the prelude carries.
        expected: u32,
        /// The checksum of the bytes received.
        computed: u32,
    },
    /// The declared total length is below the 16 bytes of prelude and
    /// message checksum.
    MessageTooShort {
        /// The declared total length.
        total: u32,
    },
    /// The declared total length is past the decoder's maximum.
    MessageTooLong {
        /// The declared total length.
        total: u32,
        /// The decoder's maximum.
        max: usize,
    },
    /// The declared headers length leaves no room for the message checksum.
    HeadersTooLong {
        /// The declared headers length.
        headers: u32,
        /// The declared total length.
        total: u32,
    },
    /// The message's CRC32 does not match its bytes.
    MessageCrc {
        /// The checksum the message carries.
        expected: u32,
        /// The checksum of the bytes received.
        computed: u32,
    },
    /// A header name of length 0.
    EmptyHeaderName,
    /// A header name that is not UTF-8.
    HeaderNameNotUtf8,
    /// A header value type byte past 9.
    UnknownHeaderType(u8),
    /// A string header value that is not UTF-8.
    HeaderStringNotUtf8,
    /// A header runs past the end of the headers section.
    HeaderTruncated,
    /// The input ended inside a message.
    Truncated {
        /// The bytes of the unfinished message received.
        buffered: usize,
    },
}

/// A malformed event stream: what was wrong and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    /// What was wrong.
    pub kind: DecodeErrorKind,
    /// The stream offset of the fault: the start of the message for a
    /// prelude, length or checksum fault, the start of the bad header for
    /// a header fault.
    pub offset: u64,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("event stream: ")?;
        match self.kind {
            DecodeErrorKind::PreludeCrc { expected, computed } => write!(
                f,
                "prelude checksum {expected:#010x} does not match the bytes' {computed:#010x}"
            ),
            DecodeErrorKind::MessageTooShort { total } => {
                write!(
                    f,
                    "declared message length {total} is below {MIN_MESSAGE_BYTES}"
                )
            }
            DecodeErrorKind::MessageTooLong { total, max } => {
                write!(
                    f,
                    "declared message length {total} is past the maximum {max}"
                )
            }
            DecodeErrorKind::HeadersTooLong { headers, total } => write!(
                f,
                "declared headers length {headers} does not fit a message of {total} bytes"
            ),
            DecodeErrorKind::MessageCrc { expected, computed } => write!(
                f,
                "message checksum {expected:#010x} does not match the bytes' {computed:#010x}"
            ),
            DecodeErrorKind::EmptyHeaderName => HeaderError::EmptyName.fmt(f),
            DecodeErrorKind::HeaderNameNotUtf8 => HeaderError::NameNotUtf8.fmt(f),
            DecodeErrorKind::UnknownHeaderType(byte) => HeaderError::UnknownType(byte).fmt(f),
            DecodeErrorKind::HeaderStringNotUtf8 => HeaderError::StringNotUtf8.fmt(f),
            DecodeErrorKind::HeaderTruncated => HeaderError::Truncated.fmt(f),
            DecodeErrorKind::Truncated { buffered } => {
                write!(f, "the input ended {buffered} bytes into a message")
            }
        }?;
        write!(f, " (at byte {})", self.offset)
    }
}

impl core::error::Error for DecodeError {}

impl From<HeaderError> for DecodeErrorKind {
    fn from(error: HeaderError) -> Self {
        match error {
            HeaderError::EmptyName => DecodeErrorKind::EmptyHeaderName,
            HeaderError::NameNotUtf8 => DecodeErrorKind::HeaderNameNotUtf8,
            HeaderError::UnknownType(byte) => DecodeErrorKind::UnknownHeaderType(byte),
            HeaderError::StringNotUtf8 => DecodeErrorKind::HeaderStringNotUtf8,
            HeaderError::Truncated => DecodeErrorKind::HeaderTruncated,
        }
    }
}

/// One decoded message, borrowed from the decoder's buffer: its checksums
/// and headers have been checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    headers: &'a [u8],
    payload: &'a [u8],
    offset: u64,
}

impl<'a> Message<'a> {
    /// The headers, in wire order.
    pub fn headers(&self) -> Headers<'a> {
        Headers::new(self.headers)
    }

    /// The value of the first header named `name`.
    pub fn header(&self, name: &str) -> Option<HeaderValue<'a>> {
        self.headers()
            .find(|header| header.name == name)
            .map(|header| header.value)
    }

    /// The value of the first header named `name` when it is a string.
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        self.header(name).and_then(|value| value.as_str())
    }

    /// The payload.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// The stream offset of the message's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// The incremental decoder: [`feed`](Self::feed) bytes in any pieces, then
/// take each completed message with [`next_message`](Self::next_message);
/// [`finish`](Self::finish) at the end of input. See the
/// [module documentation](super) for the limits.
#[derive(Debug, Clone)]
pub struct EventStreamDecoder {
    buf: Vec<u8>,
    /// Where the next message starts in `buf`.
    start: usize,
    /// The stream offset of `buf[0]`.
    base: u64,
    max_message_bytes: usize,
    failed: Option<DecodeError>,
}

impl Default for EventStreamDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStreamDecoder {
    /// A decoder whose messages may be up to
    /// [`Limits::DEFAULT`]`.max_event_data_bytes` long.
    pub fn new() -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            base: 0,
            max_message_bytes: Limits::DEFAULT.max_event_data_bytes,
            failed: None,
        }
    }

    /// Messages may be up to `limits.max_event_data_bytes` long.
    #[must_use]
    pub fn with_limits(self, limits: Limits) -> Self {
        self.with_max_message_bytes(limits.max_event_data_bytes)
    }

    /// Messages may be up to `bytes` long, prelude and checksums included.
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Appends input. Nothing is decoded until
    /// [`next_message`](Self::next_message); after an error input is
    /// ignored.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        // Consumed bytes are dropped only when at least as many as those
        // kept, so each byte is moved a bounded number of times.
        if self.start > 0 && self.start >= self.buf.len() - self.start {
            self.buf.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The bytes fed but not yet handed out as messages.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    fn fail(&mut self, kind: DecodeErrorKind, offset: u64) -> DecodeError {
        let error = DecodeError { kind, offset };
        self.failed = Some(error);
        self.buf = Vec::new();
        self.start = 0;
        error
    }

    /// The next complete message, `None` when more input is needed, or the
    /// error that ends decoding (returned again on every later call).
    pub fn next_message(&mut self) -> Option<Result<Message<'_>, DecodeError>> {
        if let Some(error) = self.failed {
            return Some(Err(error));
        }
        let rest = &self.buf[self.start..];
        let offset = self.base + self.start as u64;
        let prelude: &[u8; PRELUDE_BYTES] = rest.get(..PRELUDE_BYTES)?.try_into().ok()?;
        let word = |at: usize| {
            u32::from_be_bytes([
                prelude[at],
                prelude[at + 1],
                prelude[at + 2],
                prelude[at + 3],
            ])
        };
        let (total, headers_len, prelude_crc) = (word(0), word(4), word(8));
        let computed = crc32(&prelude[..8]);
        if computed != prelude_crc {
            let kind = DecodeErrorKind::PreludeCrc {
                expected: prelude_crc,
                computed,
            };
            return Some(Err(self.fail(kind, offset)));
        }
        let total_len = usize::try_from(total).unwrap_or(usize::MAX);
        if total_len < MIN_MESSAGE_BYTES {
            return Some(Err(
                self.fail(DecodeErrorKind::MessageTooShort { total }, offset)
            ));
        }
        if total_len > self.max_message_bytes {
            let kind = DecodeErrorKind::MessageTooLong {
                total,
                max: self.max_message_bytes,
            };
            return Some(Err(self.fail(kind, offset)));
        }
        let headers_len = usize::try_from(headers_len).unwrap_or(usize::MAX);
        if headers_len > total_len - MIN_MESSAGE_BYTES {
            let kind = DecodeErrorKind::HeadersTooLong {
                headers: word(4),
                total,
            };
            return Some(Err(self.fail(kind, offset)));
        }
        let message = rest.get(..total_len)?;
        let (body, crc) = message.split_at(total_len - 4);
        let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
        let computed = crc32(body);
        if computed != expected {
            let kind = DecodeErrorKind::MessageCrc { expected, computed };
            return Some(Err(self.fail(kind, offset)));
        }
        let headers_end = PRELUDE_BYTES + headers_len;
        if let Err((error, at)) = header::validate(&body[PRELUDE_BYTES..headers_end]) {
            let at = offset + (PRELUDE_BYTES + at) as u64;
            return Some(Err(self.fail(error.into(), at)));
        }
        self.start += total_len;
        let message = &self.buf[self.start - total_len..self.start];
        Some(Ok(Message {
            headers: &message[PRELUDE_BYTES..headers_end],
            payload: &message[headers_end..total_len - 4],
            offset,
        }))
    }

    /// The input ended: an error if it ended inside a message (or decoding
    /// had already failed). Call after taking every message.
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        match self.buffered() {
            0 => Ok(()),
            buffered => {
                let offset = self.base + self.start as u64;
                Err(self.fail(DecodeErrorKind::Truncated { buffered }, offset))
            }
        }
    }
}
