//! The request builder: a [`Context`] and one [`Call`] become the JSON
//! body of a streaming `POST /v1/messages`
//! ([`AnthropicMessages`](super::AnthropicMessages)'s
//! [`Protocol::body`](crate::config::Protocol::body)).
//!
//! - The system prompt is the top-level `system`: one `text` block.
//! - A user message is a `user` message: string content as a string,
//!   blocks as `text` blocks and `image` blocks with a `base64` source.
//!   Empty text blocks are left out (the API refuses them), and so is a
//!   user message left with nothing.
//! - An assistant message is an `assistant` message of content blocks in
//!   their order: `text` (empty ones left out); thinking with its
//!   signature as `thinking` + `signature`, redacted thinking as
//!   `redacted_thinking` with its opaque data, thinking without a
//!   signature as plain `text` (the API refuses unsigned thinking); tool
//!   calls as `tool_use` with `input`. An assistant message left with no
//!   block is skipped.
//! - Tool results are `tool_result` blocks with `tool_use_id`, `is_error`
//!   and their content (a string when it is text only, otherwise `text`
//!   and `image` blocks). Consecutive results go into one `user` message,
//!   as the API wants every result of a turn together.
//! - Tool-call ids the API would refuse are rewritten (see [`ToolIds`]),
//!   in the calls and in their results alike.
//! - `max_tokens` is always sent (the API requires it). With a thinking
//!   budget, `thinking: {"type": "enabled", "budget_tokens": N}` is sent,
//!   and `max_tokens` is raised to budget + `max_tokens` when it is not
//!   above the budget (the API requires `max_tokens` > budget).
//! - A [`ThinkingLevel`](agentstream::model::ThinkingLevel), when set,
//!   replaces both: see [`thinking`] (adaptive thinking
//!   with `output_config.effort`, or budget thinking).
//! - The tools as `{name, description, input_schema}`, and `stream: true`;
//!   when set, the tool choice, `temperature`, `top_p`, `stop_sequences`
//!   and structured output as `output_config.format`: `output_config:
//!   {"format": {"type": "json_schema", "schema": …}}`, the Messages
//!   API's JSON outputs (generally available for current Claude models;
//!   the schema's name, description and `strict` have no field there and
//!   are not sent). `Required` tool choice is Anthropic's `any`.
//!
//! - Prompt caching, as pi-ai places it, by the call's
//!   [`CacheRetention`](agentstream::model::CacheRetention) (unset is
//!   `Short`, Pi's default): with `Short` or `Long` the system block, the
//!   last tool and the last block of the last message (when it is a user
//!   message, its text made a block) carry `cache_control: {"type":
//!   "ephemeral"}`, with `"ttl": "1h"` for `Long`. With `None` nothing of
//!   this is sent.
//!
//! Before anything else the history goes through
//! [`transform_messages`](agentstream::message::transform) for this
//! provider and model: failed and aborted turns are left out, unanswered
//! tool calls get an error result, and thinking from another model becomes
//! text (its redacted thinking is dropped).
//!
//! The history is then checked with the tool-call
//! [linkage validator](agentstream::message::linkage), as for OpenAI: a
//! request whose tool calls and results do not pair up is never built.

use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use agentstream::message::{
    AssistantMessage, ContentBlock, Context, Message, ToolResultMessage, UserContent,
};

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::model::{ReasoningEffort, StreamOptions, ToolChoice};

use super::ids::ToolIds;
use super::projector::ANTHROPIC_MESSAGES_API;
use super::thinking;
use crate::config::Call;
pub use crate::request::RequestError;
use crate::request::{blocking_diagnostics, cache_control, OptionFields};

/// Where the Messages API carries each per-call option: all top-level;
/// `thinking` holds `{"type": "enabled", "budget_tokens"}` and
/// `output_config` holds `{"format": {"type": "json_schema", "schema"}}`.
pub(crate) const FIELDS: OptionFields = OptionFields {
    max_tokens: "max_tokens",
    temperature: "temperature",
    top_p: "top_p",
    stop: Some("stop_sequences"),
    tool_choice: "tool_choice",
    reasoning: "thinking",
    response_format: "output_config",
    cache_key: None,
    cache_retention: None,
};

/// The output token limit sent when none is set.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The `tool_choice` value of the Messages API: `Required` is Anthropic's
/// `any`.
fn tool_choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        // `Auto`, and any choice added later, leave the decision to the model.
        _ => json!({"type": "auto"}),
    }
}

/// The output token limit sent: the call's, else [`DEFAULT_MAX_TOKENS`]
/// (before the raise above a thinking budget, see the
/// [module documentation](self)).
fn max_tokens(options: &StreamOptions) -> u64 {
    options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
}

