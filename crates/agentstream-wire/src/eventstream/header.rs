//! The typed headers of an event-stream message.

use core::fmt;

/// One header value; the type byte on the wire is given for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderValue<'a> {
    /// Types 0 (`true`) and 1 (`false`): no value bytes.
    Bool(bool),
    /// Type 2: one signed byte.
    Byte(i8),
    /// Type 3: a big-endian `i16`.
    Short(i16),
    /// Type 4: a big-endian `i32`.
    Int(i32),
    /// Type 5: a big-endian `i64`.
    Long(i64),
    /// Type 6: a `u16` length, then that many bytes.
    Bytes(&'a [u8]),
    /// Type 7: a `u16` length, then that many bytes of UTF-8.
    String(&'a str),
    /// Type 8: milliseconds since the Unix epoch, a big-endian `i64`.
    Timestamp(i64),
    /// Type 9: 16 bytes.
    Uuid([u8; 16]),
}

impl<'a> HeaderValue<'a> {
    /// The type byte written before the value.
    pub fn type_byte(&self) -> u8 {
        match self {
            HeaderValue::Bool(true) => 0,
            HeaderValue::Bool(false) => 1,
            HeaderValue::Byte(_) => 2,
            HeaderValue::Short(_) => 3,
            HeaderValue::Int(_) => 4,
            HeaderValue::Long(_) => 5,
            HeaderValue::Bytes(_) => 6,
            HeaderValue::String(_) => 7,
            HeaderValue::Timestamp(_) => 8,
            HeaderValue::Uuid(_) => 9,
        }
    }

    /// The string of a type-7 value.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            HeaderValue::String(text) => Some(text),
            _ => None,
        }
    }
}

/// One header: a name (1 to 255 bytes) and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header<'a> {
    /// The header's name, such as `:event-type`.
    pub name: &'a str,
    /// Its value.
    pub value: HeaderValue<'a>,
}

impl<'a> Header<'a> {
    /// A header named `name` with `value`.
    pub const fn new(name: &'a str, value: HeaderValue<'a>) -> Self {
        Self { name, value }
    }
}

/// Why a header section did not parse (the decoder adds the offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// A name of length 0.
    EmptyName,
    /// A name that is not UTF-8.
    NameNotUtf8,
    /// A type byte past 9.
    UnknownType(u8),
    /// A string value that is not UTF-8.
    StringNotUtf8,
    /// The section ends inside a header.
    Truncated,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::EmptyName => f.write_str("a header name is empty"),
            HeaderError::NameNotUtf8 => f.write_str("a header name is not UTF-8"),
            HeaderError::UnknownType(byte) => write!(f, "unknown header value type {byte}"),
            HeaderError::StringNotUtf8 => f.write_str("a string header value is not UTF-8"),
            HeaderError::Truncated => f.write_str("a header runs past the headers section"),
        }
    }
}

/// The headers of a decoded message, read in order from its bytes (the
/// decoder has checked them all, so iterating cannot fail).
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    rest: &'a [u8],
}

impl<'a> Headers<'a> {
    /// Headers over a section the decoder validated.
    pub(crate) fn new(section: &'a [u8]) -> Self {
        Self { rest: section }
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        // A validated section always parses; an error ends the iteration.
        let (header, used) = parse_header(self.rest).ok()??;
        self.rest = self.rest.get(used..).unwrap_or_default();
        Some(header)
    }
}

/// Checks a whole headers section.
pub(crate) fn validate(mut section: &[u8]) -> Result<(), (HeaderError, usize)> {
    let total = section.len();
    while let Some((_, used)) = parse_header(section).map_err(|e| (e, total - section.len()))? {
        section = section.get(used..).unwrap_or_default();
    }
    Ok(())
}

fn take<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], HeaderError> {
    bytes
        .get(at..at + N)
        .and_then(|slice| slice.try_into().ok())
        .ok_or(HeaderError::Truncated)
}

/// The first header of `bytes` and the bytes it took; `None` when empty.
fn parse_header(bytes: &[u8]) -> Result<Option<(Header<'_>, usize)>, HeaderError> {
    let Some(&name_len) = bytes.first() else {
        return Ok(None);
    };
    let name_len = usize::from(name_len);
    if name_len == 0 {
        return Err(HeaderError::EmptyName);
    }
    let name = bytes.get(1..1 + name_len).ok_or(HeaderError::Truncated)?;
    let name = core::str::from_utf8(name).map_err(|_| HeaderError::NameNotUtf8)?;
    let at = 1 + name_len;
    let kind = *bytes.get(at).ok_or(HeaderError::Truncated)?;
    let at = at + 1;
    let (value, used) = match kind {
        0 => (HeaderValue::Bool(true), 0),
        1 => (HeaderValue::Bool(false), 0),
        2 => (HeaderValue::Byte(i8::from_be_bytes(take(bytes, at)?)), 1),
        3 => (HeaderValue::Short(i16::from_be_bytes(take(bytes, at)?)), 2),
        4 => (HeaderValue::Int(i32::from_be_bytes(take(bytes, at)?)), 4),
        5 => (HeaderValue::Long(i64::from_be_bytes(take(bytes, at)?)), 8),
        6 | 7 => {
            let len = usize::from(u16::from_be_bytes(take(bytes, at)?));
            let value = bytes
                .get(at + 2..at + 2 + len)
                .ok_or(HeaderError::Truncated)?;
            let value = if kind == 6 {
                HeaderValue::Bytes(value)
            } else {
                HeaderValue::String(
                    core::str::from_utf8(value).map_err(|_| HeaderError::StringNotUtf8)?,
                )
            };
            (value, 2 + len)
        }
        8 => (
            HeaderValue::Timestamp(i64::from_be_bytes(take(bytes, at)?)),
            8,
        ),
        9 => (HeaderValue::Uuid(take(bytes, at)?), 16),
        other => return Err(HeaderError::UnknownType(other)),
    };
    Ok(Some((Header { name, value }, at + used)))
}
