//! Google Gemini, the server's reading of a request: a request body
//! to a Pi [`Context`](agentstream::message::Context) and options (what
//! [`Gemini`](crate::gemini::Gemini)'s body writer writes, read back).
//!
//! # What is read
//!
//! `contents` is required (a list); the model is the URL's. Fields are
//! read in their camelCase names and, as protobuf JSON allows, their
//! snake_case ones. A `user` content's `text` and `inlineData` parts
//! become a user message; its `functionResponse` parts become tool
//! results (before that message), each paired with the call of the
//! preceding `model` content that has the same `id`, else with the first
//! unanswered call of the same name (Gemini pairs by name and position).
//! The result's text is `response.output` (or `response.error`, an error
//! result; another response is its JSON text), its images the response's
//! `parts`. A `model` content becomes an assistant turn: `text` parts text
//! blocks, `thought: true` parts thinking blocks, `functionCall` parts tool
//! calls with their `args`; a part's `thoughtSignature` is the block's
//! `textSignature`, `thinkingSignature` or the call's `thoughtSignature`
//! (a signature the encoder wrapped in base64 read back as the text it
//! wrapped, see [`signature`](super::signature)).
//! A call's id is its `functionCall.id`, else `NAME_TURN_N` (TURN the
//! content's index, N counting the turn's calls from 1), so a recording
//! is deterministic. `systemInstruction` is the system prompt (its parts'
//! texts joined by a line break); `tools[].functionDeclarations` become Pi
//! tools (the schema `parametersJsonSchema`, else `parameters`); other
//! tools (`googleSearch`, `codeExecution`) are dropped. Options:
//! `generationConfig` and `toolConfig` (see
//! [`options_json`](crate::server::options_json)).

use crate::server::prelude::*;
use alloc::collections::{BTreeMap, VecDeque};

use agentstream::message::{ContentBlock, TextContent, ThinkingContent, ToolCall, UserContent};
use serde_json::{json, Map, Value};

use crate::server::error::{Api, ApiError};
use crate::server::options;
use crate::server::request::{self, image_block, str_at, text_block, DecodedRequest, History};

/// The provider of the decoded assistant turns.
const PROVIDER: &str = "google";

/// The field `camel` of `value`, or its protobuf snake_case name `snake`.
fn field<'a>(value: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    value.get(camel).or_else(|| value.get(snake))
}

/// Decodes a Gemini request body for `model` (from the URL: the body has
/// none), streaming or not (the URL's method). See the [module
/// documentation](super).
///
/// ```
/// use agentstream_wire::gemini::decode::decode_request;
/// use serde_json::json;
///
/// let body = json!({"systemInstruction": {"parts": [{"text": "Be brief."}]},
///                   "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]});
/// let request = decode_request(&body, "gemini-2.5-flash", true).unwrap();
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert_eq!((request.model.as_str(), request.stream), ("gemini-2.5-flash", true));
/// ```
///
/// # Errors
/// The 400 [`ApiError`] Gemini answers with (`INVALID_ARGUMENT`): a body
/// that is not an object, a missing or malformed `contents`, a content
/// with an unknown role.
pub fn decode_request(body: &Value, model: &str, stream: bool) -> Result<DecodedRequest, ApiError> {
    decode_body(body.to_string().as_bytes(), model, stream)
}

/// [`decode_request`] from the body's bytes, with memory proportional to
/// the body: the contents are parsed one at a time.
///
/// A lone UTF-16 surrogate escape in a string (`"\ud800"` alone) is
/// read as U+FFFD, as the projectors read one.
///
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8], model: &str, stream: bool) -> Result<DecodedRequest, ApiError> {
    request::replacing_lone_surrogates(body, |body| {
        let mut request = request::common_bytes_at(body, "contents", false, contents_error)?;
        request.model = model.to_owned();
        request.stream = stream;
        decode(request)
    })
}

fn contents_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => ApiError::new(
            400,
            format!(
                "Invalid value at 'contents': expected a list of contents, got {}.",
                agentstream::message::json_kind(other)
            ),
        ),
        None => ApiError::new(
            400,
            "* GenerateContentRequest.contents: contents is not specified",
        ),
    }
}

