//! SSE events written one after another into one buffer (no allocation
//! per event), and the helpers the protocols' stream encoders share:
//! JSON strings written as serde_json writes them, deltas split into
//! chunks.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
#[cfg(not(feature = "std"))]
use core::fmt::Write as _;

use bytes::{Bytes, BytesMut};
use serde_json::Value;

/// SSE events written one after another into one buffer, with where each
/// ends, so a response sends what is ready as one frame and a script step
/// can still count events.
///
/// An event is written as [`start`](Self::start), its JSON payload
/// (compact JSON holds no line break, so the data is one `data:` line),
/// then [`end`](Self::end): the same bytes
/// [`encode_event`](crate::sse::encode_event) writes for such an event.
#[derive(Debug, Default)]
pub struct Events {
    buffer: BytesMut,
    /// Where each event not taken yet ends, as an offset in `buffer`.
    ends: VecDeque<usize>,
}

impl Events {
    /// No events yet, with room for `bytes` of them.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buffer: BytesMut::with_capacity(bytes),
            ends: VecDeque::with_capacity(16),
        }
    }

    /// Starts an event with an optional event type (never `message` nor
    /// holding a line break: the names used here are constants).
    pub fn start(&mut self, event: Option<&str>) -> &mut Self {
        if let Some(name) = event {
            self.raw("event: ").raw(name).raw("\n");
        }
        self.raw("data: ")
    }

    /// Ends the event started last.
    pub fn end(&mut self) {
        self.raw("\n\n");
        self.ends.push_back(self.buffer.len());
    }

    /// Appends one whole event of binary framing (an event-stream
    /// message: Bedrock's stream is not SSE).
    pub fn frame(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        self.ends.push_back(self.buffer.len());
    }

    /// Appends `text` as it is (JSON text, or the SSE framing).
    pub fn raw(&mut self, text: &str) -> &mut Self {
        self.buffer.extend_from_slice(text.as_bytes());
        self
    }

    /// Appends `text` as a JSON string, quotes included.
    pub fn string(&mut self, text: &str) -> &mut Self {
        if plain(text) {
            self.buffer.reserve(text.len() + 2);
            self.raw("\"").raw(text).raw("\"");
        } else {
            self.escaped(text);
        }
        self
    }

    /// `text` as a JSON string, by serde_json's own writer (`std`).
    #[cfg(feature = "std")]
    fn escaped(&mut self, text: &str) {
        use bytes::BufMut;
        // Writing a `&str` into memory cannot fail.
        let _ = serde_json::to_writer((&mut self.buffer).writer(), text);
    }

    /// `text` as a JSON string, escaped as serde_json escapes it (without
    /// `std`, serde_json has no writer).
    #[cfg(not(feature = "std"))]
    fn escaped(&mut self, text: &str) {
        self.buffer.reserve(text.len() + 8);
        self.raw("\"");
        escape_into(text, &mut self.buffer);
        self.raw("\"");
    }

    /// Appends `n` as a JSON number.
    pub fn number(&mut self, n: u64) -> &mut Self {
        self.raw(itoa::Buffer::new().format(n))
    }

    /// Appends `value` as compact JSON.
    pub fn value(&mut self, value: &Value) -> &mut Self {
        #[cfg(feature = "std")]
        {
            use bytes::BufMut;
            // A `Value` always serializes.
            let _ = serde_json::to_writer((&mut self.buffer).writer(), value);
        }
        // Without `std`, a `Value`'s `Display` is its compact JSON (the same
        // serializer, written piece by piece); writing into memory cannot
        // fail.
        #[cfg(not(feature = "std"))]
        let _ = write!(self.buffer, "{value}");
        self
    }

    /// One whole event carrying `payload`.
    pub fn json(&mut self, event: Option<&str>, payload: &Value) {
        self.start(event).value(payload).end();
    }

    /// The bytes of the events written and not taken yet.
    pub fn bytes(&self) -> usize {
        self.buffer.len()
    }

    /// How many events are written and not taken yet.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether every event written was taken.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The first `count` events (at most all), as one piece of bytes.
    pub fn take(&mut self, count: usize) -> Bytes {
        let count = count.min(self.ends.len());
        let Some(cut) = count.checked_sub(1).map(|last| self.ends[last]) else {
            return Bytes::new();
        };
        self.ends.drain(..count);
        for end in &mut self.ends {
            *end -= cut;
        }
        self.buffer.split_to(cut).freeze()
    }

    /// Appends to `out` the events `write` puts in a new buffer, each as
    /// its own text (what an encoder's `encode` and `error` hand out).
    pub(crate) fn write_strings(out: &mut Vec<String>, write: impl FnOnce(&mut Events)) {
        let mut events = Events::default();
        write(&mut events);
        out.extend(events.into_strings());
    }

    /// Every event, each as its own text.
    pub fn into_strings(mut self) -> Vec<String> {
        let mut strings = Vec::with_capacity(self.len());
        while !self.is_empty() {
            let event = self.take(1);
            // Only text is ever written.
            strings.push(String::from_utf8_lossy(&event).into_owned());
        }
        strings
    }
}

/// Appends `text` as a JSON string, quotes included (for text written
/// once per call; events use [`Events::string`]).
pub(crate) fn push_json_str(out: &mut String, text: &str) {
    if plain(text) {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // A `&str` always serializes.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    }
}

/// Appends the JSON string body of `text` (no quotes) to `out`, escaped
/// as serde_json escapes it: `"` and `\\` with a backslash, the control
/// characters with a short escape (`\\b`, `\\t`, `\\n`, `\\f`, `\\r`) or
/// `\\u00xx` (lowercase hex), everything else as it is, copied in runs.
/// (The `std` build writes with serde_json itself; the tests check both
/// give the same bytes.)
#[cfg_attr(feature = "std", allow(dead_code))]
fn escape_into(text: &str, out: &mut BytesMut) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..at]);
        start = at + 1;
        if escape == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

