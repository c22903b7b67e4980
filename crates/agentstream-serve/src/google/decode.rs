//! A Gemini request body (`models/{model}:generateContent` and
//! `:streamGenerateContent`) decoded into Pi's context and options.

use agentstream::message::{ContentBlock, TextContent, ThinkingContent, ToolCall, UserContent};
use serde_json::{json, Map, Value};

use crate::error::{Api, ApiError};
use crate::options;
use crate::request::{self, image_block, str_at, text_block, DecodedRequest, History};

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
/// use agentstream_serve::google::decode_request;
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
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8], model: &str, stream: bool) -> Result<DecodedRequest, ApiError> {
    let mut request = request::common_bytes_at(body, "contents", false, contents_error)?;
    request.model = model.to_owned();
    request.stream = stream;
    decode(request)
}

fn contents_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => ApiError::new(
            400,
            format!(
                "Invalid value at 'contents': expected a list of contents, got {}.",
                request::kind(other)
            ),
        ),
        None => ApiError::new(
            400,
            "* GenerateContentRequest.contents: contents is not specified",
        ),
    }
}

/// A call the model made that no response has answered yet.
struct Pending {
    name: String,
    gemini_id: Option<String>,
    id: String,
}

struct Decoder {
    history: History,
    /// The calls of the last model turn not answered yet, in order.
    pending: Vec<Pending>,
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
                self.pending.clear();
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
            .map(str::to_owned);
        if let Some(call) = field(part, "functionCall", "function_call") {
            let name = str_at(call, &["name"]);
            let gemini_id = call.get("id").and_then(Value::as_str).map(str::to_owned);
            let id = gemini_id
                .clone()
                .unwrap_or_else(|| format!("{name}_{turn}_{}", self.pending.len() + 1));
            self.pending.push(Pending {
                name: name.clone(),
                gemini_id,
                id: id.clone(),
            });
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
        let position = self
            .pending
            .iter()
            .position(|p| gemini_id.is_some() && p.gemini_id.as_deref() == gemini_id)
            .or_else(|| self.pending.iter().position(|p| p.name == name));
        let id = match position {
            Some(k) => self.pending.remove(k).id,
            None => gemini_id.map_or_else(|| format!("{name}_unmatched"), str::to_owned),
        };
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
        history: History::new(Api::Google, PROVIDER, &request.model),
        pending: Vec::new(),
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
    let options = options::google(&request.object);
    Ok(decoder
        .history
        .finish(request, system, tools, false, options))
}