/// The calls of the last model turn, for pairing responses with them in
/// time linear in their number.
#[derive(Default)]
struct Pending {
    /// Each call's Pi id, and whether a response took it.
    ids: Vec<(String, bool)>,
    /// The calls not taken, by name, in order.
    by_name: BTreeMap<String, VecDeque<usize>>,
    /// The calls with a Gemini `id`, by that id.
    by_id: BTreeMap<String, usize>,
}

impl Pending {
    fn push(&mut self, name: &str, gemini_id: Option<&str>, id: String) {
        let k = self.ids.len();
        self.ids.push((id, false));
        self.by_name
            .entry(name.to_owned())
            .or_default()
            .push_back(k);
        if let Some(gemini_id) = gemini_id {
            self.by_id.entry(gemini_id.to_owned()).or_insert(k);
        }
    }

    /// The Pi id of the call a response answers: the one with its `id`,
    /// else the first not taken with its name.
    fn take(&mut self, name: &str, gemini_id: Option<&str>) -> Option<String> {
        let by_id = gemini_id
            .and_then(|id| self.by_id.get(id).copied())
            .filter(|&k| !self.ids[k].1);
        let k = match by_id {
            Some(k) => k,
            None => {
                let queue = self.by_name.get_mut(name)?;
                loop {
                    let k = queue.pop_front()?;
                    if !self.ids[k].1 {
                        break k;
                    }
                }
            }
        };
        self.ids[k].1 = true;
        Some(self.ids[k].0.clone())
    }
}

struct Decoder {
    history: History,
    /// The calls of the last model turn.
    pending: Pending,
}

impl Decoder {
    fn content(&mut self, i: usize, content: &Value) -> Result<(), ApiError> {
        if !content.is_object() {
            return Err(ApiError::new(
                400,
                format!("Invalid value at 'contents[{i}]': expected an object."),
            ));
        }
        let parts: &[Value] = content
            .get("parts")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        match content
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user")
        {
            "model" => {
                self.pending = Pending::default();
                let blocks = parts
                    .iter()
                    .filter_map(|part| self.model_part(i, part))
                    .collect();
                self.history.assistant(blocks);
            }
            "user" | "function" => self.user(parts),
            other => {
                return Err(ApiError::new(
                    400,
                    format!(
                        "Please use a valid role: user, model. (contents[{i}].role is '{other}')"
                    ),
                ))
            }
        }
        Ok(())
    }

