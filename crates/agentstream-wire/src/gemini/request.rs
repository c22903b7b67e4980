//! The request builder: a [`Context`] and one [`Call`] become the JSON
//! body of `POST models/{model}:streamGenerateContent?alt=sse` (the REST
//! body: the model is in the URL, not the body), [`Gemini`](super::Gemini)'s
//! [`Protocol::body`](crate::config::Protocol::body).
//!
//! The `contents` follow Pi's `convertMessages` (google-shared):
//!
//! - A user message is a `user` turn of `text` and `inlineData` parts; a
//!   user message of blocks with none is skipped.
//! - An assistant message is a `model` turn: text blocks (empty or
//!   whitespace-only ones left out) as `text` parts; thinking (empty ones
//!   left out) as `{"thought": true, "text"}`; tool calls as
//!   `functionCall` parts with `name` and `args` (and `id` for the models
//!   behind Google's APIs that need one: `claude-*`, `gpt-oss-*`). A
//!   signature is sent back on the part it came with, as
//!   `thoughtSignature` (a text's `textSignature`, a thinking's
//!   `thinkingSignature`, a call's `thoughtSignature`), only to the same
//!   model and only when it is base64 (Google refuses other bytes). A turn
//!   left with no part is skipped.
//! - A tool result is a `functionResponse` part with the tool's `name` and
//!   `response: {"output": TEXT}` (`{"error": TEXT}` for an error result);
//!   Gemini pairs responses with calls by name and position, not by id.
//!   Consecutive results share one `user` turn. Images of a result go in
//!   the response's `parts` for Gemini 3 and later (and models that are
//!   not Gemini); for older Gemini in a following `user` turn that starts
//!   with the text `Tool result image:`.
//! - Before that, the history goes through
//!   [`transform_messages`](agentstream::message::transform) for this
//!   provider, API ([`Gemini::api`](super::Gemini::api): `google-generative-ai`, or
//!   `google-vertex` on Vertex AI) and model, and the tool-call
//!   linkage is checked, as for the other providers.
//!
//! The rest of the body: `systemInstruction: {"parts": [{"text"}]}`;
//! `tools: [{"functionDeclarations": [{name, description,
//! parametersJsonSchema}]}]` (or `parameters` with the subset of
//! [`schema`](super::schema) in [`SchemaMode::OpenApi`]); `toolConfig:
//! {"functionCallingConfig": {"mode"}}` when there are tools and a tool
//! choice (`AUTO`, `NONE`, `ANY`, or `ANY` with `allowedFunctionNames` for
//! one tool); `generationConfig` with `maxOutputTokens`, `temperature`,
//! `topP`, `stopSequences`, `thinkingConfig` (see [`Gemini::thinking_for`](super::Gemini::thinking_for))
//! and, for structured output,
//! `responseMimeType: "application/json"` with `responseJsonSchema` (or
//! `responseSchema`).
//!
//! # Where this differs from Pi
//!
//! - Without a [`Thinking`] setting no `thinkingConfig` is sent (Pi turns
//!   thinking off for the models its table marks as reasoning; use
//!   [`Thinking::Off`] for that, which sends Pi's off setting for the
//!   model).
//! - Stop sequences, `topP` and structured output are sent (Pi's provider
//!   has none of them).
//! - Pi sends a tool result's images only when its model table says the
//!   model reads images; this crate has no table and always sends them.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{ContentBlock, Context, Message, ToolResultMessage, UserContent};
use agentstream::model::{ReasoningEffort, ToolChoice};

use super::schema::to_openapi;
use crate::config::Call;
pub use crate::request::RequestError;
use crate::request::{blocking_diagnostics, result_images, result_text, OptionFields};

/// Where Gemini carries each per-call option: inside [`GENERATION_CONFIG`]
/// but the tool choice, which is top-level (`{"functionCallingConfig":
/// {"mode", "allowedFunctionNames"?}}`); `thinkingConfig` holds the
/// [`Thinking`] setting; the format is `responseJsonSchema` (or
/// [`RESPONSE_SCHEMA`] in [`SchemaMode::OpenApi`]) beside
/// `responseMimeType: "application/json"`.
pub(crate) const FIELDS: OptionFields = OptionFields {
    max_tokens: "maxOutputTokens",
    temperature: "temperature",
    top_p: "topP",
    stop: Some("stopSequences"),
    tool_choice: "toolConfig",
    reasoning: "thinkingConfig",
    response_format: "responseJsonSchema",
    cache_key: None,
    cache_retention: None,
};

