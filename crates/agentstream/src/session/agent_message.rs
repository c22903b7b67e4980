//! Pi's application message roles and the default `convert_to_llm` step.
//!
//! Besides the three LLM roles, Pi's coding agent keeps four roles of its
//! own in a conversation: `bashExecution` (a shell command the user ran with
//! `!`), `custom` (an extension's message), `branchSummary` and
//! `compactionSummary`. They are stored in session files like any message
//! and become user messages only when the context goes to the model, through
//! [`convert_to_llm`].

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::message::{DecodeError, Message, UnknownMessage};

/// The text Pi puts before a compaction summary when it goes to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// The text Pi puts after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// The text Pi puts before a branch summary when it goes to the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// The text Pi puts after a branch summary (no newline before it).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A message of Pi's coding agent: one of the LLM roles or an application
/// role. Each application variant keeps all its fields as the JSON object
/// it was (`role` included), so it round-trips exactly; the accessors read
/// them with JavaScript's truthiness, as Pi's conversions do.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum AgentMessage {
    /// `user`, `assistant`, `toolResult`, or a role nobody here knows.
    Llm(Message),
    /// `{"role": "bashExecution", "command", "output", "exitCode",
    /// "cancelled", "truncated", "fullOutputPath"?, "excludeFromContext"?,
    /// "timestamp"}`.
    BashExecution(AppMessage),
    /// `{"role": "custom", "customType", "content", "display", "details"?,
    /// "timestamp"}`.
    Custom(AppMessage),
    /// `{"role": "branchSummary", "summary", "fromId", "timestamp"}`.
    BranchSummary(AppMessage),
    /// `{"role": "compactionSummary", "summary", "tokensBefore",
    /// "timestamp"}`.
    CompactionSummary(AppMessage),
}

/// The fields of an application-role message, `role` included.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppMessage {
    /// Every field of the message.
    pub fields: Map<String, Value>,
}

impl AppMessage {
    /// A field, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// A string field, if present and a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    /// Whether a field is truthy as JavaScript reads it.
    pub fn truthy(&self, key: &str) -> bool {
        self.fields.get(key).is_some_and(truthy)
    }
}

/// JavaScript's truthiness of a JSON value.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// JavaScript's `String(value)` for the values a template literal meets in
/// these conversions.
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => format!("{b}"),
        Some(Value::Number(n)) => js_number(n),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// A number as JavaScript prints it, for integers and the common floats.
fn js_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return format!("{i}");
    }
    if let Some(u) = n.as_u64() {
        return format!("{u}");
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == (f as i64) as f64 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

impl AgentMessage {
    /// Decodes a message: the application roles by their `role`, anything
    /// else as a [`Message`].
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        if let Value::Object(fields) = &value {
            let role = fields.get("role").and_then(Value::as_str);
            let wrap = match role {
                Some("bashExecution") => AgentMessage::BashExecution,
                Some("custom") => AgentMessage::Custom,
                Some("branchSummary") => AgentMessage::BranchSummary,
                Some("compactionSummary") => AgentMessage::CompactionSummary,
                _ => return Message::from_value(value).map(AgentMessage::Llm),
            };
            if let Value::Object(fields) = value {
                return Ok(wrap(AppMessage { fields }));
            }
        }
        Message::from_value(value).map(AgentMessage::Llm)
    }

    /// The message's `role`.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(m) => m.role(),
            AgentMessage::BashExecution(_) => "bashExecution",
            AgentMessage::Custom(_) => "custom",
            AgentMessage::BranchSummary(_) => "branchSummary",
            AgentMessage::CompactionSummary(_) => "compactionSummary",
        }
    }

    /// The message as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            AgentMessage::Llm(m) => serde_json::to_value(m).unwrap_or(Value::Null),
            AgentMessage::BashExecution(a)
            | AgentMessage::Custom(a)
            | AgentMessage::BranchSummary(a)
            | AgentMessage::CompactionSummary(a) => Value::Object(a.fields.clone()),
        }
    }

    /// `{"role": "compactionSummary", "summary", "tokensBefore"?,
    /// "timestamp"}`, as Pi builds it from a compaction entry.
    pub fn compaction_summary(
        summary: &str,
        tokens_before: Option<&Value>,
        timestamp: Value,
    ) -> Self {
        let mut fields = Map::new();
        fields.insert("role".into(), "compactionSummary".into());
        fields.insert("summary".into(), summary.into());
        if let Some(t) = tokens_before {
            fields.insert("tokensBefore".into(), t.clone());
        }
        fields.insert("timestamp".into(), timestamp);
        AgentMessage::CompactionSummary(AppMessage { fields })
    }

    /// `{"role": "branchSummary", "summary", "fromId"?, "timestamp"}`.
    pub fn branch_summary(summary: &str, from_id: Option<&Value>, timestamp: Value) -> Self {
        let mut fields = Map::new();
        fields.insert("role".into(), "branchSummary".into());
        fields.insert("summary".into(), summary.into());
        if let Some(f) = from_id {
            fields.insert("fromId".into(), f.clone());
        }
        fields.insert("timestamp".into(), timestamp);
        AgentMessage::BranchSummary(AppMessage { fields })
    }

    /// `{"role": "custom", "customType", "content", "display"?,
    /// "details"?, "timestamp"}`.
    pub fn custom(
        custom_type: &str,
        content: &Value,
        display: Option<&Value>,
        details: Option<&Value>,
        timestamp: Value,
    ) -> Self {
        let mut fields = Map::new();
        fields.insert("role".into(), "custom".into());
        fields.insert("customType".into(), custom_type.into());
        fields.insert("content".into(), content.clone());
        if let Some(d) = display {
            fields.insert("display".into(), d.clone());
        }
        if let Some(d) = details {
            fields.insert("details".into(), d.clone());
        }
        fields.insert("timestamp".into(), timestamp);
        AgentMessage::Custom(AppMessage { fields })
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::Llm(m) => m.serialize(serializer),
            other => other.to_value().serialize(serializer),
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Llm(m)
    }
}