/// The extended-thinking budget sent, if thinking is on: the call's
/// [`thinking_budget`](StreamOptions::thinking_budget), else the budget Pi
/// uses for its [`reasoning_effort`](StreamOptions::reasoning_effort)
/// ([`effort_budget`]).
fn thinking_budget(options: &StreamOptions) -> Option<u64> {
    options
        .thinking_budget
        .or(options.reasoning_effort.map(effort_budget))
}

/// The thinking budget of a reasoning effort, Pi's defaults: `minimal`
/// 1024 tokens, `low` 2048, `medium` 8192, `high` 16384.
pub fn effort_budget(effort: ReasoningEffort) -> u64 {
    match effort {
        ReasoningEffort::Minimal => 1024,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        _ => 16384,
    }
}

/// The ids of every tool call and tool result, in order.
fn tool_ids<'m>(messages: impl IntoIterator<Item = &'m Message>) -> ToolIds {
    let mut ids: Vec<&str> = Vec::new();
    for message in messages {
        match message {
            Message::Assistant(m) => ids.extend(m.tool_calls().map(|c| c.id.as_str())),
            Message::ToolResult(r) => ids.push(r.tool_call_id.as_str()),
            _ => {}
        }
    }
    ToolIds::new(ids.iter().copied())
}

/// Builds the JSON body of a streaming Messages request for `call`. See
/// the [module documentation](self).
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub(crate) fn build_request(context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, ANTHROPIC_MESSAGES_API, call.model);
    // Ids are rewritten below, for every message alike.
    let history = transform_messages(&context.messages, &target, |id: &str| id.into());
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let ids = tool_ids(history.iter().map(|m| &**m));
    let mut messages: Vec<Value> = Vec::with_capacity(context.messages.len());
    // The tool_result blocks of consecutive tool results.
    let mut results: Vec<Value> = Vec::new();
    for message in history.iter().map(|m| &**m) {
        if let Message::ToolResult(result) = message {
            results.push(tool_result(result, &ids));
            continue;
        }
        if !results.is_empty() {
            let content = core::mem::take(&mut results);
            messages.push(json!({"role": "user", "content": content}));
        }
        match message {
            Message::User(m) => {
                if let Some(content) = user_content(&m.content) {
                    messages.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(m) => {
                let content = assistant_content(m, &ids);
                if !content.is_empty() {
                    messages.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(_) | Message::Unknown(_) => {}
        }
    }
    if !results.is_empty() {
        messages.push(json!({"role": "user", "content": results}));
    }
    if let Some(marker) = cache_control(call.options.cache_retention_or_default(), true) {
        mark_last_user_message(&mut messages, &marker);
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(call.model.into()));
    body.insert("messages".into(), Value::Array(messages));
    let model = call.model;
    let call = call.options;
    let mut max_tokens = max_tokens(call);
    let plan = thinking::plan(model, call, max_tokens);
    if let Some(plan) = &plan {
        max_tokens = plan.max_tokens;
        if let Some(thinking) = &plan.thinking {
            body.insert(FIELDS.reasoning.into(), thinking.clone());
        }
    } else if let Some(budget) = thinking_budget(call) {
        if max_tokens <= budget {
            max_tokens = budget.saturating_add(max_tokens);
        }
        body.insert(
            FIELDS.reasoning.into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert(FIELDS.max_tokens.into(), Value::from(max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    // The system prompt is one text block (the marker's place), as pi-ai
    // sends it.
    let marker = cache_control(call.cache_retention_or_default(), true);
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        let mut block = json!({"type": "text", "text": system});
        mark(&mut block, marker.as_ref());
        body.insert("system".into(), Value::Array(alloc::vec![block]));
    }
    let temperature = call
        .temperature
        .filter(|_| plan.as_ref().map_or(true, |p| p.temperature));
    if let Some(temperature) = temperature {
        body.insert(FIELDS.temperature.into(), Value::from(temperature));
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect::<Vec<Value>>();
        let mut tools = tools;
        if let Some(last) = tools.last_mut() {
            mark(last, marker.as_ref());
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &call.tool_choice {
        body.insert(FIELDS.tool_choice.into(), tool_choice_json(choice));
    }
    if let Some(top_p) = call.top_p {
        body.insert(FIELDS.top_p.into(), Value::from(top_p));
    }
    if let (Some(stop), Some(field)) = (call.stop.as_ref().filter(|s| !s.is_empty()), FIELDS.stop) {
        body.insert(field.into(), Value::from(stop.clone()));
    }
    let mut output_config = Map::new();
    if let Some(effort) = plan.as_ref().and_then(|p| p.effort) {
        output_config.insert("effort".into(), Value::from(effort));
    }
    if let Some(format) = &call.response_format {
        output_config.insert(
            "format".into(),
            json!({"type": "json_schema", "schema": format.schema}),
        );
    }
    if !output_config.is_empty() {
        body.insert(FIELDS.response_format.into(), Value::Object(output_config));
    }
    Ok(Value::Object(body))
}

/// Sets `cache_control` on `block` (an object) when there is a marker.
fn mark(block: &mut Value, marker: Option<&Value>) {
    if let (Value::Object(block), Some(marker)) = (block, marker) {
        block.insert("cache_control".into(), marker.clone());
    }
}

/// Puts the marker on the last block of the last message when that is a
/// user message (pi-ai's placement): a string content becomes one text
/// block; a last block that is not text, an image or a tool result gets
/// none.
fn mark_last_user_message(messages: &mut [Value], marker: &Value) {
    let Some(Value::Object(last)) = messages.last_mut() else {
        return;
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return;
    }
    match last.get_mut("content") {
        Some(Value::String(text)) => {
            let text = core::mem::take(text);
            last.insert(
                "content".into(),
                json!([{"type": "text", "text": text, "cache_control": marker}]),
            );
        }
        Some(Value::Array(blocks)) => {
            if let Some(block) = blocks.last_mut() {
                let kind = block.get("type").and_then(Value::as_str);
                if matches!(kind, Some("text" | "image" | "tool_result")) {
                    mark(block, Some(marker));
                }
            }
        }
        _ => {}
    }
}

fn image_block(mime_type: &str, data: &str) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": mime_type, "data": data},
    })
}

/// The text blocks (empty ones left out) and image blocks of `blocks`, in
/// order, as Anthropic content blocks.
fn text_and_image_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) if !t.text.is_empty() => {
                Some(json!({"type": "text", "text": t.text}))
            }
            ContentBlock::Image(image) => Some(image_block(&image.mime_type, &image.data)),
            _ => None,
        })
        .collect()
}

fn user_content(content: &UserContent) -> Option<Value> {
    match content {
        UserContent::Text(text) if text.is_empty() => None,
        UserContent::Text(text) => Some(Value::String(text.clone())),
        UserContent::Blocks(blocks) => {
            let blocks = text_and_image_blocks(blocks);
            (!blocks.is_empty()).then_some(Value::Array(blocks))
        }
    }
}

fn assistant_content(message: &AssistantMessage, ids: &ToolIds) -> Vec<Value> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) if !t.text.is_empty() => {
                Some(json!({"type": "text", "text": t.text}))
            }
            ContentBlock::Thinking(t) if t.redacted == Some(true) => t
                .thinking_signature
                .as_ref()
                .filter(|data| !data.is_empty())
                .map(|data| json!({"type": "redacted_thinking", "data": data})),
            ContentBlock::Thinking(t) if t.thinking.is_empty() => None,
            ContentBlock::Thinking(t) => {
                match t.thinking_signature.as_ref().filter(|s| !s.is_empty()) {
                    Some(signature) => Some(json!({
                        "type": "thinking",
                        "thinking": t.thinking,
                        "signature": signature,
                    })),
                    None => Some(json!({"type": "text", "text": t.thinking})),
                }
            }
            ContentBlock::ToolCall(call) => Some(json!({
                "type": "tool_use",
                "id": ids.get(&call.id),
                "name": call.name,
                "input": call.arguments,
            })),
            _ => None,
        })
        .collect()
}

fn tool_result(result: &ToolResultMessage, ids: &ToolIds) -> Value {
    let has_image = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image(_)));
    let content = if has_image {
        Value::Array(text_and_image_blocks(&result.content))
    } else {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        Value::String(text.join("\n"))
    };
    json!({
        "type": "tool_result",
        "tool_use_id": ids.get(&result.tool_call_id),
        "content": content,
        "is_error": result.is_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::model::ReasoningEffort;

    #[test]
    fn a_call_effort_replaces_the_default_budget() {
        let defaults = StreamOptions::default().with_thinking_budget(1024);
        let call = StreamOptions::default()
            .with_tool_choice(ToolChoice::Required)
            .with_reasoning_effort(ReasoningEffort::Medium);
        let options = crate::config::layered(&defaults, &call);
        assert_eq!(options.tool_choice, Some(ToolChoice::Required));
        assert_eq!(thinking_budget(&options), Some(8192));
        assert_eq!(max_tokens(&options), 4096);
    }
}
