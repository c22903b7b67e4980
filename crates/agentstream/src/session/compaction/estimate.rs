//! pi-coding-agent's `estimateTokens`: a message's size in characters
//! (JavaScript string lengths, UTF-16 code units) divided by 4, rounded
//! up; an image counts 4,800 characters.

use serde_json::Value;

use super::serialize::{js_json, js_len};
use crate::message::{ContentBlock, Message, UserContent};
use crate::session::AgentMessage;

/// The characters an image counts for.
const IMAGE_CHARS: usize = 4800;

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
                ContentBlock::ToolCall(c) => {
                    js_len(&c.name) + js_len(&js_json(&Value::Object(c.arguments.clone())))
                }
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
