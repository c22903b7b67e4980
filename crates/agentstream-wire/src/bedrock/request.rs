//! The `ConverseStream` request body, as pi-ai's `bedrock-converse-stream`
//! provider builds it (the model is in the URL, not the body):
//!
//! - `messages`: user text and images (`{"image": {"source": {"bytes"},
//!   "format"}}`, the bytes base64 as the JSON protocol carries them);
//!   assistant text (blank text skipped), `toolUse {toolUseId, name,
//!   input}` and thinking as `reasoningContent.reasoningText` (with its
//!   `signature` only for Claude models; a Claude thinking block without
//!   a signature is sent as text); an assistant message left empty is
//!   skipped; consecutive tool results are one user message of
//!   `toolResult {toolUseId, content, status}` blocks. Tool call ids are
//!   normalised to `[A-Za-z0-9_-]{1,64}`.
//! - `system`: `[{"text"}]`, then a `cachePoint` (`{"type": "default"}`,
//!   with `"ttl": "1h"` for the long retention) for models that support
//!   prompt caching (Claude 3.5 Haiku, 3.7 Sonnet, 4.x) unless the
//!   retention is `none`; the last user message gets one too.
//! - `inferenceConfig`: `{maxTokens, temperature}` (each when set).
//! - `toolConfig`: the tools as `toolSpec {name, description,
//!   inputSchema: {json}}` and the choice (`auto`, `any`, `tool`), absent
//!   without tools or with the choice `none`.
//! - `additionalModelRequestFields`: Claude thinking, when a reasoning
//!   effort or budget is set: `{"type": "adaptive"}` with
//!   `output_config.effort` for Opus 4.6/4.7 and Sonnet 4.6, otherwise
//!   `{"type": "enabled", "budget_tokens"}` (the budget, or 1024, 2048,
//!   8192, 16384 by effort) with `anthropic_beta:
//!   ["interleaved-thinking-2025-05-14"]`; `display: "summarized"` in
//!   both. Other models get no thinking field.

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    AssistantMessage, ContentBlock, Context, ImageContent, Message, ToolResultMessage, UserContent,
};
use agentstream::model::{CacheRetention, ReasoningEffort, ToolChoice};
use serde_json::{json, Map, Value};

use super::projector::BEDROCK_API;
use crate::config::Call;
use crate::request::{blocking_diagnostics, RequestError};

/// The id and name forms pi-ai compares model names in: lower case, and
/// with runs of blanks, `_`, `.` and `:` as `-`.
fn candidates(model: &str) -> [String; 2] {
    let lower = model.to_lowercase();
    let mut dashed = String::with_capacity(lower.len());
    let mut in_run = false;
    for c in lower.chars() {
        if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
            if !in_run {
                dashed.push('-');
            }
            in_run = true;
        } else {
            dashed.push(c);
            in_run = false;
        }
    }
    [lower, dashed]
}

fn any_contains(model: &str, needles: &[&str]) -> bool {
    candidates(model)
        .iter()
        .any(|c| needles.iter().any(|needle| c.contains(needle)))
}

/// An Anthropic Claude model on Bedrock (thinking signatures, Claude
/// thinking fields).
pub(crate) fn is_claude(model: &str) -> bool {
    let id = model.to_lowercase();
    id.contains("anthropic.claude") || id.contains("anthropic/claude") || id.contains("claude")
}

fn supports_adaptive_thinking(model: &str) -> bool {
    any_contains(model, &["opus-4-6", "opus-4-7", "sonnet-4-6"])
}

fn supports_prompt_caching(model: &str) -> bool {
    any_contains(model, &["claude"])
        && any_contains(model, &["-4-", "claude-3-7-sonnet", "claude-3-5-haiku"])
}

/// A tool call id as Bedrock accepts it: `[A-Za-z0-9_-]`, at most 64
/// (pi-ai's rule; the server half writes ids the same way).
pub(crate) fn normalize_tool_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

fn cache_point(retention: CacheRetention) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long => Some(json!({"cachePoint": {"type": "default", "ttl": "1h"}})),
        _ => Some(json!({"cachePoint": {"type": "default"}})),
    }
}

fn image(image: &ImageContent) -> Value {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => other.strip_prefix("image/").unwrap_or(other),
    };
    json!({"image": {"source": {"bytes": image.data}, "format": format}})
}

fn user_content(content: &UserContent) -> Vec<Value> {
    match content {
        UserContent::Text(text) => alloc::vec![json!({"text": text})],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(json!({"text": t.text})),
                ContentBlock::Image(i) => Some(image(i)),
                _ => None,
            })
            .collect(),
    }
}

