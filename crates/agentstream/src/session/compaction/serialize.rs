//! Pi's `serializeConversation`: the conversation as text for the
//! summarizing model (so it does not continue it), and the JavaScript
//! `JSON.stringify` it writes tool arguments with.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::message::{ContentBlock, Message, UserContent};

/// At most this many characters (UTF-16 code units) of a tool result.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// A number as JavaScript's `String(number)` writes it.
pub(crate) fn js_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return format!("{i}");
    }
    if let Some(u) = n.as_u64() {
        if u < (1u64 << 53) {
            return format!("{u}");
        }
    }
    let f = n.as_f64().unwrap_or(0.0);
    if !f.is_finite() {
        return "null".into();
    }
    if f == 0.0 {
        return "0".into();
    }
    // The shortest digits that read back, and the decimal exponent.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let sign = if f < 0.0 { "-" } else { "" };
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign_e = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{point}e{sign_e}{}", e.abs())
    };
    format!("{sign}{body}")
}

/// `JSON.stringify(value)` (object keys in the map's order: insertion
/// order with serde_json's `preserve_order`, sorted without it).
pub(crate) fn js_json(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_json(v, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A string's JavaScript `length` (UTF-16 code units).
pub(crate) fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// Pi's `truncateForSummary`: the first `max` UTF-16 code units and a note
/// of how many were cut. A cut inside a surrogate pair keeps the pair out
/// (JavaScript would keep its lone first half, which Rust strings cannot
/// hold).
fn truncate(text: &str, max: usize) -> String {
    let len = js_len(text);
    if len <= max {
        return text.into();
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        len - max
    )
}

fn texts(blocks: &[ContentBlock]) -> String {
    blocks.iter().filter_map(ContentBlock::as_text).collect()
}

/// Pi's `serializeConversation` over LLM messages (run
/// [`convert_to_llm`](crate::session::convert_to_llm) first): `[User]: `,
/// `[Assistant thinking]: `, `[Assistant]: `, `[Assistant tool calls]:
/// name(key=JSON, ...)` and `[Tool result]: ` (cut at 2,000 characters)
/// paragraphs, separated by blank lines; empty ones are left out.
///
/// Tool-call arguments are written in the map's key order, which is Pi's
/// (insertion) order only with serde_json's `preserve_order` feature; the
/// core alone sorts keys.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(u) => {
                let content = match &u.content {
                    UserContent::Text(s) => s.clone(),
                    UserContent::Blocks(b) => texts(b),
                };
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Message::Unknown(u) if u.role == "user" => {
                let content = match u.fields.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(blocks)) => blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect(),
                    _ => String::new(),
                };
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Message::Assistant(a) => {
                let (mut text, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                for block in &a.content {
                    match block {
                        ContentBlock::Text(t) => text.push(t.text.as_str()),
                        ContentBlock::Thinking(t) => thinking.push(t.thinking.as_str()),
                        ContentBlock::ToolCall(c) => {
                            let args: Vec<String> = c
                                .arguments
                                .iter()
                                .map(|(k, v)| format!("{k}={}", js_json(v)))
                                .collect();
                            calls.push(format!("{}({})", c.name, args.join(", ")));
                        }
                        _ => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(t) => {
                let content = texts(&t.content);
                if !content.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate(&content, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            Message::Unknown(_) => {}
        }
    }
    parts.join("\n\n")
}