/// The object holding the generation options.
pub(crate) const GENERATION_CONFIG: &str = "generationConfig";

/// The format's field in [`SchemaMode::OpenApi`].
pub(crate) const RESPONSE_SCHEMA: &str = "responseSchema";

/// How tool and response schemas are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SchemaMode {
    /// `parametersJsonSchema` / `responseJsonSchema`: JSON Schema as it is
    /// (Pi's default).
    #[default]
    JsonSchema,
    /// `parameters` / `responseSchema`: the OpenAPI-style subset (see
    /// [`schema`](super::schema)), for endpoints without the JSON Schema
    /// fields.
    OpenApi,
}

/// Gemini 3's `thinkingLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThinkingLevel {
    /// `MINIMAL`.
    Minimal,
    /// `LOW`.
    Low,
    /// `MEDIUM`.
    Medium,
    /// `HIGH`.
    High,
}

impl ThinkingLevel {
    /// The name the API reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "MINIMAL",
            Self::Low => "LOW",
            Self::Medium => "MEDIUM",
            Self::High => "HIGH",
        }
    }
}

/// The thinking setting (`generationConfig.thinkingConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Thinking {
    /// Thinking off, as Pi turns it off for the model: `thinkingLevel`
    /// `LOW` for Gemini 3 Pro, `MINIMAL` for Gemini 3 Flash and Gemma 4,
    /// `thinkingBudget: 0` otherwise.
    Off,
    /// `includeThoughts: true` with `thinkingBudget` (`-1`: dynamic).
    Budget(i64),
    /// `includeThoughts: true` with `thinkingLevel` (Gemini 3).
    Level(ThinkingLevel),
}

/// Whether `model` (lower-cased) names `gemini-3[.N]-{kind}`.
fn is_gemini3(model: &str, kind: &str) -> bool {
    let model = model.to_ascii_lowercase();
    let mut rest = model.as_str();
    while let Some(at) = rest.find("gemini-3") {
        let after = &rest[at + "gemini-3".len()..];
        let after = match after.strip_prefix('.') {
            Some(minor) => {
                let digits = minor.bytes().take_while(u8::is_ascii_digit).count();
                if digits == 0 {
                    rest = after;
                    continue;
                }
                &minor[digits..]
            }
            None => after,
        };
        if after.strip_prefix('-').is_some_and(|k| k.starts_with(kind)) {
            return true;
        }
        rest = after;
    }
    false
}

fn is_gemma4(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    model.contains("gemma4") || model.contains("gemma-4")
}

/// The thinking setting Pi gives a reasoning effort on `model`.
pub(super) fn effort_thinking(model: &str, effort: ReasoningEffort) -> Thinking {
    let low = matches!(effort, ReasoningEffort::Minimal | ReasoningEffort::Low);
    if is_gemini3(model, "pro") {
        return Thinking::Level(if low {
            ThinkingLevel::Low
        } else {
            ThinkingLevel::High
        });
    }
    if is_gemma4(model) {
        return Thinking::Level(if low {
            ThinkingLevel::Minimal
        } else {
            ThinkingLevel::High
        });
    }
    if is_gemini3(model, "flash") {
        return Thinking::Level(match effort {
            ReasoningEffort::Minimal => ThinkingLevel::Minimal,
            ReasoningEffort::Low => ThinkingLevel::Low,
            ReasoningEffort::Medium => ThinkingLevel::Medium,
            _ => ThinkingLevel::High,
        });
    }
    let table: Option<[i64; 4]> = if model.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if model.contains("2.5-flash-lite") {
        Some([512, 2048, 8192, 24576])
    } else if model.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    let slot = match effort {
        ReasoningEffort::Minimal => 0,
        ReasoningEffort::Low => 1,
        ReasoningEffort::Medium => 2,
        _ => 3,
    };
    Thinking::Budget(table.map_or(-1, |t| t[slot]))
}