    fn model_part(&mut self, turn: usize, part: &Value) -> Option<ContentBlock> {
        let signature = field(part, "thoughtSignature", "thought_signature")
            .and_then(Value::as_str)
            .map(super::signature::from_wire);
        if let Some(call) = field(part, "functionCall", "function_call") {
            let name = str_at(call, &["name"]);
            let gemini_id = call.get("id").and_then(Value::as_str);
            let id = gemini_id.map_or_else(
                || format!("{name}_{turn}_{}", self.pending.ids.len() + 1),
                str::to_owned,
            );
            self.pending.push(&name, gemini_id, id.clone());
            let arguments = match call.get("args") {
                Some(Value::Object(args)) => args.clone(),
                _ => Map::new(),
            };
            return Some(ContentBlock::ToolCall(ToolCall {
                id,
                name,
                arguments,
                thought_signature: signature,
                ..ToolCall::default()
            }));
        }
        let text = part.get("text").and_then(Value::as_str)?.to_owned();
        Some(
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                ContentBlock::Thinking(ThinkingContent {
                    thinking: text,
                    thinking_signature: signature,
                    ..ThinkingContent::default()
                })
            } else {
                ContentBlock::Text(TextContent {
                    text,
                    text_signature: signature,
                    ..TextContent::default()
                })
            },
        )
    }

    /// A user turn: its function responses as tool results, the rest as
    /// one user message after them.
    fn user(&mut self, parts: &[Value]) {
        let mut blocks = Vec::new();
        for part in parts {
            if let Some(response) = field(part, "functionResponse", "function_response") {
                self.tool_result(response);
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                blocks.push(text_block(text.to_owned()));
            } else if let Some(image) = inline_image(part) {
                blocks.push(image);
            }
        }
        if !blocks.is_empty() {
            let only_text = blocks.len() == 1 && matches!(blocks[0], ContentBlock::Text(_));
            let content = match blocks.pop() {
                Some(ContentBlock::Text(t)) if only_text => UserContent::Text(t.text),
                Some(last) => {
                    blocks.push(last);
                    UserContent::Blocks(blocks)
                }
                None => UserContent::Blocks(Vec::new()),
            };
            self.history.user(content);
        }
    }

    /// A function response: paired with the call of the same `id`, else
    /// the first unanswered call of the same name.
    fn tool_result(&mut self, response: &Value) {
        let name = str_at(response, &["name"]);
        let gemini_id = response.get("id").and_then(Value::as_str);
        let id = self.pending.take(&name, gemini_id).unwrap_or_else(|| {
            gemini_id.map_or_else(|| format!("{name}_unmatched"), str::to_owned)
        });
        let body = response.get("response").unwrap_or(&Value::Null);
        let (text, is_error) = match (body.get("output"), body.get("error")) {
            (Some(Value::String(output)), _) => (output.clone(), false),
            (_, Some(Value::String(error))) => (error.clone(), true),
            (Some(output), _) => (output.to_string(), false),
            (_, Some(error)) => (error.to_string(), true),
            _ if body.is_null() => (String::new(), false),
            _ => (body.to_string(), false),
        };
        let mut content = vec![text_block(text)];
        content.extend(
            response
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(inline_image),
        );
        self.history.tool_result(id, content, is_error);
    }
}

fn inline_image(part: &Value) -> Option<ContentBlock> {
    let data = field(part, "inlineData", "inline_data")?;
    Some(image_block(
        str_at(data, &["data"]),
        field(data, "mimeType", "mime_type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    ))
}

fn decode(request: request::Common<'_>) -> Result<DecodedRequest, ApiError> {
    let mut decoder = Decoder {
        history: History::new(Api::Gemini, PROVIDER, &request.model),
        pending: Pending::default(),
    };
    request
        .messages
        .each(|i, content| decoder.content(i, content))?;
    let object = Value::Object(request.object.clone().into_owned());
    let system = field(&object, "systemInstruction", "system_instruction")
        .map(|s| match s {
            Value::String(text) => text.clone(),
            other => request::joined_text(other.get("parts").unwrap_or(&Value::Null), "\n"),
        })
        .filter(|s| !s.is_empty());
    let tools: Vec<agentstream::message::Tool> = object
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| field(tool, "functionDeclarations", "function_declarations"))
        .filter_map(Value::as_array)
        .flatten()
        .map(|declaration| agentstream::message::Tool {
            name: str_at(declaration, &["name"]),
            description: str_at(declaration, &["description"]),
            parameters: field(
                declaration,
                "parametersJsonSchema",
                "parameters_json_schema",
            )
            .or_else(|| declaration.get("parameters"))
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            extra: Map::new(),
        })
        .collect();
    let tools = (!tools.is_empty()).then_some(tools);
    let options = options::gemini(&request.object);
    Ok(decoder
        .history
        .finish(request, system, tools, false, options))
}

/// The model and whether it streams, of a Gemini route:
/// `/v1beta/models/{model}:streamGenerateContent` (streaming) or
/// `:generateContent`, under `/v1beta` or `/v1`; `None` for another path.
///
/// ```
/// use agentstream_wire::gemini::decode::route;
/// assert_eq!(
///     route("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
///     Some(("gemini-2.5-flash", true))
/// );
/// assert_eq!(route("/v1/models/g:generateContent"), Some(("g", false)));
/// assert_eq!(route("/v1/models"), None);
/// ```
pub fn route(path: &str) -> Option<(&str, bool)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, method) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    match method {
        "streamGenerateContent" => Some((model, true)),
        "generateContent" => Some((model, false)),
        _ => None,
    }
}
