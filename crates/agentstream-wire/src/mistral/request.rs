//! The request body of one Mistral call, as pi-ai's `mistral-conversations`
//! provider writes it through the `@mistralai/mistralai` SDK (whose wire
//! names are snake case):
//!
//! - `model`, `stream: true`, `messages` (the system prompt first), `tools`
//!   (`strict: false`), `temperature`, `max_tokens`, `tool_choice`
//!   (`auto`, `none`, `required` or a function by name); no `top_p`, stop
//!   sequences or response format, as pi-ai sends none.
//! - A user message: a string, or `text` and `image_url` items (images are
//!   always sent: the wire crate does not know the model's input kinds).
//! - An assistant message: its non-blank texts as `text` items, its
//!   non-blank thinking as `thinking` items holding one text part, its calls
//!   as `tool_calls` (each with its `index`), and `prefix: false`; a message
//!   with none of these is left out.
//! - A tool result: role `tool`, one `text` item (the text parts joined by
//!   `\n` and trimmed, `[tool error] ` before an error's text, a
//!   placeholder without text) and its images, `tool_call_id` and `name`.
//! - Tool-call ids of other models are rewritten to exactly nine
//!   alphanumeric characters by [`ToolCallIds`].
//! - Reasoning: with an effort set, `reasoning_effort: "high"` for the
//!   models that take it (`mistral-small-2603`, `mistral-small-latest`,
//!   `mistral-medium-3.5`) and `prompt_mode: "reasoning"` for the others
//!   (pi-ai asks only a model its catalogue marks as reasoning).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    AssistantMessage, ContentBlock, Context, Message, ToolResultMessage, UserContent,
};
use agentstream::model::ToolChoice;
use serde_json::{json, Map, Value};

use super::projector::MISTRAL_API;
use crate::config::Call;
use crate::request::{blocking_diagnostics, result_images, result_text, RequestError};
use crate::responses::request::short_hash;

/// The length of a Mistral tool-call id.
const ID_LENGTH: usize = 9;

/// The models pi-ai asks for `reasoning_effort` rather than
/// `prompt_mode: "reasoning"`.
const EFFORT_MODELS: [&str; 3] = [
    "mistral-small-2603",
    "mistral-small-latest",
    "mistral-medium-3.5",
];

/// pi-ai's Mistral tool-call ids: an id that is nine alphanumeric
/// characters once its other characters are dropped is kept so; another
/// becomes the first nine alphanumeric characters of Pi's `shortHash` of
/// it (of `{id}:{attempt}` when an earlier id took that one), so the
/// rewriting is deterministic and two ids never meet.
///
/// ```
/// use agentstream_wire::mistral::ToolCallIds;
///
/// let mut ids = ToolCallIds::default();
/// assert_eq!(ids.rewrite("gSIMJ-iOkT"), "gSIMJiOkT");
/// let long = ids.rewrite("call_1");
/// assert_eq!(long.len(), 9);
/// assert!(long.chars().all(|c| c.is_ascii_alphanumeric()));
/// assert_eq!(ids.rewrite("call_1"), long);
/// ```
#[derive(Debug, Default, Clone)]
pub struct ToolCallIds {
    given: BTreeMap<String, String>,
    owners: BTreeMap<String, String>,
}

impl ToolCallIds {
    /// The Mistral id of `id`, the same for the same `id`.
    pub fn rewrite(&mut self, id: &str) -> String {
        if let Some(known) = self.given.get(id) {
            return known.clone();
        }
        let mut attempt = 0u32;
        loop {
            let candidate = derive_id(id, attempt);
            let free = self
                .owners
                .get(&candidate)
                .map_or(true, |owner| owner == id);
            if free {
                self.given.insert(id.into(), candidate.clone());
                self.owners.insert(candidate.clone(), id.into());
                return candidate;
            }
            attempt = attempt.saturating_add(1);
        }
    }
}

