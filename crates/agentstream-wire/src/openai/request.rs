//! The request builder: a [`Context`] and one [`Call`] become the JSON
//! body of a streaming `POST /chat/completions`
//! ([`OpenAiChat`](super::OpenAiChat)'s [`Protocol::body`](crate::config::Protocol::body)).
//!
//! - The system prompt is the first message, with role `system` (or
//!   `developer`, see [`Compat`]).
//! - A user message with string content is sent as a string; one with
//!   blocks as an array of `text` and `image_url` parts, the images as
//!   `data:MIME;base64,DATA` URLs.
//! - An assistant message sends its text blocks joined as `content` (or
//!   `null` when it only has tool calls) and its tool calls as
//!   `tool_calls`, each with its arguments serialized to a JSON string.
//!   Thinking from the same model is sent back as Pi does: all its thinking
//!   joined with `\n`, in the field the first block's `thinkingSignature`
//!   names (`reasoning_content`, `reasoning`, …, recorded by the
//!   [projector](super::projector)); thinking without such a signature is
//!   not sent. Thinking from another model arrives here as text (see the
//!   transform below). An assistant message with neither text nor tool
//!   calls (an aborted one, say) is skipped, even if it had thinking.
//! - A tool result is a `tool` message with `tool_call_id` and its text.
//!   Chat Completions tool messages carry text only, so an image in a tool
//!   result is replaced by the text `[image: MIME]`.
//! - Messages with a role this crate does not know are skipped.
//! - `stream: true`, and `stream_options: {"include_usage": true}` unless
//!   the provider rejects it; the tools as `{"type": "function",
//!   "function": {name, description, parameters}}`; when set, the token
//!   limit, `temperature`, `top_p`, `stop` (an array), `tool_choice`
//!   (`"auto"`, `"none"`, `"required"` or `{"type": "function",
//!   "function": {"name"}}`), `reasoning_effort` and `response_format`
//!   (`{"type": "json_schema", "json_schema": {name, description?,
//!   schema, strict}}`). The thinking budget has no Chat Completions
//!   field and is not sent. The call's options are the configuration's
//!   defaults with the call's [`StreamOptions`](agentstream::model::StreamOptions)
//!   [layered](crate::config::layered) over them.
//! - Prompt caching, as pi-ai does it, when the call sets a
//!   [`CacheRetention`](agentstream::model::CacheRetention) and a session id:
//!   `prompt_cache_key` (the session id) for `Long`, or for any caching
//!   with [`Compat::prompt_cache_key`]; `prompt_cache_retention: "24h"` for
//!   `Long` where [`Compat::long_cache_retention`]; with
//!   [`Compat::anthropic_cache_control`], Anthropic-style markers on the
//!   system message, the last tool and the last text of the last user or
//!   assistant message.
//!
//! Before anything else the history goes through
//! [`transform_messages`](agentstream::message::transform) for this
//! provider and model: failed and aborted turns are left out, unanswered
//! tool calls get an error result, thinking from another model becomes
//! text (its redacted thinking is dropped), and tool-call ids from another
//! model are made acceptable with [`openai_tool_id`].
//!
//! The history is then checked with the tool-call
//! [linkage validator](agentstream::message::linkage): a request whose tool calls
//! and tool results do not pair up is rejected by the endpoints, so it is
//! never built: the body writer returns the diagnostics instead.

use super::thinking::ThinkingFormat;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use agentstream::model::{ResponseFormat, ToolChoice};

use super::cache::{mark_cache_prefix, prompt_cache};
use super::projector::OPENAI_COMPLETIONS_API;
use crate::config::Call;
pub use crate::request::RequestError;
use crate::request::{blocking_diagnostics, cache_control, OptionFields};
use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    AssistantMessage, ContentBlock, Context, Message, ThinkingContent, ToolCall, ToolResultMessage,
    UserContent,
};

