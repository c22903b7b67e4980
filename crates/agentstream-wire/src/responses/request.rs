//! The request builder: a [`Context`] and one [`Call`] become the JSON
//! body of a streaming `POST /v1/responses`
//! ([`OpenAiResponses`]' [`Protocol::body`](crate::config::Protocol::body)).
//!
//! The `input` items follow Pi's `convertResponsesMessages`:
//!
//! - A user message is `{"role": "user", "content": [...]}` with
//!   `input_text` parts and `input_image` parts (`detail: "auto"`, the
//!   image as a `data:` URL). A user message of blocks with none left is
//!   skipped.
//! - An assistant message becomes one item per block, in order: a thinking
//!   block's `thinkingSignature` is the reasoning item the
//!   [projector](super::projector) kept, sent back as it was (its `id` and
//!   `encrypted_content` included); thinking without a signature is not
//!   sent. A text block is a `message` item (`output_text` with
//!   `annotations: []`, `status: "completed"`) whose `id` comes from the
//!   block's `textSignature` (`{"v":1,"id":…}` or a plain id), else
//!   `msg_N` (N the message's position); an id over 64 characters becomes
//!   `msg_` + a short hash. A tool call is a `function_call` item: Pi's id
//!   `CALL_ID|ITEM_ID` is split into `call_id` and `id`; the item id is
//!   left out for a call of another model of the same provider and API
//!   (OpenAI pairs `fc_` ids with the reasoning items of their own model).
//!   Its `arguments` are the JSON text of the arguments.
//! - A tool result is a `function_call_output` item with the `call_id`
//!   and the text (the text blocks joined by newlines), or, when the result
//!   has images, a list of `input_text` and `input_image` parts; a result
//!   with images only and no text is the list of images.
//! - Before that, the history goes through
//!   [`transform_messages`](agentstream::message::transform) for this
//!   provider, API and model: failed and aborted turns are left out,
//!   unanswered calls get an error result, thinking of another model
//!   becomes text. Tool-call ids of another model are normalized as Pi
//!   does: to `[a-zA-Z0-9_-]`, at most 64 characters; for the providers
//!   that take Pi's `CALL|ITEM` ids (`openai`, `openai-codex`, `opencode`)
//!   the item part becomes `fc_` + a short hash of it.
//! - The history is checked with the tool-call linkage validator.
//!
//! Prompt caching, as pi-ai does it: with a session id and a `Short` or
//! `Long` [`CacheRetention`], `prompt_cache_key` is the session id (and the
//! `session_id` and `x-client-request-id` headers carry it, see
//! [`OpenAiResponses`]); `Long` adds `prompt_cache_retention: "24h"`.
//!
//! The body: `model`, `input`, `stream: true`, `store` (default `false`)
//! and, when not storing, `include: ["reasoning.encrypted_content"]` so
//! reasoning can be sent back; `instructions` for the system prompt; the
//! tools as `{"type": "function", name, description, parameters, "strict":
//! false}`; and when set `max_output_tokens`, `temperature`, `top_p`,
//! `tool_choice`, `reasoning: {effort, summary}` and `text: {"format":
//! {"type": "json_schema", …}}`. The stop sequences and the thinking
//! budget have no Responses field and are not sent.
//!
//! # Where this differs from Pi
//!
//! - The system prompt goes in `instructions` (Pi sends a `developer` or
//!   `system` input message, chosen by whether its model table marks the
//!   model as reasoning; this crate has no model table, and `instructions`
//!   is what every Responses model reads).
//! - `include: ["reasoning.encrypted_content"]` is sent whenever `store`
//!   is `false`, not only when a reasoning effort is set, so a reasoning
//!   model's reasoning always comes back with a signature.
//! - Without an effort, no `reasoning` member is sent (Pi sends
//!   `{"effort": "none"}` to models its table marks as reasoning) unless
//!   the call describes its model: see below.
//!
//! # Thinking levels
//!
//! A call's [`ThinkingLevel`], or a
//! call that describes its model ([`thinking_model`](StreamOptions::thinking_model))
//! without an older reasoning effort or summary, is sent as pi-ai's
//! `streamSimpleOpenAIResponses` sends it, for a model that reasons: the
//! level clamped to the model's levels; with an effort (the level map's
//! name for it, else Pi's), `reasoning: {effort, summary}` (summary
//! `auto` unless set); with `off`, `reasoning: {effort: "none"}` (the
//! map's name for `off`; nothing where the map marks `off` unsupported,
//! or for the `github-copilot` provider).
//! - A thinking signature that is not a JSON object is left out (Pi's
//!   request fails on it).
//! - Tool choice and structured output are sent (Pi's provider has
//!   neither); stop sequences are not (the Responses API has none).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{AssistantMessage, ContentBlock, Context, Message, UserContent};
use agentstream::model::{
    CacheRetention, ReasoningEffort, StreamOptions, ThinkingLevel, ToolChoice,
};