/// pi-ai's `deriveMistralToolCallId`.
pub(crate) fn derive_id(id: &str, attempt: u32) -> String {
    let alphanumeric: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && alphanumeric.len() == ID_LENGTH {
        return alphanumeric;
    }
    let base = if alphanumeric.is_empty() {
        id
    } else {
        &alphanumeric
    };
    let seed = if attempt == 0 {
        String::from(base)
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(ID_LENGTH)
        .collect()
}

/// Builds the JSON body of a streaming Mistral request for `call`. See
/// the [module documentation](self).
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub(crate) fn build_request(context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, MISTRAL_API, call.model);
    let mut ids = ToolCallIds::default();
    let history = transform_messages(&context.messages, &target, |id: &str| ids.rewrite(id));
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let mut messages = Vec::with_capacity(history.len() + 1);
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in history.iter().map(|m| &**m) {
        match message {
            Message::User(m) => match &m.content {
                UserContent::Text(text) => messages.push(json!({"role": "user", "content": text})),
                UserContent::Blocks(blocks) => {
                    let content: Vec<Value> = blocks.iter().filter_map(user_item).collect();
                    if !content.is_empty() {
                        messages.push(json!({"role": "user", "content": content}));
                    }
                }
            },
            Message::Assistant(m) => {
                if let Some(item) = assistant_message(m) {
                    messages.push(item);
                }
            }
            Message::ToolResult(r) => messages.push(tool_message(r)),
            Message::Unknown(_) => {}
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(call.model.into()));
    body.insert("stream".into(), Value::Bool(true));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let options = call.options;
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), Value::from(temperature));
    }
    if let Some(max) = options.max_tokens {
        body.insert("max_tokens".into(), Value::from(max));
    }
    if let Some(choice) = &options.tool_choice {
        let choice = match choice {
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            _ => json!("auto"),
        };
        body.insert("tool_choice".into(), choice);
    }
    if options.reasoning_effort.is_some() {
        if EFFORT_MODELS.contains(&call.model) {
            body.insert("reasoning_effort".into(), Value::from("high"));
        } else {
            body.insert("prompt_mode".into(), Value::from("reasoning"));
        }
    }
    Ok(Value::Object(body))
}

/// A user block as a content item.
fn user_item(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
        ContentBlock::Image(image) => Some(json!({
            "type": "image_url",
            "image_url": crate::request::data_url(image),
        })),
        _ => None,
    }
}

/// An assistant message, or `None` when it has nothing to send.
fn assistant_message(message: &AssistantMessage) -> Option<Value> {
    let mut content = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                content.push(json!({"type": "text", "text": t.text}));
            }
            ContentBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                content.push(
                    json!({"type": "thinking", "thinking": [{"type": "text", "text": t.thinking}]}),
                );
            }
            ContentBlock::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": Value::Object(call.arguments.clone()).to_string(),
                },
                "index": calls.len(),
            })),
            _ => {}
        }
    }
    if content.is_empty() && calls.is_empty() {
        return None;
    }
    let mut item = json!({"role": "assistant"});
    if !content.is_empty() {
        item["content"] = Value::Array(content);
    }
    if !calls.is_empty() {
        item["tool_calls"] = Value::Array(calls);
    }
    item["prefix"] = Value::Bool(false);
    Some(item)
}

/// A tool result as a `tool` message.
fn tool_message(result: &ToolResultMessage) -> Value {
    let text = result_text(result);
    let images: Vec<Value> = result_images(result).filter_map(user_item).collect();
    let prefix = if result.is_error { "[tool error] " } else { "" };
    let trimmed = text.trim();
    let text = if !trimmed.is_empty() {
        format!("{prefix}{trimmed}")
    } else if !images.is_empty() {
        format!("{prefix}(see attached image)")
    } else {
        format!("{prefix}(no tool output)")
    };
    let mut content = alloc::vec![json!({"type": "text", "text": text})];
    content.extend(images);
    json!({
        "role": "tool",
        "content": content,
        "tool_call_id": result.tool_call_id,
        "name": result.tool_name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::{assistant, tool_call, tool_result, user, StopReason};
    use agentstream::model::{ReasoningEffort, StreamOptions};

    #[test]
    fn colliding_ids_get_distinct_nine_character_ids() {
        let mut ids = ToolCallIds::default();
        // Both normalise to the same nine characters.
        let first = ids.rewrite("abc_defghi");
        let second = ids.rewrite("abc-defghi");
        assert_eq!(first, "abcdefghi");
        assert_ne!(first, second);
        assert_eq!(second.len(), 9);
        assert_eq!(ids.rewrite("abc-defghi"), second);
        // pi-ai's value for `call_1` (its shortHash of `call1`).
        assert_eq!(ToolCallIds::default().rewrite("call_1"), "1j55k0s7o");
    }

    #[test]
    fn the_body_reads_as_pi_ai_writes_it() {
        let mut context = Context::from_messages([
            user("Weather?").into(),
            assistant(
                [tool_call("call_1", "weather", json!({"city": "Paris"}))],
                StopReason::ToolUse,
            )
            .into(),
            tool_result("call_1", "weather", "  boom ", true).into(),
        ]);
        context.system_prompt = Some("Be brief.".into());
        let options = StreamOptions::default().with_reasoning_effort(ReasoningEffort::Low);
        let call = Call {
            model: "magistral-medium-latest",
            provider: "mistral",
            options: &options,
        };
        let body = build_request(&context, &call).unwrap();
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "1j55k0s7o");
        assert_eq!(body["messages"][3]["tool_call_id"], "1j55k0s7o");
        assert_eq!(
            body["messages"][3]["content"][0]["text"],
            "[tool error] boom"
        );
        assert_eq!(body["prompt_mode"], "reasoning");
        let call = Call {
            model: "mistral-small-latest",
            ..call
        };
        let body = build_request(&context, &call).unwrap();
        assert_eq!(
            (body["reasoning_effort"].as_str(), body.get("prompt_mode")),
            (Some("high"), None)
        );
    }
}