/// The differences between OpenAI-compatible providers that change the
/// request body. [`Compat::default`] is what api.openai.com accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compat {
    /// Send the token limit as `max_completion_tokens` (OpenAI's current
    /// name, required by its reasoning models) instead of `max_tokens`
    /// (what most other servers read). Default: `false`.
    pub max_completion_tokens: bool,
    /// Send the system prompt with role `developer` (OpenAI reasoning
    /// models) instead of `system`. Default: `false`.
    pub developer_role: bool,
    /// Send `stream_options: {"include_usage": true}` so the last chunk
    /// carries usage. Some servers reject the field; turn it off for them.
    /// Default: `true`.
    pub stream_options: bool,
    /// Send the session id as `prompt_cache_key` whenever caching is on
    /// (pi-ai does so for api.openai.com); otherwise only with a `Long`
    /// retention. Default: `false`.
    pub prompt_cache_key: bool,
    /// The endpoint offers the long cache lifetime
    /// (`prompt_cache_retention: "24h"`, `ttl: "1h"`): pi-ai's
    /// `supportsLongCacheRetention`, off for Cloudflare. Default: `true`.
    pub long_cache_retention: bool,
    /// Mark the cache prefix with Anthropic-style `cache_control` (pi-ai's
    /// `cacheControlFormat: "anthropic"`, OpenRouter's `anthropic/*`
    /// models). Default: `false`.
    pub anthropic_cache_control: bool,
    /// Send the session id as `session_id`, `x-client-request-id` and
    /// `x-session-affinity` headers (pi-ai's `sendSessionAffinityHeaders`).
    /// Default: `false`.
    pub session_affinity_headers: bool,
    /// Send `store: false` (pi-ai's `supportsStore`). Default: `false`.
    pub store: bool,
    /// Send `strict: false` in each tool's function (pi-ai's
    /// `supportsStrictMode`). Default: `false`.
    pub strict_tools: bool,
    /// Send the tool's `name` with each tool result (pi-ai's
    /// `requiresToolResultName`). Default: `false`.
    pub tool_result_name: bool,
    /// Send `reasoning_content: ""` on assistant messages that carry no
    /// reasoning (pi-ai's `requiresReasoningContentOnAssistantMessages`,
    /// for reasoning models). Default: `false`.
    pub reasoning_content_on_assistant: bool,
    /// How the endpoint takes a thinking level (pi-ai's `thinkingFormat`,
    /// see [`thinking`](super::thinking)). Default: OpenAI's.
    pub thinking_format: ThinkingFormat,
    /// Whether the endpoint takes OpenAI's `reasoning_effort` (pi-ai's
    /// `supportsReasoningEffort`). Default: `true`.
    pub reasoning_effort: bool,
}

impl Default for Compat {
    fn default() -> Self {
        Self {
            max_completion_tokens: false,
            developer_role: false,
            stream_options: true,
            prompt_cache_key: false,
            long_cache_retention: true,
            anthropic_cache_control: false,
            session_affinity_headers: false,
            store: false,
            strict_tools: false,
            tool_result_name: false,
            reasoning_content_on_assistant: false,
            thinking_format: ThinkingFormat::OpenAi,
            reasoning_effort: true,
        }
    }
}

impl Compat {
    /// Sets [`max_completion_tokens`](Self::max_completion_tokens).
    pub fn with_max_completion_tokens(mut self, on: bool) -> Self {
        self.max_completion_tokens = on;
        self
    }

    /// Sets [`developer_role`](Self::developer_role).
    pub fn with_developer_role(mut self, on: bool) -> Self {
        self.developer_role = on;
        self
    }

    /// Sets [`stream_options`](Self::stream_options).
    pub fn with_stream_options(mut self, on: bool) -> Self {
        self.stream_options = on;
        self
    }

    /// The prompt-cache flags pi-ai detects for a `provider`, `base_url`
    /// and `model` id, over `self`: [`prompt_cache_key`](Self::prompt_cache_key)
    /// for a base URL on `api.openai.com`, [`long_cache_retention`](Self::long_cache_retention)
    /// off for Cloudflare, [`anthropic_cache_control`](Self::anthropic_cache_control)
    /// for OpenRouter's `anthropic/*` models.
    ///
    /// ```
    /// use agentstream_wire::openai::Compat;
    ///
    /// let c = Compat::default().with_detected_caching("openrouter", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4");
    /// assert!(c.anthropic_cache_control && !c.prompt_cache_key);
    /// assert!(Compat::default().with_detected_caching("openai", "https://api.openai.com/v1", "gpt-4o").prompt_cache_key);
    /// ```
    pub fn with_detected_caching(mut self, provider: &str, base_url: &str, model: &str) -> Self {
        let cloudflare = provider == "cloudflare-workers-ai"
            || provider == "cloudflare-ai-gateway"
            || base_url.contains("api.cloudflare.com")
            || base_url.contains("gateway.ai.cloudflare.com");
        self.prompt_cache_key = base_url.contains("api.openai.com");
        self.long_cache_retention = !cloudflare;
        self.anthropic_cache_control = provider == "openrouter" && model.starts_with("anthropic/");
        self
    }
}

/// Where Chat Completions carries each per-call option: all top-level,
/// the token limit as `max_tokens`, or [`MAX_COMPLETION_TOKENS`] with
/// [`Compat::max_completion_tokens`].
pub(crate) const FIELDS: OptionFields = OptionFields {
    max_tokens: "max_tokens",
    temperature: "temperature",
    top_p: "top_p",
    stop: Some("stop"),
    tool_choice: "tool_choice",
    reasoning: "reasoning_effort",
    response_format: "response_format",
    cache_key: Some("prompt_cache_key"),
    cache_retention: Some("prompt_cache_retention"),
};

