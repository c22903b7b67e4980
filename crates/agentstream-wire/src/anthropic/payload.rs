//! The payload reader of the [`AnthropicProjector`](super::AnthropicProjector):
//! the fields of one Messages stream event, read by serde (typed, with a
//! lenient fallback over a `Value`) or, for the content block deltas that
//! make up most of a stream, by a quick path without serde.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;

use serde::Deserialize;
use serde_json::Value;

use crate::json::borrowed_str;

/// How many characters of offending data an error message quotes.
pub(super) const QUOTE: usize = 200;

/// One event payload: the fields the projector reads. Deltas are typed and
/// borrow their text; the rare events keep their parts as `Value`s.
#[derive(Debug, Deserialize)]
pub(super) struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Cow<'a, str>,
    /// The content block an event is about.
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(borrow, default)]
    pub(super) delta: Option<Delta<'a>>,
    #[serde(default)]
    pub(super) message: Option<Value>,
    #[serde(default)]
    pub(super) content_block: Option<Value>,
    #[serde(default)]
    pub(super) usage: Option<Value>,
    #[serde(default)]
    pub(super) error: Option<Value>,
}

/// A `delta`: of a content block (`type` and its text field) or of the
/// message (`stop_reason`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed_str")]
    pub(super) kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) signature: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) stop_reason: Option<Cow<'a, str>>,
    /// A `message_delta`'s `stop_details` (a refusal's `category` and
    /// `explanation`).
    #[serde(default)]
    pub(super) stop_details: Option<Value>,
}

impl<'a> Payload<'a> {
    /// The lenient reading of a payload whose fields have unexpected
    /// types: a field that is not what it should be counts as absent.
    /// `None` when it is not an object with a string `type`.
    pub(super) fn from_value(value: &'a Value) -> Option<Self> {
        let kind = value.get("type")?.as_str()?;
        let string = |v: Option<&'a Value>, name: &str| {
            v.and_then(|v| v.get(name))
                .and_then(Value::as_str)
                .map(Cow::Borrowed)
        };
        let delta = value.get("delta").filter(|d| d.is_object());
        let object = |name: &str| value.get(name).filter(|v| v.is_object()).cloned();
        Some(Self {
            kind: Cow::Borrowed(kind),
            index: value.get("index").and_then(Value::as_u64),
            delta: delta.map(|_| Delta {
                kind: string(delta, "type"),
                text: string(delta, "text"),
                thinking: string(delta, "thinking"),
                partial_json: string(delta, "partial_json"),
                signature: string(delta, "signature"),
                stop_reason: string(delta, "stop_reason"),
                stop_details: delta.and_then(|d| d.get("stop_details")).cloned(),
            }),
            message: object("message"),
            content_block: object("content_block"),
            usage: object("usage"),
            error: object("error"),
        })
    }
}

/// The delta types the quick path reads, with their text field.
const QUICK_DELTAS: [(&str, &str); 4] = [
    ("text_delta", "text"),
    ("thinking_delta", "thinking"),
    ("input_json_delta", "partial_json"),
    ("signature_delta", "signature"),
];

