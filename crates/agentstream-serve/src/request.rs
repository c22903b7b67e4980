//! The request decoding both protocols share: the fields every request
//! body has (`model`, `stream`, `messages`, `tools`), and the Pi history
//! built from its messages (tool results named after the call they
//! answer, assistant turns with deterministic metadata). Each protocol
//! module reads its own message shapes and hands the pieces to
//! [`History`].

use std::collections::BTreeMap;

use agentstream::message::{
    assistant, AssistantMessage, ContentBlock, Context, ImageContent, Message, StopReason,
    TextContent, Tool, ToolResultMessage, UserContent, UserMessage,
};
use agentstream::model::StreamOptions;
use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{Api, ApiError};
use crate::options::options_json;

/// A request decoded into Pi's terms.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecodedRequest {
    /// The conversation, system prompt and tools, in Pi's JSON.
    pub context: Context,
    /// The request's `model` (empty when absent).
    pub model: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// OpenAI only: `stream_options.include_usage`.
    pub include_usage: bool,
    /// The call's options: token limit, temperature, stop sequences, tool
    /// choice, reasoning, response format (see
    /// [`options_json`](crate::options_json) for the recorded form).
    pub options: StreamOptions,
}

impl PartialEq for DecodedRequest {
    fn eq(&self, other: &Self) -> bool {
        // `StreamOptions` has no `PartialEq` (its abort signal has no
        // equality); its recorded form does.
        (&self.context, &self.model, self.stream, self.include_usage)
            == (
                &other.context,
                &other.model,
                other.stream,
                other.include_usage,
            )
            && options_json(&self.options) == options_json(&other.options)
    }
}

/// The fields both protocols read the same way.
pub(crate) struct Common<'a> {
    /// The whole body (without `messages` when decoded from bytes).
    pub(crate) object: Cow<'a, Map<String, Value>>,
    /// `model`, empty when absent.
    pub(crate) model: String,
    /// `stream: true`.
    pub(crate) stream: bool,
    /// `messages`.
    pub(crate) messages: Messages<'a>,
}

/// A request's `messages`: parsed with the body, or (decoding from
/// bytes) each kept as its JSON text and parsed one at a time, so the
/// generic JSON tree of one message at a time is alive, not that of the
/// whole conversation.
pub(crate) enum Messages<'a> {
    Values(&'a [Value]),
    Raw(Vec<&'a RawValue>),
}

impl Messages<'_> {
    /// Calls `f` with each message and its index, in order, until it
    /// fails.
    pub(crate) fn each(
        &self,
        mut f: impl FnMut(usize, &Value) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        match self {
            Messages::Values(values) => values.iter().enumerate().try_for_each(|(i, v)| f(i, v)),
            Messages::Raw(raws) => raws.iter().enumerate().try_for_each(|(i, raw)| {
                let value: Value = serde_json::from_str(raw.get()).map_err(invalid_json)?;
                f(i, &value)
            }),
        }
    }
}

/// The 400 of a body that is not JSON.
fn invalid_json(error: serde_json::Error) -> ApiError {
    ApiError::new(400, format!("the request body is not valid JSON: {error}"))
}

/// Reads the common fields of a request body. `messages_error` gives the
/// protocol's 400 for a `messages` that is missing (`None`) or not an
/// array (`Some(found)`).
pub(crate) fn common(
    body: &Value,
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'_>, ApiError> {
    let object = body_object(body)?;
    let messages = match object.get("messages") {
        Some(Value::Array(messages)) => messages,
        other => return Err(messages_error(other)),
    };
    Ok(Common {
        object: Cow::Borrowed(object),
        model: str_at(body, &["model"]),
        stream: object.get("stream").and_then(Value::as_bool) == Some(true),
        messages: Messages::Values(messages),
    })
}

/// [`common`] from the body's bytes: the fields other than `messages`
/// are parsed into JSON values, the messages are kept as text (see
/// [`Messages`]), so decoding costs memory proportional to the body.
pub(crate) fn common_bytes(
    body: &[u8],
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'_>, ApiError> {
    common_bytes_at(body, "messages", false, messages_error)
}

