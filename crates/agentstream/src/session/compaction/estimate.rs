//! pi-coding-agent's `estimateTokens`: a message's size in characters
//! (JavaScript string lengths, UTF-16 code units) divided by 4, rounded
//! up; an image counts 4,800 characters.

use alloc::format;
use serde_json::Value;

use crate::message::{ContentBlock, Message, UserContent};
use crate::session::AgentMessage;

/// The characters an image counts for.
const IMAGE_CHARS: usize = 4800;

/// A string's JavaScript `length`.
fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The JavaScript `length` of a number as `JSON.stringify` writes it.
fn js_number_len(n: &serde_json::Number) -> usize {
    if let Some(i) = n.as_i64() {
        return format!("{i}").len();
    }
    if let Some(u) = n.as_u64() {
        return format!("{u}").len();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if !f.is_finite() {
        return 4; // "null"
    }
    if f == 0.0 {
        return 1;
    }
    // The shortest digits that read back, and the decimal exponent.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let k = mantissa.chars().filter(char::is_ascii_digit).count() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let sign = usize::from(f < 0.0);
    let len = if k <= n && n <= 21 {
        n
    } else if 0 < n && n <= 21 {
        k + 1
    } else if -6 < n && n <= 0 {
        2 + (-n) + k
    } else {
        let e = n - 1;
        let exp_len = format!("{}", e.abs()).len() as i64;
        let point = i64::from(k > 1);
        k + point + 2 + exp_len // "e" and the sign
    };
    sign + len as usize
}

/// `JSON.stringify(value).length`.
fn json_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => js_number_len(n),
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            2 + items.iter().map(json_len).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(map) => object_len(map),
    }
}

fn object_len(map: &serde_json::Map<alloc::string::String, Value>) -> usize {
    2 + map
        .iter()
        .map(|(k, v)| string_len(k) + 1 + json_len(v))
        .sum::<usize>()
        + map.len().saturating_sub(1)
}

/// The length of a JSON string literal as `JSON.stringify` writes it.
fn string_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf16(),
        })
        .sum::<usize>()
}

fn blocks_chars(blocks: &[ContentBlock], images: bool) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => js_len(&t.text),
            ContentBlock::Image(_) if images => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

/// The same for blocks kept as JSON (an application message's content).
fn json_blocks_chars(content: Option<&Value>) -> usize {
    match content {
        Some(Value::String(s)) => js_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| {
                let text = match (b.get("type").and_then(Value::as_str), b.get("text")) {
                    (Some("text"), Some(Value::String(t))) => js_len(t),
                    _ => 0,
                };
                let image = if b.get("type").and_then(Value::as_str) == Some("image") {
                    IMAGE_CHARS
                } else {
                    0
                };
                text + image
            })
            .sum(),
        _ => 0,
    }
}

fn str_len(value: Option<&Value>) -> usize {
    value.and_then(Value::as_str).map_or(0, js_len)
}

/// Pi's estimate of a message's tokens: `ceil(chars / 4)`, counting text,
/// thinking, tool-call names and their arguments' JSON, tool results and
/// custom messages (images as 4,800), a `bashExecution`'s command and
/// output, a summary's text; other roles count 0.
///
/// ```
/// use agentstream::message::user;
/// use agentstream::session::{estimate_tokens, AgentMessage};
///
/// let m = AgentMessage::from(agentstream::message::Message::from(user("12345")));
/// assert_eq!(estimate_tokens(&m), 2);
/// ```
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::Llm(Message::User(u)) => match &u.content {
            UserContent::Text(s) => js_len(s),
            UserContent::Blocks(b) => blocks_chars(b, false),
        },
        AgentMessage::Llm(Message::Assistant(a)) => a
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => js_len(&t.text),
                ContentBlock::Thinking(t) => js_len(&t.thinking),
                ContentBlock::ToolCall(c) => js_len(&c.name) + object_len(&c.arguments),
                _ => 0,
            })
            .sum(),
        AgentMessage::Llm(Message::ToolResult(t)) => blocks_chars(&t.content, true),
        AgentMessage::Llm(Message::Unknown(_)) => 0,
        AgentMessage::Custom(c) => json_blocks_chars(c.get("content")),
        AgentMessage::BashExecution(b) => str_len(b.get("command")) + str_len(b.get("output")),
        AgentMessage::BranchSummary(s) | AgentMessage::CompactionSummary(s) => {
            str_len(s.get("summary"))
        }
    };
    (chars as u64).div_ceil(4)
}