/// OpenAI's current name of the token limit (see [`Compat`]).
pub(crate) const MAX_COMPLETION_TOKENS: &str = "max_completion_tokens";

/// The `tool_choice` value of Chat Completions.
fn tool_choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::None => Value::from("none"),
        ToolChoice::Required => Value::from("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        // `Auto`, and any choice added later, leave the decision to the model.
        _ => Value::from("auto"),
    }
}

/// The `response_format` value of Chat Completions.
fn response_format_json(format: &ResponseFormat) -> Value {
    let mut schema = Map::new();
    schema.insert("name".into(), Value::String(format.name.clone()));
    if let Some(description) = &format.description {
        schema.insert("description".into(), Value::String(description.clone()));
    }
    schema.insert("schema".into(), format.schema.clone());
    schema.insert("strict".into(), Value::Bool(format.strict));
    json!({"type": "json_schema", "json_schema": schema})
}

/// The longest tool-call id OpenAI accepts.
pub const MAX_OPENAI_TOOL_ID_LEN: usize = 40;

/// The id a tool call from another model is sent with. OpenAI refuses
/// ids longer than [`MAX_OPENAI_TOOL_ID_LEN`]; OpenAI Responses ids
/// (`call_…|fc_…`, hundreds of characters) are longer:
///
/// - an id of at most 40 characters without `|` is kept;
/// - otherwise the part before the first `|` is taken, characters outside
///   `[a-zA-Z0-9_-]` become `_`, and when that is still too long it is cut
///   to 23 characters followed by `_` and a 64-bit FNV-1a hash of the
///   whole original id in hex (16 digits): deterministic, and two long ids
///   sharing a prefix stay apart.
///
/// ```
/// use agentstream_wire::openai::request::openai_tool_id;
///
/// assert_eq!(openai_tool_id("call_abc"), "call_abc");
/// assert_eq!(openai_tool_id("call_abc|fc_0123"), "call_abc");
/// let long = openai_tool_id(&"x".repeat(300));
/// assert_eq!(long.len(), 40);
/// assert_ne!(long, openai_tool_id(&"x".repeat(301)));
/// ```
pub fn openai_tool_id(id: &str) -> String {
    if id.len() <= MAX_OPENAI_TOOL_ID_LEN && !id.contains('|') {
        return id.into();
    }
    let head = id.split('|').next().unwrap_or(id);
    let clean: String = head
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !clean.is_empty() && clean.len() <= MAX_OPENAI_TOOL_ID_LEN {
        return clean;
    }
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}_{hash:016x}", &clean[..clean.len().min(23)])
}