use super::config::OpenAiResponses;
use super::projector::OPENAI_RESPONSES_API;
use crate::config::Call;
pub use crate::request::RequestError;
use crate::request::{blocking_diagnostics, caching, result_images, result_text, OptionFields};

/// How a reasoning model summarizes its reasoning (`reasoning.summary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// `auto`: the model's default detail (sent when only an effort is set).
    Auto,
    /// `concise`.
    Concise,
    /// `detailed`.
    Detailed,
}

impl ReasoningSummary {
    /// The name the API reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Concise => "concise",
            Self::Detailed => "detailed",
        }
    }
}

/// Where the Responses API carries each per-call option: all top-level,
/// no stop sequences; `reasoning` holds `{effort, summary}` and `text`
/// holds `{"format": {"type": "json_schema", …}}`.
pub(crate) const FIELDS: OptionFields = OptionFields {
    max_tokens: "max_output_tokens",
    temperature: "temperature",
    top_p: "top_p",
    stop: None,
    tool_choice: "tool_choice",
    reasoning: "reasoning",
    response_format: "text",
    cache_key: Some("prompt_cache_key"),
    cache_retention: Some("prompt_cache_retention"),
};

/// The providers whose tool-call ids take Pi's `CALL_ID|ITEM_ID` form.
const PAIRED_ID_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

/// Pi's `shortHash`: two 32-bit multiplicative hashes over the UTF-16
/// code units, written in base 36.
pub(crate) fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        let unit = u32::from(unit);
        h1 = (h1 ^ unit).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ unit).wrapping_mul(1_597_334_677);
    }
    let m1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    let m2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (m1 ^ (m1 >> 13)).wrapping_mul(3_266_489_909);
    let mut out = base36(m2);
    out.push_str(&base36(m1));
    out
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().map(|&d| char::from(d)).collect()
}

/// Pi's `normalizeIdPart`: `[^a-zA-Z0-9_-]` → `_`, at most 64
/// characters, trailing `_` removed.
fn normalize_id_part(part: &str) -> String {
    let sanitized: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    String::from(sanitized.trim_end_matches('_'))
}

/// The id of a tool call of another model, for `provider`.
fn normalize_foreign_id(id: &str, provider: &str, paired: &[&str]) -> String {
    let Some((call, item)) = id.split_once('|').filter(|_| paired.contains(&provider)) else {
        return normalize_id_part(id);
    };
    let item = item.split('|').next().unwrap_or("");
    let mut item_id = format!("fc_{}", short_hash(item));
    item_id.truncate(64);
    format!("{}|{item_id}", normalize_id_part(call))
}

/// Builds the JSON body of a streaming Responses request for `call` with
/// the protocol's settings (`store`, the reasoning summary). See the
/// [module documentation](self).
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub(crate) fn build_request(
    context: &Context,
    settings: &OpenAiResponses,
    call: &Call<'_>,
) -> Result<Value, RequestError> {
    let dialect = Dialect {
        api: OPENAI_RESPONSES_API,
        store: Some(settings.store),
        reasoning_summary: settings.reasoning_summary,
        paired_id_providers: &PAIRED_ID_PROVIDERS,
        cache_by_retention: true,
    };
    write_body(context, &dialect, call)
}

