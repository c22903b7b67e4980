//! Helpers both protocol encoders share: SSE framing of JSON payloads and
//! splitting deltas into chunks.

use agentstream_wire::sse::{encode_event, SseEvent};
use serde_json::Value;

/// One SSE event carrying `payload` as its data, with an optional event
/// type.
pub(crate) fn sse(event: Option<&str>, payload: &Value) -> String {
    // Compact JSON holds no line break, so the data is one `data:` line.
    let mut event_ = SseEvent::message(payload.to_string());
    if let Some(name) = event {
        event_ = event_.with_event(name);
    }
    let mut out = String::new();
    // The event names used here are constants without line breaks, and
    // the encoder splits any line break in the data: it cannot fail.
    let _ = encode_event(&event_, &mut out);
    out
}

/// One SSE event carrying the JSON text `payload` (compact, so one
/// `data:` line), with an optional event type.
pub(crate) fn sse_text(event: Option<&str>, payload: String) -> String {
    let mut event_ = SseEvent::message(payload);
    if let Some(name) = event {
        event_ = event_.with_event(name);
    }
    let mut out = String::with_capacity(event_.data.len() + 40);
    let _ = encode_event(&event_, &mut out);
    out
}

/// `text` as a JSON string, quotes included.
pub(crate) fn json_str(text: &str) -> String {
    // A `&str` always serializes.
    serde_json::to_string(text).unwrap_or_default()
}

/// Splits `text` into up to `chunks` pieces at character boundaries; an
/// empty text is one empty piece.
pub(crate) fn split(text: &str, chunks: usize) -> Vec<&str> {
    let size = text.len().div_ceil(chunks.max(1)).max(1);
    let mut pieces = Vec::with_capacity(chunks.min(text.len()).max(1));
    let mut rest = text;
    while rest.len() > size {
        let mut cut = size;
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces.push(rest);
    pieces
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
                Some(data) => serde_json::from_str(data).map_err(|e| format!("{e}: {data}")),
                None => Err(line.to_owned()),
            })
            .collect()
    };
    assert_eq!(lines(left), lines(right), "{left}\n!=\n{right}");
}

#[cfg(test)]
mod tests {
    use super::split;

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
}
