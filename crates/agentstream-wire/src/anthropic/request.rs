//! The request builder: a [`Context`] plus [`RequestOptions`] become the
//! JSON body of a streaming `POST /v1/messages`.
//!
//! - The system prompt is the top-level `system` string.
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
//! - The tools as `{name, description, input_schema}`, and `stream: true`;
//!   when set, the tool choice, `temperature`, `top_p`, `stop_sequences`
//!   and structured output as `output_config.format` (see
//!   [`RequestOptions::with_call`] for the per-call options).
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

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use agentstream::message::{
    AssistantMessage, ContentBlock, Context, Message, ToolResultMessage, UserContent,
};

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::model::{ReasoningEffort, StreamOptions, ToolChoice};

use super::ids::ToolIds;
use super::projector::ANTHROPIC_MESSAGES_API;
use crate::request::blocking_diagnostics;
pub use crate::request::RequestError;

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

/// What a request asks for besides the context.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The model id, sent as `model`.
    pub model: String,
    /// The provider the request goes to (`anthropic` from
    /// [`new`](Self::new)): with the API and the model id, it decides
    /// which assistant messages are "the same model" (see
    /// [`transform`](agentstream::message::transform)).
    pub provider: String,
    /// The call's options: `max_tokens` (always sent,
    /// [`DEFAULT_MAX_TOKENS`] when unset), `temperature`, `top_p`, `stop`
    /// (as `stop_sequences`), `tool_choice` (`Required` is Anthropic's
    /// `any`), the thinking budget (see
    /// [`thinking_budget`](Self::thinking_budget)) and `response_format`
    /// (as `output_config.format`).
    pub call: StreamOptions,
}

impl RequestOptions {
    /// Options for `model` with [`DEFAULT_MAX_TOKENS`] and nothing else.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            provider: "anthropic".into(),
            call: StreamOptions::default(),
        }
    }

    /// Sets the provider name (see [`provider`](Self::provider)).
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.call.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.call.temperature = Some(temperature);
        self
    }

    /// Turns extended thinking on with a budget of `tokens`.
    pub fn with_thinking_budget(mut self, tokens: u64) -> Self {
        self.call.thinking_budget = Some(tokens);
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.call.tool_choice = Some(choice);
        self
    }

    /// These options with the request options of one call
    /// [`layered`](crate::config::layered) over [`call`](Self::call):
    /// every option the call sets replaces this one; the others stay.
    ///
    /// The response format is sent as `output_config: {"format": {"type":
    /// "json_schema", "schema": …}}`, the Messages API's JSON outputs
    /// (generally available for current Claude models; the schema's name,
    /// description and `strict` have no field there and are not sent).
    ///
    /// ```
    /// use agentstream::model::{ReasoningEffort, StreamOptions, ToolChoice};
    /// use agentstream_wire::anthropic::RequestOptions;
    ///
    /// let call = StreamOptions::default()
    ///     .with_tool_choice(ToolChoice::Required)
    ///     .with_reasoning_effort(ReasoningEffort::Medium);
    /// let options = RequestOptions::new("claude").with_thinking_budget(1024).with_call(&call);
    /// assert_eq!(options.call.tool_choice, Some(ToolChoice::Required));
    /// // The call's effort replaces the default budget.
    /// assert_eq!(options.thinking_budget(), Some(8192));
    /// assert_eq!(options.max_tokens(), 4096);
    /// ```
    pub fn with_call(mut self, call: &StreamOptions) -> Self {
        self.call = crate::config::layered(&self.call, call);
        self
    }

    /// The output token limit sent: the call's, else [`DEFAULT_MAX_TOKENS`]
    /// (before the raise above a thinking budget, see the
    /// [module documentation](self)).
    pub fn max_tokens(&self) -> u64 {
        self.call.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
    }

    /// The extended-thinking budget sent, if thinking is on: the call's
    /// [`thinking_budget`](StreamOptions::thinking_budget), else the
    /// budget Pi uses for its
    /// [`reasoning_effort`](StreamOptions::reasoning_effort)
    /// ([`effort_budget`]).
    pub fn thinking_budget(&self) -> Option<u64> {
        self.call
            .thinking_budget
            .or(self.call.reasoning_effort.map(effort_budget))
    }
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

/// Builds the JSON body of a streaming Messages request. See the
/// [module documentation](self).
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream_wire::anthropic::{build_request, RequestOptions};
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("c1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("c1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// let body = build_request(&context, &RequestOptions::new("claude-sonnet-4-5")).unwrap();
/// assert_eq!(body["system"], "Be brief.");
/// assert_eq!(body["max_tokens"], 4096);
/// assert_eq!(
///     body["messages"][1]["content"][0],
///     json!({"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}})
/// );
/// assert_eq!(
///     body["messages"][2],
///     json!({"role": "user", "content": [
///         {"type": "tool_result", "tool_use_id": "c1", "content": "18°C", "is_error": false}
///     ]})
/// );
/// ```
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub fn build_request(context: &Context, options: &RequestOptions) -> Result<Value, RequestError> {
    let target = TargetModel::new(&options.provider, ANTHROPIC_MESSAGES_API, &options.model);
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
    let mut body = Map::new();
    body.insert("model".into(), Value::String(options.model.clone()));
    body.insert("messages".into(), Value::Array(messages));
    let call = &options.call;
    let mut max_tokens = options.max_tokens();
    if let Some(budget) = options.thinking_budget() {
        if max_tokens <= budget {
            max_tokens = budget.saturating_add(max_tokens);
        }
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".into(), Value::from(max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), Value::String(system.clone()));
    }
    if let Some(temperature) = call.temperature {
        body.insert("temperature".into(), Value::from(temperature));
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
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &call.tool_choice {
        body.insert("tool_choice".into(), tool_choice_json(choice));
    }
    if let Some(top_p) = call.top_p {
        body.insert("top_p".into(), Value::from(top_p));
    }
    if let Some(stop) = call.stop.as_ref().filter(|s| !s.is_empty()) {
        body.insert("stop_sequences".into(), Value::from(stop.clone()));
    }
    if let Some(format) = &call.response_format {
        body.insert(
            "output_config".into(),
            json!({"format": {"type": "json_schema", "schema": format.schema}}),
        );
    }
    Ok(Value::Object(body))
}

fn image_block(mime_type: &str, data: &str) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": mime_type, "data": data},
    })
}

fn user_content(content: &UserContent) -> Option<Value> {
    match content {
        UserContent::Text(text) if text.is_empty() => None,
        UserContent::Text(text) => Some(Value::String(text.clone())),
        UserContent::Blocks(blocks) => {
            let blocks: Vec<Value> = blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(t) if !t.text.is_empty() => {
                        Some(json!({"type": "text", "text": t.text}))
                    }
                    ContentBlock::Image(image) => Some(image_block(&image.mime_type, &image.data)),
                    _ => None,
                })
                .collect();
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
        let blocks: Vec<Value> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) if !t.text.is_empty() => {
                    Some(json!({"type": "text", "text": t.text}))
                }
                ContentBlock::Image(image) => Some(image_block(&image.mime_type, &image.data)),
                _ => None,
            })
            .collect();
        Value::Array(blocks)
    } else {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
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