/// Where the Responses dialects (OpenAI's own, Azure OpenAI's) differ in
/// the body: the rest of [`write_body`] is theirs alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    /// Pi's api id, which the history's own messages record.
    pub(crate) api: &'static str,
    /// `store` (OpenAI: with the encrypted reasoning included when
    /// `false`); `None` sends no `store`, and includes the encrypted
    /// reasoning only with a reasoning setting (Azure).
    pub(crate) store: Option<bool>,
    /// `reasoning.summary`, if any.
    pub(crate) reasoning_summary: Option<ReasoningSummary>,
    /// The providers whose `call|item` tool-call ids are kept paired.
    pub(crate) paired_id_providers: &'static [&'static str],
    /// OpenAI: the session id is the cache key unless caching is off, and
    /// the long retention is sent. Azure: the session id is the cache key
    /// whatever the retention, and no retention is sent.
    pub(crate) cache_by_retention: bool,
}

/// The body of a streaming Responses request for `call` in `dialect`.
pub(crate) fn write_body(
    context: &Context,
    dialect: &Dialect,
    call: &Call<'_>,
) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, dialect.api, call.model);
    let history = transform_messages(&context.messages, &target, |id: &str| {
        normalize_foreign_id(id, call.provider, dialect.paired_id_providers)
    });
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let mut input: Vec<Value> = Vec::with_capacity(history.len());
    // Pi's message counter: messages that gave no item do not count.
    let mut position = 0usize;
    for message in history.iter().map(|m| &**m) {
        match message {
            Message::User(m) => {
                let parts: Vec<Value> = match &m.content {
                    UserContent::Text(text) => {
                        alloc::vec![json!({"type": "input_text", "text": text})]
                    }
                    UserContent::Blocks(blocks) => blocks.iter().filter_map(input_part).collect(),
                };
                if parts.is_empty() {
                    continue;
                }
                input.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(m) => {
                let same_provider_other_model =
                    m.model != call.model && m.provider == call.provider && m.api == dialect.api;
                let before = input.len();
                assistant_items(m, position, same_provider_other_model, &mut input);
                if input.len() == before {
                    continue;
                }
            }
            Message::ToolResult(r) => {
                let call_id = r.tool_call_id.split('|').next().unwrap_or("");
                let text = result_text(r);
                let images: Vec<Value> = result_images(r).filter_map(input_part).collect();
                let output = if images.is_empty() {
                    Value::String(text)
                } else {
                    let mut parts = Vec::with_capacity(images.len() + 1);
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    parts.extend(images);
                    Value::Array(parts)
                };
                input.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
            Message::Unknown(_) => continue,
        }
        position += 1;
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(call.model.into()));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), Value::Bool(true));
    if let Some(store) = dialect.store {
        body.insert("store".into(), Value::Bool(store));
    }
    // pi-ai: the session id is the cache key unless caching is off; the
    // long retention is `"24h"`.
    let retention = call.options.cache_retention_or_default();
    if let (true, Some(field), Some(id)) = (
        caching(retention) || !dialect.cache_by_retention,
        FIELDS.cache_key,
        &call.options.session_id,
    ) {
        body.insert(field.into(), Value::String(id.clone()));
    }
    if let (CacheRetention::Long, Some(field), true) = (
        retention,
        FIELDS.cache_retention,
        dialect.cache_by_retention,
    ) {
        body.insert(field.into(), Value::from("24h"));
    }
    // The reasoning a thinking level maps to (`None`: no level, the
    // effort and summary as given).
    let level = level_reasoning(call.provider, call.options, dialect.reasoning_summary);
    let reasoning = match &level {
        Some(reasoning) => reasoning.is_some(),
        None => call.options.reasoning_effort.is_some() || dialect.reasoning_summary.is_some(),
    };
    if dialect.store == Some(false) || (dialect.store.is_none() && reasoning) {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), Value::String(system.clone()));
    }
    let call = call.options;
    if let Some(max) = call.max_tokens {
        body.insert(FIELDS.max_tokens.into(), Value::from(max));
    }
    if let Some(temperature) = call.temperature {
        body.insert(FIELDS.temperature.into(), Value::from(temperature));
    }
    if let Some(top_p) = call.top_p {
        body.insert(FIELDS.top_p.into(), Value::from(top_p));
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &call.tool_choice {
        let choice = match choice {
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            _ => json!("auto"),
        };
        body.insert(FIELDS.tool_choice.into(), choice);
    }
    if let Some(level) = level {
        if let Some(reasoning) = level {
            body.insert(FIELDS.reasoning.into(), reasoning);
        }
    } else if reasoning {
        let effort = call.reasoning_effort.unwrap_or(ReasoningEffort::Medium);
        let summary = dialect.reasoning_summary.unwrap_or(ReasoningSummary::Auto);
        body.insert(
            FIELDS.reasoning.into(),
            json!({"effort": effort.as_str(), "summary": summary.as_str()}),
        );
    }
    if let Some(format) = &call.response_format {
        let mut spec = json!({
            "type": "json_schema",
            "name": format.name,
            "schema": format.schema,
            "strict": format.strict,
        });
        if let Some(description) = &format.description {
            spec["description"] = Value::String(description.clone());
        }
        body.insert(FIELDS.response_format.into(), json!({ "format": spec }));
    }
    Ok(Value::Object(body))
}