/// Builds the JSON body of a streaming Chat Completions request for
/// `call` with the provider differences `compat`. See the
/// [module documentation](self).
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub(crate) fn build_request(
    context: &Context,
    compat: Compat,
    call: &Call<'_>,
) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, OPENAI_COMPLETIONS_API, call.model);
    let history = transform_messages(&context.messages, &target, openai_tool_id);
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let mut messages = Vec::with_capacity(context.messages.len() + 1);
    if let Some(system) = &context.system_prompt {
        let role = if compat.developer_role {
            "developer"
        } else {
            "system"
        };
        messages.push(json!({"role": role, "content": system}));
    }
    for message in history.iter().map(|m| &**m) {
        match message {
            Message::User(m) => messages.push(json!({
                "role": "user",
                "content": user_content(&m.content),
            })),
            Message::Assistant(m) => messages.extend(assistant_message(m).map(|mut message| {
                if compat.reasoning_content_on_assistant {
                    if let Value::Object(fields) = &mut message {
                        fields
                            .entry("reasoning_content")
                            .or_insert_with(|| Value::from(""));
                    }
                }
                message
            })),
            Message::ToolResult(m) => {
                let mut message = tool_message(m);
                let named = compat.tool_result_name && !m.tool_name.is_empty();
                if let (true, Value::Object(fields)) = (named, &mut message) {
                    fields.insert("name".into(), Value::String(m.tool_name.clone()));
                }
                messages.push(message);
            }
            Message::Unknown(_) => {}
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(call.model.into()));
    let options = call.options;
    let mut tools = context
        .tools
        .as_ref()
        .filter(|t| !t.is_empty())
        .map(|tools| {
            tools
                .iter()
                .map(|tool| {
                    let mut function = json!({
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    });
                    if let (true, Value::Object(fields)) = (compat.strict_tools, &mut function) {
                        fields.insert("strict".into(), Value::Bool(false));
                    }
                    json!({"type": "function", "function": function})
                })
                .collect::<Vec<Value>>()
        });
    let marker = cache_control(
        options.cache_retention_or_default(),
        compat.long_cache_retention,
    )
    .filter(|_| compat.anthropic_cache_control);
    if let Some(marker) = &marker {
        mark_cache_prefix(&mut messages, tools.as_mut(), marker);
    }
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), Value::Bool(true));
    if compat.store {
        body.insert("store".into(), Value::Bool(false));
    }
    let (cache_key, cache_retention) = prompt_cache(compat, options);
    if let (Some(field), Some(key)) = (FIELDS.cache_key, cache_key) {
        body.insert(field.into(), Value::from(key));
    }
    if let (Some(field), Some(retention)) = (FIELDS.cache_retention, cache_retention) {
        body.insert(field.into(), Value::from(retention));
    }
    if compat.stream_options {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(max) = options.max_tokens {
        let key = if compat.max_completion_tokens {
            MAX_COMPLETION_TOKENS
        } else {
            FIELDS.max_tokens
        };
        body.insert(key.into(), Value::from(max));
    }
    if let Some(temperature) = options.temperature {
        body.insert(FIELDS.temperature.into(), Value::from(temperature));
    }
    if let Some(top_p) = options.top_p {
        body.insert(FIELDS.top_p.into(), Value::from(top_p));
    }
    if let (Some(stop), Some(field)) =
        (options.stop.as_ref().filter(|s| !s.is_empty()), FIELDS.stop)
    {
        body.insert(field.into(), Value::from(stop.clone()));
    }
    if let Some(choice) = &options.tool_choice {
        body.insert(FIELDS.tool_choice.into(), tool_choice_json(choice));
    }
    if !super::thinking::apply(compat, options, &mut body) {
        if let Some(effort) = options.reasoning_effort {
            body.insert(FIELDS.reasoning.into(), Value::from(effort.as_str()));
        }
    }
    if let Some(format) = &options.response_format {
        body.insert(FIELDS.response_format.into(), response_format_json(format));
    }
    if let Some(tools) = tools {
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(Value::Object(body))
}

fn user_content(content: &UserContent) -> Value {
    match content {
        UserContent::Text(text) => Value::String(text.clone()),
        UserContent::Blocks(blocks) => Value::Array(
            blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
                    ContentBlock::Image(image) => Some(json!({
                        "type": "image_url",
                        "image_url": {
                            "url": crate::request::data_url(image)
                        }
                    })),
                    _ => None,
                })
                .collect(),
        ),
    }
}

fn assistant_message(message: &AssistantMessage) -> Option<Value> {
    let text = message.text();
    let calls: Vec<Value> = message.tool_calls().map(tool_call_json).collect();
    // Thinking left after the transform is the target model's own: sent
    // back in the field it arrived in, which its signature names.
    let thinking: Vec<&ThinkingContent> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(t) if t.redacted != Some(true) => Some(t),
            _ => None,
        })
        .collect();
    let reasoning_field = thinking
        .first()
        .and_then(|t| t.thinking_signature.as_deref())
        .filter(|field| is_reasoning_field(field));
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::from("assistant"));
    if let Some(field) = reasoning_field {
        let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
        out.insert(field.into(), Value::String(joined.join("\n")));
    }
    out.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            Value::String(text)
        },
    );
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

/// A tool call as Chat Completions writes it in an assistant message's
/// `tool_calls`: `{"id", "type": "function", "function": {"name",
/// "arguments"}}`, the arguments as JSON text. The request builder writes
/// it, and so does the server's whole completion.
pub(crate) fn tool_call_json(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {
            "name": call.name,
            // A map of JSON values always serializes.
            "arguments": serde_json::to_string(&call.arguments).unwrap_or_default(),
        }
    })
}

/// Whether a thinking signature names a field reasoning can be sent back
/// in: a lower-case name of letters and `_` (the projector records
/// `reasoning_content`, `reasoning` or `reasoning_text`) that is none of
/// the assistant message's own keys, so a signature from elsewhere can
/// never overwrite `role`, `content` or `tool_calls`.
fn is_reasoning_field(field: &str) -> bool {
    !field.is_empty()
        && field.len() <= 64
        && field.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        && !["role", "content", "tool_calls", "name", "refusal", "audio"].contains(&field)
}

fn tool_message(result: &ToolResultMessage) -> Value {
    let content: String = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.clone()),
            ContentBlock::Image(image) => Some(format!("[image: {}]", image.mime_type)),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    json!({
        "role": "tool",
        "tool_call_id": result.tool_call_id,
        "content": content,
    })
}