fn thinking_config(model: &str, thinking: Thinking) -> Value {
    match thinking {
        Thinking::Off if is_gemini3(model, "pro") => json!({"thinkingLevel": "LOW"}),
        Thinking::Off if is_gemini3(model, "flash") || is_gemma4(model) => {
            json!({"thinkingLevel": "MINIMAL"})
        }
        Thinking::Off => json!({"thinkingBudget": 0}),
        Thinking::Budget(budget) => json!({"includeThoughts": true, "thinkingBudget": budget}),
        Thinking::Level(level) => json!({"includeThoughts": true, "thinkingLevel": level.as_str()}),
    }
}

/// Models behind Google's APIs that need call ids (Pi's
/// `requiresToolCallId`).
fn requires_call_id(model: &str) -> bool {
    model.starts_with("claude-") || model.starts_with("gpt-oss-")
}

/// Gemini's major version, from `gemini-N…` / `gemini-live-N…`.
fn gemini_major(model: &str) -> Option<u32> {
    let model = model.to_ascii_lowercase();
    let rest = model.strip_prefix("gemini-")?;
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Google takes thought signatures as standard padded base64 only.
pub(crate) fn valid_signature(signature: &str) -> bool {
    let body = signature.trim_end_matches('=');
    !signature.is_empty()
        && signature.len() % 4 == 0
        && signature.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Builds the JSON body of a `streamGenerateContent` request for `call`
/// with the protocol's settings: the API's name, the schema mode, and
/// the thinking setting [`Gemini::thinking_for`](super::Gemini::thinking_for)
/// chose for the call. See the [module documentation](self).
///
/// # Errors
/// A [`RequestError`] with the linkage diagnostics when tool calls and
/// results do not pair up.
pub(crate) fn build_request(
    context: &Context,
    api: &str,
    schema_mode: SchemaMode,
    thinking: Option<Thinking>,
    call: &Call<'_>,
) -> Result<Value, RequestError> {
    let model = call.model;
    let target = TargetModel::new(call.provider, api, model);
    let with_ids = requires_call_id(model);
    let history = transform_messages(&context.messages, &target, |id: &str| {
        if with_ids {
            id.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect()
        } else {
            id.into()
        }
    });
    let diagnostics = blocking_diagnostics(history.iter().map(|m| &**m));
    if !diagnostics.is_empty() {
        return Err(RequestError { diagnostics });
    }
    let mut contents: Vec<Value> = Vec::with_capacity(history.len());
    for message in history.iter().map(|m| &**m) {
        match message {
            Message::User(m) => {
                let parts: Vec<Value> = match &m.content {
                    UserContent::Text(text) => alloc::vec![json!({"text": text})],
                    UserContent::Blocks(blocks) => blocks.iter().filter_map(user_part).collect(),
                };
                if !parts.is_empty() {
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            Message::Assistant(m) => {
                let same = m.provider == call.provider && m.model == call.model;
                let signature = |s: &Option<String>| {
                    s.as_deref()
                        .filter(|s| same && valid_signature(s))
                        .map(|s| Value::String(s.into()))
                };
                let mut parts: Vec<Value> = Vec::with_capacity(m.content.len());
                for block in &m.content {
                    let mut part = match block {
                        ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                            let mut part = json!({"text": t.text});
                            if let Some(s) = signature(&t.text_signature) {
                                part["thoughtSignature"] = s;
                            }
                            part
                        }
                        ContentBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                            if same {
                                let mut part = json!({"thought": true, "text": t.thinking});
                                if let Some(s) = signature(&t.thinking_signature) {
                                    part["thoughtSignature"] = s;
                                }
                                part
                            } else {
                                json!({"text": t.thinking})
                            }
                        }
                        ContentBlock::ToolCall(call) => {
                            let mut function_call =
                                json!({"name": call.name, "args": call.arguments});
                            if with_ids {
                                function_call["id"] = Value::String(call.id.clone());
                            }
                            let mut part = json!({ "functionCall": function_call });
                            if let Some(s) = signature(&call.thought_signature) {
                                part["thoughtSignature"] = s;
                            }
                            part
                        }
                        _ => continue,
                    };
                    if let Some(object) = part.as_object_mut() {
                        object.retain(|_, v| !v.is_null());
                    }
                    parts.push(part);
                }
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::ToolResult(r) => push_tool_result(r, model, with_ids, &mut contents),
            Message::Unknown(_) => {}
        }
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    let openapi = schema_mode == SchemaMode::OpenApi;
    let call = call.options;
    let tools = context.tools.as_ref().filter(|t| !t.is_empty());
    if let Some(tools) = tools {
        let declarations: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let mut declaration = json!({"name": tool.name, "description": tool.description});
                if openapi {
                    declaration["parameters"] = to_openapi(&tool.parameters);
                } else {
                    declaration["parametersJsonSchema"] = tool.parameters.clone();
                }
                declaration
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
        if let Some(choice) = &call.tool_choice {
            let config = match choice {
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
                _ => json!({"mode": "AUTO"}),
            };
            body.insert(
                FIELDS.tool_choice.into(),
                json!({ "functionCallingConfig": config }),
            );
        }
    }
    let mut config = Map::new();
    if let Some(max) = call.max_tokens {
        config.insert(FIELDS.max_tokens.into(), Value::from(max));
    }
    if let Some(temperature) = call.temperature {
        config.insert(FIELDS.temperature.into(), Value::from(temperature));
    }
    if let Some(top_p) = call.top_p {
        config.insert(FIELDS.top_p.into(), Value::from(top_p));
    }
    if let (Some(stop), Some(field)) = (call.stop.as_ref().filter(|s| !s.is_empty()), FIELDS.stop) {
        config.insert(field.into(), Value::from(stop.clone()));
    }
    if let Some(thinking) = thinking {
        config.insert(FIELDS.reasoning.into(), thinking_config(model, thinking));
    }
    if let Some(format) = &call.response_format {
        config.insert(
            "responseMimeType".into(),
            Value::String("application/json".into()),
        );
        if openapi {
            config.insert(RESPONSE_SCHEMA.into(), to_openapi(&format.schema));
        } else {
            config.insert(FIELDS.response_format.into(), format.schema.clone());
        }
    }
    if !config.is_empty() {
        body.insert(GENERATION_CONFIG.into(), Value::Object(config));
    }
    Ok(Value::Object(body))
}

fn user_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text(t) => Some(json!({"text": t.text})),
        ContentBlock::Image(image) => Some(json!({
            "inlineData": {"mimeType": image.mime_type, "data": image.data}
        })),
        _ => None,
    }
}

fn push_tool_result(
    result: &ToolResultMessage,
    model: &str,
    with_ids: bool,
    contents: &mut Vec<Value>,
) {
    let text = result_text(result);
    let images: Vec<Value> = result_images(result).filter_map(user_part).collect();
    let nested_images = gemini_major(model).map_or(true, |major| major >= 3);
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        String::from("(see attached image)")
    } else {
        String::new()
    };
    let key = if result.is_error { "error" } else { "output" };
    let mut response = json!({"name": result.tool_name, "response": { key: value }});
    if !images.is_empty() && nested_images {
        response["parts"] = Value::Array(images.clone());
    }
    if with_ids {
        response["id"] = Value::String(result.tool_call_id.clone());
    }
    let part = json!({ "functionResponse": response });
    let merged = contents.last_mut().and_then(|last| {
        let is_results = last["role"] == "user"
            && last["parts"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()));
        if is_results {
            last["parts"].as_array_mut()
        } else {
            None
        }
    });
    match merged {
        Some(parts) => parts.push(part),
        None => contents.push(json!({"role": "user", "parts": [part]})),
    }
    if !images.is_empty() && !nested_images {
        let mut parts = Vec::with_capacity(images.len() + 1);
        parts.push(json!({"text": "Tool result image:"}));
        parts.extend(images);
        contents.push(json!({"role": "user", "parts": parts}));
    }
}