/// A user or tool-result block as an input part.
fn input_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text(t) => Some(json!({"type": "input_text", "text": t.text})),
        ContentBlock::Image(image) => Some(json!({
            "type": "input_image",
            "detail": "auto",
            "image_url": crate::request::data_url(image),
        })),
        _ => None,
    }
}

/// The message item id a text signature names: `{"v":1,"id":…,"phase"?}`
/// or a plain id.
fn text_signature(signature: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(signature) = signature.filter(|s| !s.is_empty()) else {
        return (None, None);
    };
    if signature.starts_with('{') {
        if let Ok(value) = serde_json::from_str::<Value>(signature) {
            if value.get("v").and_then(Value::as_u64) == Some(1) {
                if let Some(id) = value.get("id").and_then(Value::as_str) {
                    let phase = value
                        .get("phase")
                        .and_then(Value::as_str)
                        .filter(|p| matches!(*p, "commentary" | "final_answer"))
                        .map(String::from);
                    return (Some(id.into()), phase);
                }
            }
        }
    }
    (Some(signature.into()), None)
}

fn assistant_items(
    message: &AssistantMessage,
    position: usize,
    other_model: bool,
    input: &mut Vec<Value>,
) {
    for block in &message.content {
        match block {
            ContentBlock::Thinking(t) => {
                let item = t
                    .thinking_signature
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .filter(Value::is_object);
                if let Some(item) = item {
                    input.push(item);
                }
            }
            ContentBlock::Text(t) => {
                let (id, phase) = text_signature(t.text_signature.as_deref());
                let id = match id {
                    None => format!("msg_{position}"),
                    Some(id) if id.chars().count() > 64 => format!("msg_{}", short_hash(&id)),
                    Some(id) => id,
                };
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": t.text, "annotations": []}],
                    "status": "completed",
                    "id": id,
                });
                if let Some(phase) = phase {
                    item["phase"] = Value::String(phase);
                }
                input.push(item);
            }
            ContentBlock::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or("");
                let item_id = parts
                    .next()
                    .filter(|id| !(other_model && id.starts_with("fc_")));
                let mut item = json!({
                    "type": "function_call",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": Value::Object(call.arguments.clone()).to_string(),
                });
                if let Some(id) = item_id {
                    item["id"] = Value::String(id.into());
                }
                input.push(item);
            }
            _ => {}
        }
    }
}

/// The `reasoning` member of a thinking level (see the [module
/// documentation](self)): `None` when the call is not one this mapping
/// covers, `Some(None)` when it sends no `reasoning`.
fn level_reasoning(
    provider: &str,
    options: &StreamOptions,
    summary: Option<ReasoningSummary>,
) -> Option<Option<Value>> {
    let covered = options.thinking.is_some()
        || (options.thinking_model.is_some()
            && options.reasoning_effort.is_none()
            && summary.is_none());
    if !covered {
        return None;
    }
    let traits = options.thinking_model.unwrap_or_default();
    if !traits.reasoning {
        return Some(None);
    }
    let level = options
        .clamped_thinking()
        .filter(|l| *l != ThinkingLevel::Off);
    if let Some(level) = level {
        let effort = traits.effort(level).unwrap_or(level.as_str());
        let summary = summary.unwrap_or(ReasoningSummary::Auto).as_str();
        return Some(Some(json!({"effort": effort, "summary": summary})));
    }
    if provider == "github-copilot" {
        return Some(None);
    }
    Some(match traits.mapped(ThinkingLevel::Off) {
        Some(None) => None,
        Some(Some(off)) => Some(json!({ "effort": off })),
        None => Some(json!({"effort": "none"})),
    })
}
