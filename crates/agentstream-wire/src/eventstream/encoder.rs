//! [`encode_message`]: headers and payload to one event-stream message.

use alloc::vec::Vec;
use core::fmt;

use super::{crc32, Header, HeaderValue, MIN_MESSAGE_BYTES};

/// Why a message cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A header name is empty or longer than 255 bytes.
    HeaderName {
        /// The name's length in bytes.
        len: usize,
    },
    /// A bytes or string header value is longer than 65,535 bytes.
    HeaderValue {
        /// The value's length in bytes.
        len: usize,
    },
    /// The message would be longer than `u32::MAX` bytes.
    MessageTooLong,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::HeaderName { len } => {
                write!(f, "event stream: a header name of {len} bytes (1 to 255)")
            }
            EncodeError::HeaderValue { len } => {
                write!(
                    f,
                    "event stream: a header value of {len} bytes (at most 65535)"
                )
            }
            EncodeError::MessageTooLong => f.write_str("event stream: a message past 4 GiB"),
        }
    }
}

impl core::error::Error for EncodeError {}

fn header_len(header: &Header<'_>) -> Result<usize, EncodeError> {
    let name = header.name.len();
    if name == 0 || name > 255 {
        return Err(EncodeError::HeaderName { len: name });
    }
    let value = match header.value {
        HeaderValue::Bool(_) => 0,
        HeaderValue::Byte(_) => 1,
        HeaderValue::Short(_) => 2,
        HeaderValue::Int(_) => 4,
        HeaderValue::Long(_) | HeaderValue::Timestamp(_) => 8,
        HeaderValue::Uuid(_) => 16,
        HeaderValue::Bytes(bytes) => variable(bytes.len())?,
        HeaderValue::String(text) => variable(text.len())?,
    };
    Ok(2 + name + value)
}

fn variable(len: usize) -> Result<usize, EncodeError> {
    if len > usize::from(u16::MAX) {
        return Err(EncodeError::HeaderValue { len });
    }
    Ok(2 + len)
}

/// Appends one message with `headers` and `payload` to `out`. On an error
/// `out` is unchanged.
pub fn encode_message(
    headers: &[Header<'_>],
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let mut headers_len = 0usize;
    for header in headers {
        headers_len = headers_len.saturating_add(header_len(header)?);
    }
    let total = headers_len
        .checked_add(payload.len())
        .and_then(|len| len.checked_add(MIN_MESSAGE_BYTES))
        .and_then(|len| u32::try_from(len).ok())
        .ok_or(EncodeError::MessageTooLong)?;
    // headers_len < total, so it fits a u32 too.
    let headers_word = headers_len as u32;
    let start = out.len();
    out.reserve(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&headers_word.to_be_bytes());
    let prelude_crc = crc32(&out[start..]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    for header in headers {
        // Checked above: the name is 1 to 255 bytes.
        out.push(header.name.len() as u8);
        out.extend_from_slice(header.name.as_bytes());
        out.push(header.value.type_byte());
        match header.value {
            HeaderValue::Bool(_) => {}
            HeaderValue::Byte(value) => out.extend_from_slice(&value.to_be_bytes()),
            HeaderValue::Short(value) => out.extend_from_slice(&value.to_be_bytes()),
            HeaderValue::Int(value) => out.extend_from_slice(&value.to_be_bytes()),
            HeaderValue::Long(value) | HeaderValue::Timestamp(value) => {
                out.extend_from_slice(&value.to_be_bytes());
            }
            HeaderValue::Uuid(bytes) => out.extend_from_slice(&bytes),
            HeaderValue::Bytes(bytes) => {
                out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                out.extend_from_slice(bytes);
            }
            HeaderValue::String(text) => {
                out.extend_from_slice(&(text.len() as u16).to_be_bytes());
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
    out.extend_from_slice(payload);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// Appends one event message as AWS services send them: headers
/// `:event-type` = `event_type`, `:content-type` = `application/json`,
/// `:message-type` = `event`, then `payload`.
pub fn encode_event(
    event_type: &str,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let headers = [
        Header::new(":event-type", HeaderValue::String(event_type)),
        Header::new(":content-type", HeaderValue::String("application/json")),
        Header::new(":message-type", HeaderValue::String("event")),
    ];
    encode_message(&headers, payload, out)
}