fn assistant_content(message: &AssistantMessage, claude: bool) -> Vec<Value> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) if t.text.trim().is_empty() => None,
            ContentBlock::Text(t) => Some(json!({"text": t.text})),
            ContentBlock::ToolCall(call) => Some(json!({
                "toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}
            })),
            ContentBlock::Thinking(t) if t.thinking.trim().is_empty() => None,
            ContentBlock::Thinking(t) if claude => {
                match t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty()) {
                    Some(signature) => Some(json!({
                        "reasoningContent": {"reasoningText": {"text": t.thinking, "signature": signature}}
                    })),
                    None => Some(json!({"text": t.thinking})),
                }
            }
            ContentBlock::Thinking(t) => Some(json!({
                "reasoningContent": {"reasoningText": {"text": t.thinking}}
            })),
            _ => None,
        })
        .collect()
}

fn tool_result(result: &ToolResultMessage) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(i) => Some(image(i)),
            ContentBlock::Text(t) => Some(json!({"text": t.text})),
            _ => None,
        })
        .collect();
    let status = if result.is_error { "error" } else { "success" };
    json!({"toolResult": {"toolUseId": result.tool_call_id, "content": content, "status": status}})
}

/// The Claude thinking fields for `call`, as pi-ai maps the reasoning
/// level; `None` for other models or without reasoning.
fn thinking_fields(model: &str, call: &Call<'_>) -> Option<Value> {
    let options = call.options;
    if !is_claude(model)
        || (options.reasoning_effort.is_none() && options.thinking_budget.is_none())
    {
        return None;
    }
    let effort = options.reasoning_effort.unwrap_or(ReasoningEffort::High);
    if supports_adaptive_thinking(model) {
        let effort = match effort {
            ReasoningEffort::Minimal | ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            _ => "high",
        };
        return Some(json!({
            "thinking": {"type": "adaptive", "display": "summarized"},
            "output_config": {"effort": effort},
        }));
    }
    let budget = options.thinking_budget.unwrap_or(match effort {
        ReasoningEffort::Minimal => 1024,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        _ => 16384,
    });
    Some(json!({
        "thinking": {"type": "enabled", "budget_tokens": budget, "display": "summarized"},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }))
}

fn tool_config(context: &Context, choice: Option<&ToolChoice>) -> Option<Value> {
    let tools = context.tools.as_ref().filter(|t| !t.is_empty())?;
    let choice = match choice {
        Some(ToolChoice::None) => return None,
        Some(ToolChoice::Auto) => Some(json!({"auto": {}})),
        Some(ToolChoice::Required) => Some(json!({"any": {}})),
        Some(ToolChoice::Tool(name)) => Some(json!({"tool": {"name": name}})),
        _ => None,
    };
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({"toolSpec": {
                "name": tool.name,
                "description": tool.description,
                "inputSchema": {"json": tool.parameters},
            }})
        })
        .collect();
    let mut config = Map::new();
    config.insert("tools".into(), Value::Array(tools));
    if let Some(choice) = choice {
        config.insert("toolChoice".into(), choice);
    }
    Some(Value::Object(config))
}

/// The `ConverseStream` body for `context` and `call`. See the [module
/// documentation](self).
pub(crate) fn build_request(context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, BEDROCK_API, call.model);
    let history = transform_messages(&context.messages, &target, normalize_tool_call_id);
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let claude = is_claude(call.model);
    let retention = call.options.cache_retention_or_default();
    let cache = cache_point(retention).filter(|_| supports_prompt_caching(call.model));
    let mut messages: Vec<Value> = Vec::with_capacity(history.len());
    let mut results: Vec<Value> = Vec::new();
    for message in history.iter().map(|m| &**m) {
        if let Message::ToolResult(result) = message {
            results.push(tool_result(result));
            continue;
        }
        if !results.is_empty() {
            messages.push(json!({"role": "user", "content": core::mem::take(&mut results)}));
        }
        match message {
            Message::User(m) => {
                messages.push(json!({"role": "user", "content": user_content(&m.content)}));
            }
            Message::Assistant(m) => {
                let content = assistant_content(m, claude);
                if !content.is_empty() {
                    messages.push(json!({"role": "assistant", "content": content}));
                }
            }
            _ => {}
        }
    }
    if !results.is_empty() {
        messages.push(json!({"role": "user", "content": results}));
    }
    if let (Some(point), Some(last)) = (&cache, messages.last_mut()) {
        if last["role"] == "user" {
            if let Some(content) = last["content"].as_array_mut() {
                content.push(point.clone());
            }
        }
    }
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        let mut blocks = alloc::vec![json!({"text": system})];
        blocks.extend(cache.clone());
        body.insert("system".into(), Value::Array(blocks));
    }
    let mut inference = Map::new();
    if let Some(max_tokens) = call.options.max_tokens {
        inference.insert("maxTokens".into(), Value::from(max_tokens));
    }
    if let Some(temperature) = call.options.temperature {
        inference.insert("temperature".into(), Value::from(temperature));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if let Some(config) = tool_config(context, call.options.tool_choice.as_ref()) {
        body.insert("toolConfig".into(), config);
    }
    if let Some(fields) = thinking_fields(call.model, call) {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Ok(Value::Object(body))
}