/// What follows the backslash of each byte's escape (`u`: `\\u00xx`), or 0
/// for a byte written as it is: serde_json's table.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Whether `text` is its own JSON string body: no quote, backslash or
/// control character, the only characters serde_json escapes. Such text
/// is copied as it is, the same bytes serde_json writes; other text goes
/// through [`escape_into`].
fn plain(text: &str) -> bool {
    !text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Splits `text` into up to `chunks` pieces at character boundaries; an
/// empty text is one empty piece.
pub(crate) fn split(text: &str, chunks: usize) -> impl Iterator<Item = &str> {
    let size = text.len().div_ceil(chunks.max(1)).max(1);
    let mut rest = Some(text);
    core::iter::from_fn(move || {
        let current = rest?;
        if current.len() <= size {
            rest = None;
            return Some(current);
        }
        let mut cut = size;
        while !current.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = current.split_at(cut);
        rest = Some(tail);
        Some(piece)
    })
}

/// Asserts that two SSE texts are the same frames: the same lines, each
/// `data:` payload the same JSON value (the key order of a `serde_json`
/// tree depends on whether some crate of the build turns on its
/// `preserve_order` feature, so bytes are not compared).
#[cfg(test)]
pub(crate) fn assert_same_frames(left: &str, right: &str) {
    let lines = |text: &str| -> Vec<Result<Value, String>> {
        text.split('\n')
            .map(|line| match line.strip_prefix("data: ") {
                Some(data) => serde_json::from_str(data).map_err(|e| alloc::format!("{e}: {data}")),
                None => Err(alloc::borrow::ToOwned::to_owned(line)),
            })
            .collect()
    };
    assert_eq!(lines(left), lines(right), "{left}\n!=\n{right}");
}

/// The SSE text of one event carrying `payload`, as the SSE encoder
/// encodes it: what the encoders' text must match.
#[cfg(test)]
pub(crate) fn wire_event(event: Option<&str>, payload: &Value) -> String {
    let mut sse = crate::sse::SseEvent::message(alloc::string::ToString::to_string(payload));
    if let Some(name) = event {
        sse = sse.with_event(name);
    }
    let mut out = String::new();
    crate::sse::encode_event(&sse, &mut out).unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::format;
    use bytes::Bytes;
    use serde_json::json;

    #[test]
    fn strings_are_the_bytes_serde_json_writes() {
        let ascii: String = (0..=0x7f_u8).map(char::from).collect();
        for text in [
            "",
            "plain",
            "a \"quote\"",
            "back\\slash",
            "tab\tnew\nline",
            "\u{0}\u{1f}",
            "\u{7f} del",
            "caf\u{e9} \u{1f600}",
            "</script>",
            "\u{2028}",
            "\u{8}\u{c}\r\u{b}\u{1b}[0m",
            "\"\\\"",
            "end\\",
            &ascii,
        ] {
            let expected = serde_json::to_string(text).unwrap();
            let mut events = Events::default();
            events.string(text);
            assert_eq!(events.buffer.as_ref(), expected.as_bytes(), "{text:?}");
            let mut escaped = BytesMut::new();
            escape_into(text, &mut escaped);
            assert_eq!(
                [b"\"", escaped.as_ref(), b"\""].concat(),
                expected.as_bytes(),
                "{text:?}"
            );
            let mut out = String::from("x");
            push_json_str(&mut out, text);
            assert_eq!(out, format!("x{expected}"));
        }
    }

    #[test]
    fn numbers_are_decimal() {
        let mut events = Events::default();
        events.number(0).raw(",").number(u64::MAX);
        assert_eq!(events.buffer.as_ref(), format!("0,{}", u64::MAX).as_bytes());
    }

    fn split(text: &str, chunks: usize) -> Vec<&str> {
        super::split(text, chunks).collect()
    }

    #[test]
    fn split_keeps_text_and_char_boundaries() {
        assert_eq!(split("", 3), [""]);
        assert_eq!(split("abcdef", 1), ["abcdef"]);
        assert_eq!(split("abcdef", 3), ["ab", "cd", "ef"]);
        assert_eq!(split("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(split("ab", 5), ["a", "b"]);
        assert_eq!(split("héllo wörld", 4).concat(), "héllo wörld");
        assert!(split("日本語テキスト", 4).len() <= 4);
    }

    #[test]
    fn events_are_the_wire_encoders_bytes_and_are_taken_whole() {
        let payloads = [
            (None, json!({"a": "line\nbreak\r\n \"q\" é 😀 \u{1}"})),
            (Some("content_block_stop"), json!({"index": 3})),
            (Some("ping"), json!({"type": "ping"})),
        ];
        let mut events = Events::default();
        let mut expected = alloc::vec::Vec::new();
        for (name, payload) in &payloads {
            events.json(*name, payload);
            expected.push(wire_event(*name, payload));
        }
        assert_eq!(events.len(), 3);
        assert_eq!(events.take(2), expected[..2].concat().as_bytes());
        assert_eq!(events.len(), 1);
        events.start(None).string("x\"y").raw(",").number(42).end();
        assert_eq!(
            events.into_strings(),
            [expected[2].clone(), "data: \"x\\\"y\",42\n\n".to_owned()]
        );
        assert_eq!(Events::default().take(5), Bytes::new());
    }
}