/// A content block delta in the exact shape Anthropic writes,
/// `{"type":"content_block_delta","index":N,"delta":{"type":KIND,FIELD:TEXT}}`
/// with no whitespace, read without serde; `None` for anything else (the
/// general path then reads it, errors included). Gives what the typed parse
/// would: the delta type and its one text field. A text with a `\u` escape
/// is left to the general path (it may hold a lone surrogate); other
/// escapes are decoded by serde_json on the string alone.
pub(super) fn quick_delta(data: &str) -> Option<(u64, Delta<'_>)> {
    let rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // A JSON number: no leading zero unless it is `0` itself.
    if digits == 0 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    // Too large for a `u64`: the general path reads (and refuses) it.
    let index = rest[..digits].parse::<u64>().ok()?;
    let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
    let (kind, field, rest) = QUICK_DELTAS.iter().find_map(|&(kind, field)| {
        let rest = rest
            .strip_prefix(kind)?
            .strip_prefix(r#"",""#)?
            .strip_prefix(field)?
            .strip_prefix(r#"":""#)?;
        Some((kind, field, rest))
    })?;
    // `rest` is the text's content, its closing quote and `}}`.
    let content = rest.strip_suffix(r#""}}"#)?;
    // The text with its quotes.
    let quoted = &data[data.len() - rest.len() - 1..data.len() - 2];
    let plain = content
        .bytes()
        .all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    let text = if plain {
        Cow::Borrowed(content)
    } else if content.contains("\\u") || content.bytes().any(|b| b < 0x20) {
        return None;
    } else {
        // Escapes: serde_json decodes the quoted string, and refuses one
        // that ends early (an unescaped quote inside).
        Cow::Owned(serde_json::from_str::<String>(quoted).ok()?)
    };
    let mut delta = Delta {
        kind: Some(Cow::Borrowed(kind)),
        ..Delta::default()
    };
    let slot = match field {
        "text" => &mut delta.text,
        "thinking" => &mut delta.thinking,
        "partial_json" => &mut delta.partial_json,
        _ => &mut delta.signature,
    };
    *slot = Some(text);
    Some((index, delta))
}

/// The message of an `error` event's `error` member.
pub(super) fn error_text(error: Option<&Value>) -> String {
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the provider sent an error event");
    format!("{kind}: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed parse's reading of a delta, as the quick path gives it.
    /// A delta's index, type and four text fields, owned.
    type Read = (u64, (Option<String>, [Option<String>; 4]));

    fn typed(data: &str) -> Option<Read> {
        let payload = serde_json::from_str::<Payload<'_>>(data).ok()?;
        (payload.kind == "content_block_delta").then_some(())?;
        Some((payload.index?, fields(&payload.delta?)))
    }

    fn fields(delta: &Delta<'_>) -> (Option<String>, [Option<String>; 4]) {
        let own = |v: &Option<Cow<'_, str>>| v.as_deref().map(String::from);
        (
            own(&delta.kind),
            [
                own(&delta.text),
                own(&delta.thinking),
                own(&delta.partial_json),
                own(&delta.signature),
            ],
        )
    }

    #[test]
    fn the_quick_delta_path_reads_what_the_typed_parse_reads_or_declines() {
        let cases = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"naïve → 🙂"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb \"q\" \\ \/ \t"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","x":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\","x":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tab	raw"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\q"}}"#,
            r#"{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} "#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}"#,
            r#"{"type": "content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}"#,
        ];
        let mut quick = 0;
        for data in cases {
            if let Some((index, delta)) = quick_delta(data) {
                quick += 1;
                assert_eq!(Some((index, fields(&delta))), typed(data), "{data}");
            }
        }
        // Declined: `\u` escapes, a quote or backslash that ends the text
        // early, raw control characters, bad numbers, anything around the
        // object, other shapes.
        assert_eq!(quick, 7);
    }

    #[test]
    fn the_quick_delta_path_agrees_with_the_typed_parse_on_mangled_texts() {
        let pieces = [
            "a", "é", "🙂", "\"", "\\", "\\n", "\\\"", "\\u00e9", "\\ud83d", "}", "}}", "\"}}",
            "\t", "\u{1}", "0", ",", ":", " ",
        ];
        let heads = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""#,
            r#"{"type":"content_block_delta","index":7,"delta":{"type":"input_json_delta","partial_json":""#,
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut quick = 0;
        for round in 0..20_000 {
            let mut data = String::from(heads[round % heads.len()]);
            for _ in 0..next() % 6 {
                data.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            if next() % 4 != 0 {
                data.push_str("\"}}");
            }
            if let Some((index, delta)) = quick_delta(&data) {
                quick += 1;
                assert_eq!(Some((index, fields(&delta))), typed(&data), "{data}");
            }
        }
        assert!(quick > 1_000, "{quick}");
    }
}