/// [`common_bytes`] with the list of messages at `key` (`input` for
/// OpenAI Responses, `contents` for Gemini); with `string_item`, a string
/// there is a list of that one string.
pub(crate) fn common_bytes_at<'a>(
    body: &'a [u8],
    key: &str,
    string_item: bool,
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'a>, ApiError> {
    let fields: Vec<(Cow<'_, str>, &RawValue)> = match serde_json::from_slice::<RawObject<'_>>(body) {
        Ok(RawObject(fields)) => fields,
        Err(error) => {
            // Not an object: say what it is, or why it is not JSON.
            let value: Value = serde_json::from_slice(body).map_err(invalid_json)?;
            body_object(&value)?;
            return Err(invalid_json(error));
        }
    };
    let mut object = Map::new();
    let mut messages = None;
    for (name, raw) in fields {
        if name == key {
            messages = Some(raw);
        } else {
            let value: Value = serde_json::from_str(raw.get()).map_err(invalid_json)?;
            object.insert(name.into_owned(), value);
        }
    }
    let one_string = |raw: &&RawValue| string_item && raw.get().starts_with('"');
    let messages = match messages.map(|raw| {
        if one_string(&raw) {
            Ok(vec![raw])
        } else {
            serde_json::from_str::<Vec<&RawValue>>(raw.get())
        }
    }) {
        Some(Ok(messages)) => messages,
        Some(Err(_)) => {
            let found = messages
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .unwrap_or(Value::Null);
            return Err(messages_error(Some(&found)));
        }
        None => return Err(messages_error(None)),
    };
    let model = object
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let stream = object.get("stream").and_then(Value::as_bool) == Some(true);
    Ok(Common {
        object: Cow::Owned(object),
        model,
        stream,
        messages: Messages::Raw(messages),
    })
}

/// A JSON object as its keys and the text of their values, in order (a
/// repeated key: the last one wins when they are put in a map). A key
/// without escapes is borrowed from the body.
struct RawObject<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// An object key, borrowed from the body unless it holds an escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some((Key(key), value)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    fields.push((key, value));
                }
                Ok(RawObject(fields))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// The request's `tools`, each the object at `inner` within the element
/// (or the element itself), with its `name`, `description` and the schema
/// at `schema_key` (`default_schema()` when absent). `None` for no tools.
pub(crate) fn tools(
    object: &Map<String, Value>,
    inner: Option<&str>,
    schema_key: &str,
    default_schema: fn() -> Value,
) -> Option<Vec<Tool>> {
    let tools: Vec<Tool> = object
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| match inner {
            Some(key) => tool.get(key),
            None => Some(tool),
        })
        .map(|tool| Tool {
            name: str_at(tool, &["name"]),
            description: str_at(tool, &["description"]),
            parameters: tool.get(schema_key).cloned().unwrap_or_else(default_schema),
            extra: Map::new(),
        })
        .collect();
    (!tools.is_empty()).then_some(tools)
}

/// The decoded conversation, message by message.
pub(crate) struct History {
    api: Api,
    provider: &'static str,
    model: String,
    messages: Vec<Message>,
    /// Tool names by call id, from the assistant turns so far.
    names: BTreeMap<String, String>,
}

impl History {
    /// An empty history of a request to `model` in `api`.
    pub(crate) fn new(api: Api, provider: &'static str, model: &str) -> Self {
        Self {
            api,
            provider,
            model: model.to_owned(),
            messages: Vec::new(),
            names: BTreeMap::new(),
        }
    }

    /// A user turn.
    pub(crate) fn user(&mut self, content: UserContent) {
        self.messages.push(Message::User(UserMessage {
            content,
            timestamp: 0,
            extra: Map::new(),
        }));
    }

    /// An assistant turn: zero usage, timestamp 0, `toolUse` when it calls
    /// tools (whose names later tool results take), else `stop`.
    pub(crate) fn assistant(&mut self, content: Vec<ContentBlock>) {
        let mut calls = false;
        for block in &content {
            if let ContentBlock::ToolCall(call) = block {
                calls = true;
                self.names.insert(call.id.clone(), call.name.clone());
            }
        }
        let reason = if calls {
            StopReason::ToolUse
        } else {
            StopReason::Stop
        };
        let mut message: AssistantMessage = assistant(content, reason);
        message.api = self.api.as_str().into();
        message.provider = self.provider.into();
        message.model = self.model.clone();
        message.timestamp = 0;
        self.messages.push(Message::Assistant(message));
    }

