//! The encoder: [`encode_event`], [`encode_comment`], [`encode_retry`].

use alloc::string::String;
use core::fmt;

use super::SseEvent;

/// An event field that cannot be written: it contains a line break (or
/// U+0000 for an id), which would change the framing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEncodeError {
    /// The field: `event`, `id` or `comment`.
    pub field: &'static str,
}

impl fmt::Display for SseEncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field == "id" {
            f.write_str("the SSE id field contains a line break or U+0000")
        } else {
            write!(f, "the SSE {} field contains a line break", self.field)
        }
    }
}

impl core::error::Error for SseEncodeError {}

fn has_break(s: &str) -> bool {
    s.contains(['\r', '\n'])
}

/// Appends `event` to `out` in the wire format: `event: …` (unless it is the
/// default type), `id: …` (when set), one `data: …` line per line of data
/// (CR, LF and CRLF in the data all become line ends, so they come back as
/// `\n`), and the empty line that dispatches it. Decoding the output gives
/// `event` back, up to that line-end normalization.
///
/// ```
/// use agentstream_wire::sse::{encode_event, SseDecoder, SseEvent};
///
/// let event = SseEvent::message("line one\nline two");
/// let mut wire = String::new();
/// encode_event(&event, &mut wire).unwrap();
/// assert_eq!(wire, "data: line one\ndata: line two\n\n");
/// assert_eq!(SseDecoder::new().feed_to_vec(wire.as_bytes()).unwrap(), [event]);
/// ```
///
/// # Errors
/// [`SseEncodeError`] when the event type or id contains a line break, or
/// the id contains U+0000; `out` is left unchanged.
pub fn encode_event(event: &SseEvent, out: &mut String) -> Result<(), SseEncodeError> {
    if event.event.as_deref().is_some_and(has_break) {
        return Err(SseEncodeError { field: "event" });
    }
    if event
        .id
        .as_deref()
        .is_some_and(|id| has_break(id) || id.contains('\0'))
    {
        return Err(SseEncodeError { field: "id" });
    }
    if let Some(kind) = event.event.as_deref().filter(|e| *e != "message") {
        out.push_str("event: ");
        out.push_str(kind);
        out.push('\n');
    }
    if let Some(id) = &event.id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    let mut rest = event.data.as_str();
    loop {
        let end = rest.find(['\r', '\n']).unwrap_or(rest.len());
        out.push_str("data: ");
        out.push_str(&rest[..end]);
        out.push('\n');
        if end == rest.len() {
            break;
        }
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }
    out.push('\n');
    Ok(())
}

/// Appends a comment line (`: text`), for example a keep-alive.
///
/// # Errors
/// [`SseEncodeError`] when `text` contains a line break.
pub fn encode_comment(text: &str, out: &mut String) -> Result<(), SseEncodeError> {
    if has_break(text) {
        return Err(SseEncodeError { field: "comment" });
    }
    out.push_str(": ");
    out.push_str(text);
    out.push('\n');
    Ok(())
}

/// Appends a `retry: ms` line.
pub fn encode_retry(ms: u64, out: &mut String) {
    use core::fmt::Write;
    let _ = writeln!(out, "retry: {ms}");
}