/// The text Pi gives the model for a `bashExecution` message.
///
/// ```
/// use agentstream::session::{bash_execution_to_text, AgentMessage};
/// use serde_json::json;
///
/// let m = AgentMessage::from_value(json!({"role": "bashExecution", "command": "ls",
///     "output": "", "exitCode": 2, "cancelled": false, "truncated": false, "timestamp": 1}))
///     .unwrap();
/// let AgentMessage::BashExecution(m) = m else { unreachable!() };
/// assert_eq!(bash_execution_to_text(&m), "Ran `ls`\n(no output)\n\nCommand exited with code 2");
/// ```
pub fn bash_execution_to_text(m: &AppMessage) -> String {
    let mut text = format!("Ran `{}`\n", js_string(m.get("command")));
    if m.truthy("output") {
        text.push_str(&format!("```\n{}\n```", js_string(m.get("output"))));
    } else {
        text.push_str("(no output)");
    }
    if m.truthy("cancelled") {
        text.push_str("\n\n(command cancelled)");
    } else {
        let code = m.get("exitCode");
        let nonzero = match code {
            None | Some(Value::Null) => false,
            Some(Value::Number(n)) => n.as_f64() != Some(0.0),
            Some(_) => true,
        };
        if nonzero {
            text.push_str(&format!("\n\nCommand exited with code {}", js_string(code)));
        }
    }
    if m.truthy("truncated") && m.truthy("fullOutputPath") {
        text.push_str(&format!(
            "\n\n[Output truncated. Full output: {}]",
            js_string(m.get("fullOutputPath"))
        ));
    }
    text
}

/// Builds a user message from its JSON; a value the typed [`Message`]
/// cannot hold (a `null` timestamp from an unparsable date, content that
/// is not blocks) is kept verbatim as a user-role [`UnknownMessage`], so
/// the JSON is exactly Pi's.
fn user_message(content: Value, timestamp: Option<&Value>) -> Message {
    let mut fields = Map::new();
    fields.insert("role".into(), "user".into());
    fields.insert("content".into(), content);
    if let Some(t) = timestamp {
        fields.insert("timestamp".into(), t.clone());
    }
    let value = Value::Object(fields.clone());
    Message::from_value(value).unwrap_or_else(|_| {
        fields.retain(|k, _| k != "role");
        Message::Unknown(UnknownMessage {
            role: "user".into(),
            fields,
        })
    })
}

fn text_block(text: String) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), "text".into());
    block.insert("text".into(), Value::String(text));
    Value::Array(vec![Value::Object(block)])
}

/// Pi's default `convertToLlm`: the application roles become user messages
/// with Pi's exact text, `bashExecution` messages with
/// `excludeFromContext` are dropped, the LLM roles pass through, and a
/// message of any other role is dropped.
///
/// ```
/// use agentstream::session::{convert_to_llm, AgentMessage};
/// use serde_json::json;
///
/// let summary = AgentMessage::branch_summary("tried X", Some(&json!("a1")), json!(5));
/// let llm = convert_to_llm(&[summary]);
/// assert_eq!(
///     serde_json::to_value(&llm[0]).unwrap()["content"][0]["text"],
///     "The following is a summary of a branch that this conversation came back from:\n\n<summary>\ntried X</summary>"
/// );
/// ```
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        match m {
            AgentMessage::Llm(msg) => match msg {
                Message::User(_) | Message::Assistant(_) | Message::ToolResult(_) => {
                    out.push(msg.clone())
                }
                // A user, assistant or tool result that only an unknown
                // message could hold (see `user_message`) passes too.
                Message::Unknown(u)
                    if matches!(u.role.as_str(), "user" | "assistant" | "toolResult") =>
                {
                    out.push(msg.clone())
                }
                Message::Unknown(_) => {}
            },
            AgentMessage::BashExecution(a) => {
                if a.truthy("excludeFromContext") {
                    continue;
                }
                out.push(user_message(
                    text_block(bash_execution_to_text(a)),
                    a.get("timestamp"),
                ));
            }
            AgentMessage::Custom(a) => {
                let content = match a.get("content") {
                    Some(Value::String(s)) => text_block(s.clone()),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                let content = if a.get("content").is_none() {
                    // `content: undefined` is left out of the JSON.
                    None
                } else {
                    Some(content)
                };
                out.push(match content {
                    Some(c) => user_message(c, a.get("timestamp")),
                    None => {
                        let mut fields = Map::new();
                        if let Some(t) = a.get("timestamp") {
                            fields.insert("timestamp".into(), t.clone());
                        }
                        Message::Unknown(UnknownMessage {
                            role: "user".into(),
                            fields,
                        })
                    }
                });
            }
            AgentMessage::BranchSummary(a) => out.push(user_message(
                text_block(format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    js_string(a.get("summary"))
                )),
                a.get("timestamp"),
            )),
            AgentMessage::CompactionSummary(a) => out.push(user_message(
                text_block(format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    js_string(a.get("summary"))
                )),
                a.get("timestamp"),
            )),
        }
    }
    out
}
