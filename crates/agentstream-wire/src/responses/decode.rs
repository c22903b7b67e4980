//! OpenAI Responses, the server's reading of a request: a request body
//! to a Pi [`Context`](agentstream::message::Context) and options (what
//! [`OpenAiResponses`](crate::responses::OpenAiResponses)'s body writer writes, read back).
//!
//! # What is read
//!
//! `input` is required: a string (one user message) or an array of items.
//! `instructions`, and `system` and `developer` messages, become the
//! system prompt (joined with a blank line). A `user` message's content is
//! a string or `input_text` and `input_image` parts (a `data:` URL becomes
//! an image block; other images are dropped). Consecutive `message` items
//! of role `assistant`, `reasoning` items and `function_call` items make
//! one assistant turn, as the request builder of the wire crate writes
//! one: an assistant message is a text block whose `textSignature` is
//! `{"v":1,"id":ITEM_ID}`; a reasoning item is a thinking block (its
//! summary texts joined by a blank line) whose `thinkingSignature` is the
//! item's JSON, `encrypted_content` included, so it goes back unchanged; a
//! function call is a tool call with Pi's id `CALL_ID|ITEM_ID` (`CALL_ID`
//! when the item has no id). A `function_call_output` is the result of the
//! call with its `call_id`, its output a string or `input_text` and
//! `input_image` parts. Tools of type `function` become Pi tools (others,
//! such as `web_search`, are dropped, as are the items of built-in tools).
//! Options: `max_output_tokens`, `temperature`, `top_p`, `tool_choice`,
//! `reasoning.effort` and `text.format` (see
//! [`options_json`](crate::server::options_json)).

use crate::server::prelude::*;
use alloc::collections::BTreeMap;

use agentstream::message::{ContentBlock, TextContent, ThinkingContent, ToolCall, UserContent};
use serde_json::{json, Value};

use crate::server::error::{Api, ApiError};
use crate::server::options;
use crate::server::request::{
    self, arguments_from_text, image_block, str_at, text_block, DecodedRequest, History,
};

/// The provider of the decoded assistant turns.
const PROVIDER: &str = "openai";

/// Decodes a Responses request body. See the [module
/// documentation](super) for what each item becomes.
///
/// ```
/// use agentstream_wire::responses::decode::decode_request;
/// use serde_json::json;
///
/// let body = json!({"model": "gpt-5", "stream": true, "instructions": "Be brief.",
///                   "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]});
/// let request = decode_request(&body).unwrap();
/// assert_eq!(request.context.system_prompt.as_deref(), Some("Be brief."));
/// assert_eq!(request.context.messages.len(), 1);
/// assert!(request.stream);
/// ```
///
/// # Errors
/// The 400 [`ApiError`] OpenAI answers with: a body that is not an object,
/// a missing or malformed `input`, an item of unknown type or role.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ApiError> {
    decode_body(body.to_string().as_bytes())
}

/// [`decode_request`] from the body's bytes, with memory proportional to
/// the body: the input items are parsed one at a time.
///
/// A lone UTF-16 surrogate escape in a string (`"\ud800"` alone) is
/// read as U+FFFD, as the projectors read one.
///
/// # Errors
/// As [`decode_request`], and a 400 for a body that is not JSON.
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    decode_body_as(body, Api::Responses, PROVIDER)
}

/// [`decode_body`] with the history's own messages recorded as `api`'s
/// from `provider` (Azure's Responses body is OpenAI's).
pub(crate) fn decode_body_as(
    body: &[u8],
    api: Api,
    provider: &'static str,
) -> Result<DecodedRequest, ApiError> {
    request::replacing_lone_surrogates(body, |body| {
        decode(
            request::common_bytes_at(body, "input", true, input_error)?,
            api,
            provider,
        )
    })
}

fn input_error(found: Option<&Value>) -> ApiError {
    match found {
        Some(other) => ApiError::new(
            400,
            format!(
                "Invalid type for 'input': expected a string or an array, but got {} instead.",
                agentstream::message::json_kind(other)
            ),
        )
        .with_param("input")
        .with_code("invalid_type"),
        None => ApiError::new(400, "Missing required parameter: 'input'.")
            .with_param("input")
            .with_code("missing_required_parameter"),
    }
}

/// The decoding state: the history, the assistant blocks of the items so
/// far that have not been closed by another kind of item, and the Pi id
/// of each `call_id`.
struct Decoder {
    history: History,
    system: Vec<String>,
    assistant: Vec<ContentBlock>,
    call_ids: BTreeMap<String, String>,
}

impl Decoder {
    fn flush(&mut self) {
        if !self.assistant.is_empty() {
            self.history.assistant(core::mem::take(&mut self.assistant));
        }
    }

