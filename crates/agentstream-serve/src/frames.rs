//! Helpers both protocol encoders share: SSE framing of JSON payloads,
//! splitting deltas into chunks, and the decoded-request shape.

use agentstream::message::{assistant, AssistantMessage, ContentBlock, Context, StopReason};
use agentstream_wire::sse::{encode_event, SseEvent};
use serde_json::{Map, Value};

use crate::error::{Api, ApiError};

/// A request decoded into Pi's terms.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DecodedRequest {
    /// The conversation, system prompt and tools, in Pi's JSON.
    pub context: Context,
    /// The request's `model` (empty when absent).
    pub model: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// OpenAI only: `stream_options.include_usage`.
    pub include_usage: bool,
}

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

/// The assistant message of a decoded history: zero usage, timestamp 0,
/// `toolUse` when it calls tools.
pub(crate) fn history_assistant(
    api: Api,
    provider: &str,
    model: &str,
    content: Vec<ContentBlock>,
) -> AssistantMessage {
    let calls = content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let reason = if calls {
        StopReason::ToolUse
    } else {
        StopReason::Stop
    };
    let mut message = assistant(content, reason);
    message.api = api.as_str().into();
    message.provider = provider.into();
    message.model = model.into();
    message.timestamp = 0;
    message
}

/// A JSON kind name for error messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The request body as an object, or the 400 both providers send.
pub(crate) fn body_object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::new(
            400,
            format!(
                "the request body must be a JSON object, found {}",
                kind(body)
            ),
        )
    })
}

/// Tool-call arguments from their JSON text: an object, or `{}` with the
/// text kept as `rawArguments` when it is not one.
pub(crate) fn arguments_from_text(text: &str) -> (Map<String, Value>, Option<String>) {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => (map, None),
        _ if text.trim().is_empty() => (Map::new(), None),
        _ => (Map::new(), Some(text.to_owned())),
    }
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