    /// The result of the call `id`, named after it (empty when no earlier
    /// assistant turn made that call).
    pub(crate) fn tool_result(&mut self, id: String, content: Vec<ContentBlock>, is_error: bool) {
        self.messages.push(Message::ToolResult(ToolResultMessage {
            tool_name: self.names.get(&id).cloned().unwrap_or_default(),
            tool_call_id: id,
            content,
            details: None,
            is_error,
            timestamp: 0,
            extra: Map::new(),
        }));
    }

    /// The decoded request.
    pub(crate) fn finish(
        self,
        request: Common<'_>,
        system_prompt: Option<String>,
        tools: Option<Vec<Tool>>,
        include_usage: bool,
        options: StreamOptions,
    ) -> DecodedRequest {
        let mut context = Context::from_messages(self.messages);
        context.system_prompt = system_prompt;
        context.tools = tools;
        DecodedRequest {
            context,
            model: request.model,
            stream: request.stream,
            include_usage,
            options,
        }
    }
}

/// The string at `path`, or empty.
pub(crate) fn str_at(value: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A content that is a string, or the `text` of an array of parts joined
/// by `separator`.
pub(crate) fn joined_text(content: &Value, separator: &str) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

/// A text block.
pub(crate) fn text_block(text: String) -> ContentBlock {
    ContentBlock::Text(TextContent {
        text,
        ..TextContent::default()
    })
}

/// An image block of base64 `data`.
pub(crate) fn image_block(data: String, mime_type: String) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data,
        mime_type,
        extra: Map::new(),
    })
}

/// A JSON kind name for error messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The request body as an object, or the 400 both providers send.
fn body_object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::new(
            400,
            format!(
                "the request body must be a JSON object, found {}",
                kind(body)
            ),
        )
    })
}

/// Tool-call arguments from their JSON text: an object, or `{}` with the
/// text kept as `rawArguments` when it is not one.
pub(crate) fn arguments_from_text(text: &str) -> (Map<String, Value>, Option<String>) {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => (map, None),
        _ if text.trim().is_empty() => (Map::new(), None),
        _ => (Map::new(), Some(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::ToolCall;
    use serde_json::json;

    #[test]
    fn results_are_named_after_earlier_calls_only() {
        let body = json!({"model": "m", "stream": true, "messages": []});
        let request = common(&body, |_| ApiError::new(400, "no")).unwrap();
        let mut history = History::new(Api::OpenAi, "openai", &request.model);
        history.tool_result("early".into(), Vec::new(), false);
        history.assistant(vec![ContentBlock::ToolCall(ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            ..ToolCall::default()
        })]);
        history.tool_result("c1".into(), vec![text_block("ok".into())], true);
        let decoded = history.finish(request, None, None, false, StreamOptions::default());
        let names: Vec<_> = decoded
            .context
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some((r.tool_name.as_str(), r.is_error)),
                _ => None,
            })
            .collect();
        assert_eq!(names, [("", false), ("ls", true)]);
        let Message::Assistant(call) = &decoded.context.messages[1] else {
            panic!()
        };
        assert_eq!(
            (
                call.stop_reason.clone(),
                call.model.as_str(),
                call.timestamp
            ),
            (StopReason::ToolUse, "m", 0)
        );
        assert!(decoded.stream);
    }

    #[test]
    fn messages_errors_are_the_protocols() {
        for (body, found) in [
            (json!({}), None),
            (json!({"messages": "x"}), Some(json!("x"))),
        ] {
            let Err(error) = common(&body, |f| ApiError::new(400, format!("{f:?}"))) else {
                panic!("{body}")
            };
            assert_eq!(error.message, format!("{:?}", found.as_ref()));
        }
        assert_eq!(
            common(&json!(1), |_| unreachable!()).err().unwrap().status,
            400
        );
    }
}