    fn item(&mut self, i: usize, item: &Value) -> Result<(), ApiError> {
        let bad = |what: &str| {
            ApiError::new(400, format!("Invalid value for 'input[{i}]': {what}"))
                .with_param(format!("input[{i}]"))
                .with_code("invalid_value")
        };
        if let Value::String(text) = item {
            self.flush();
            self.history.user(UserContent::Text(text.clone()));
            return Ok(());
        }
        if !item.is_object() {
            return Err(bad("expected an object"));
        }
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => {
                let content = item.get("content").unwrap_or(&Value::Null);
                match item.get("role").and_then(Value::as_str) {
                    Some("user") => {
                        self.flush();
                        self.history.user(user_content(content));
                    }
                    Some("system" | "developer") => {
                        self.system.push(request::joined_text(content, "\n"));
                    }
                    Some("assistant") => {
                        let text = request::joined_text(content, "");
                        let signature = item
                            .get("id")
                            .and_then(Value::as_str)
                            .map(|id| json!({"v": 1, "id": id}).to_string());
                        self.assistant.push(ContentBlock::Text(TextContent {
                            text,
                            text_signature: signature,
                            ..TextContent::default()
                        }));
                    }
                    Some(other) => {
                        return Err(bad(&format!(
                            "unknown role '{other}', expected one of user, assistant, system, developer"
                        )))
                    }
                    None => return Err(bad("missing 'role'")),
                }
            }
            "reasoning" => {
                let summary: Vec<&str> = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect();
                self.assistant.push(ContentBlock::Thinking(ThinkingContent {
                    thinking: summary.join("\n\n"),
                    thinking_signature: Some(item.to_string()),
                    ..ThinkingContent::default()
                }));
            }
            "function_call" => {
                let call_id = str_at(item, &["call_id"]);
                let id = match item.get("id").and_then(Value::as_str) {
                    Some(item_id) => format!("{call_id}|{item_id}"),
                    None => call_id.clone(),
                };
                self.call_ids.insert(call_id, id.clone());
                let (arguments, raw_arguments) = arguments_from_text(&str_at(item, &["arguments"]));
                self.assistant.push(ContentBlock::ToolCall(ToolCall {
                    id,
                    name: str_at(item, &["name"]),
                    arguments,
                    raw_arguments,
                    ..ToolCall::default()
                }));
            }
            "function_call_output" => {
                self.flush();
                let call_id = str_at(item, &["call_id"]);
                let id = self.call_ids.get(&call_id).cloned().unwrap_or(call_id);
                let content = match item.get("output") {
                    Some(Value::Array(parts)) => parts.iter().filter_map(input_part).collect(),
                    Some(other) => vec![text_block(request::joined_text(other, ""))],
                    None => Vec::new(),
                };
                self.history.tool_result(id, content, false);
            }
            // Items of other tools (web search, file search, …) carry no
            // conversation Pi has a place for.
            "item_reference"
            | "web_search_call"
            | "file_search_call"
            | "computer_call"
            | "computer_call_output"
            | "image_generation_call"
            | "code_interpreter_call"
            | "local_shell_call"
            | "local_shell_call_output"
            | "mcp_call"
            | "mcp_list_tools"
            | "custom_tool_call"
            | "custom_tool_call_output" => {}
            other => return Err(bad(&format!("unknown item type '{other}'"))),
        }
        Ok(())
    }
}

fn decode(
    request: request::Common<'_>,
    api: Api,
    provider: &'static str,
) -> Result<DecodedRequest, ApiError> {
    let mut decoder = Decoder {
        history: History::new(api, provider, &request.model),
        system: Vec::new(),
        assistant: Vec::new(),
        call_ids: BTreeMap::new(),
    };
    if let Some(instructions) = request
        .object
        .get("instructions")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        decoder.system.push(instructions.to_owned());
    }
    request.messages.each(|i, item| decoder.item(i, item))?;
    decoder.flush();
    let Decoder {
        history, system, ..
    } = decoder;
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    let tools: Vec<agentstream::message::Tool> = request
        .object
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|tool| tool.get("type").and_then(Value::as_str) == Some("function"))
        .map(|tool| agentstream::message::Tool {
            name: str_at(tool, &["name"]),
            description: str_at(tool, &["description"]),
            parameters: tool
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            extra: serde_json::Map::new(),
        })
        .collect();
    let tools = (!tools.is_empty()).then_some(tools);
    let options = options::responses(&request.object);
    Ok(history.finish(request, system, tools, false, options))
}

/// A user message's content: a string, or `input_text` and `input_image`
/// parts (a `data:` URL becomes an image block; other images are dropped).
fn user_content(content: &Value) -> UserContent {
    match content {
        Value::Array(parts) => UserContent::Blocks(parts.iter().filter_map(input_part).collect()),
        other => UserContent::Text(request::joined_text(other, "")),
    }
}

fn input_part(part: &Value) -> Option<ContentBlock> {
    match part.get("type").and_then(Value::as_str) {
        Some("input_text" | "output_text" | "text") => Some(text_block(str_at(part, &["text"]))),
        Some("input_image") => {
            let url = str_at(part, &["image_url"]);
            let (mime_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
            Some(image_block(data.to_owned(), mime_type.to_owned()))
        }
        _ => None,
    }
}
