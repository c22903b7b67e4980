//! The request builder: a [`Context`] plus [`RequestOptions`] become the
//! JSON body of a streaming `POST /chat/completions`.
//!
//! - The system prompt is the first message, with role `system` (or
//!   `developer`, see [`Compat`]).
//! - A user message with string content is sent as a string; one with
//!   blocks as an array of `text` and `image_url` parts, the images as
//!   `data:MIME;base64,DATA` URLs.
//! - An assistant message sends its text blocks joined as `content` (or
//!   `null` when it only has tool calls) and its tool calls as
//!   `tool_calls`, each with its arguments serialized to a JSON string.
//!   Thinking blocks are not sent back. An assistant message with neither
//!   text nor tool calls (an aborted one, say) is skipped.
//! - A tool result is a `tool` message with `tool_call_id` and its text.
//!   Chat Completions tool messages carry text only, so an image in a tool
//!   result is replaced by the text `[image: MIME]`.
//! - Messages with a role this crate does not know are skipped.
//! - `stream: true`, and `stream_options: {"include_usage": true}` unless
//!   the provider rejects it; the tools as `{"type": "function",
//!   "function": {name, description, parameters}}`; the token limit and
//!   temperature when set.
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
//! never built. [`build_request`] returns the diagnostics instead.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{json, Map, Value};

use agentstream::diagnostic::Diagnostic;

use super::projector::OPENAI_COMPLETIONS_API;
use agentstream::message::linkage::{
    DUPLICATE_TOOL_CALL_ID, DUPLICATE_TOOL_RESULT, ORPHAN_TOOL_RESULT, UNANSWERED_TOOL_CALL,
};
use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    user, AssistantMessage, ContentBlock, Context, LinkageChecker, Message, ToolResultMessage,
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
}

impl Default for Compat {
    fn default() -> Self {
        Self {
            max_completion_tokens: false,
            developer_role: false,
            stream_options: true,
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
}

/// What a request asks for besides the context.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The model id, sent as `model`.
    pub model: String,
    /// The provider the request goes to (`openai` from [`new`](Self::new)):
    /// with the API and the model id, it decides which assistant messages
    /// are "the same model" (see [`transform`]).
    pub provider: String,
    /// The output token limit, if any.
    pub max_tokens: Option<u64>,
    /// The sampling temperature, if any.
    pub temperature: Option<f64>,
    /// Provider differences.
    pub compat: Compat,
}

impl RequestOptions {
    /// Options for `model` with no limits and the default [`Compat`].
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            provider: "openai".into(),
            ..Self::default()
        }
    }

    /// Sets the provider name (see [`provider`](Self::provider)).
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the provider differences.
    pub fn with_compat(mut self, compat: Compat) -> Self {
        self.compat = compat;
        self
    }
}

/// A context that cannot be sent: its tool calls and tool results do not
/// pair up. Holds the linkage diagnostics (`unanswered-tool-call`,
/// `orphan-tool-result`, `duplicate-tool-call-id`, `duplicate-tool-result`)
/// in the order found; a call still unanswered at the end of the history
/// counts too, since the request would continue without its result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestError {
    /// The findings that block the request.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the context's tool calls and results do not pair up:")?;
        for d in &self.diagnostics {
            write!(f, " [message {}] {d};", d.message_index)?;
        }
        Ok(())
    }
}

/// The diagnostics are findings about the context, not errors of their
/// own, so there is no [`source`](core::error::Error::source).
impl core::error::Error for RequestError {}

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

/// The linkage findings that would make the request invalid.
pub(crate) fn blocking_diagnostics(messages: &[Message]) -> Vec<Diagnostic> {
    let mut checker = LinkageChecker::new();
    let mut found: Vec<Diagnostic> = messages.iter().flat_map(|m| checker.check(m)).collect();
    // The request itself is the next turn: calls still waiting are unanswered.
    found.extend(checker.check(&Message::User(user(""))));
    found.retain(|d| {
        [
            UNANSWERED_TOOL_CALL,
            ORPHAN_TOOL_RESULT,
            DUPLICATE_TOOL_CALL_ID,
            DUPLICATE_TOOL_RESULT,
        ]
        .contains(&d.code)
    });
    found
}

/// Builds the JSON body of a streaming Chat Completions request. See the
/// [module documentation](self).
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream_wire::openai::{build_request, RequestOptions};
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("c1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("c1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// let body = build_request(&context, &RequestOptions::new("gpt-4o")).unwrap();
/// assert_eq!(body["messages"][0], json!({"role": "system", "content": "Be brief."}));
/// assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"city\":\"Paris\"}");
/// assert_eq!(body["messages"][3], json!({"role": "tool", "tool_call_id": "c1", "content": "18°C"}));
/// assert_eq!(body["stream_options"], json!({"include_usage": true}));
///
/// // Without the tool result, the request would be broken: it is refused.
/// context.messages.pop();
/// let error = build_request(&context, &RequestOptions::new("gpt-4o")).unwrap_err();
/// assert_eq!(error.diagnostics[0].code, "unanswered-tool-call");
/// ```
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub fn build_request(context: &Context, options: &RequestOptions) -> Result<Value, RequestError> {
    let target = TargetModel::new(&options.provider, OPENAI_COMPLETIONS_API, &options.model);
    let history = transform_messages(&context.messages, &target, openai_tool_id);
    let diagnostics = blocking_diagnostics(&history);
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let compat = options.compat;
    let mut messages = Vec::with_capacity(context.messages.len() + 1);
    if let Some(system) = &context.system_prompt {
        let role = if compat.developer_role {
            "developer"
        } else {
            "system"
        };
        messages.push(json!({"role": role, "content": system}));
    }
    for message in &history {
        match message {
            Message::User(m) => messages.push(json!({
                "role": "user",
                "content": user_content(&m.content),
            })),
            Message::Assistant(m) => messages.extend(assistant_message(m)),
            Message::ToolResult(m) => messages.push(tool_message(m)),
            Message::Unknown(_) => {}
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(options.model.clone()));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), Value::Bool(true));
    if compat.stream_options {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(max) = options.max_tokens {
        let key = if compat.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), Value::from(max));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), Value::from(temperature));
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
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
                            "url": format!("data:{};base64,{}", image.mime_type, image.data)
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
    let calls: Vec<Value> = message
        .tool_calls()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": serde_json::to_string(&call.arguments).unwrap_or_default(),
                }
            })
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::from("assistant"));
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
