//! The request decoding both protocols share: the fields every request
//! body has (`model`, `stream`, `messages`, `tools`), and the Pi history
//! built from its messages (tool results named after the call they
//! answer, assistant turns with deterministic metadata). Each protocol
//! module reads its own message shapes and hands the pieces to
//! [`History`].

use crate::server::prelude::*;
use alloc::collections::BTreeMap;

use agentstream::message::{
    assistant, json_kind, AssistantMessage, ContentBlock, Context, ImageContent, Message,
    StopReason, TextContent, Tool, ToolResultMessage, UserContent, UserMessage,
};
use agentstream::model::StreamOptions;
use alloc::borrow::Cow;

use serde::de::value::MapAccessDeserializer;
use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::server::error::{Api, ApiError};
use crate::server::options::options_json;
pub(crate) use crate::server::view::{joined_text, Key};
use crate::server::view::{visit_scalars, HeldFields, HeldView, MessageFields, MessageView};

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
    /// [`options_json`] for the recorded form).
    pub options: StreamOptions,
}

impl DecodedRequest {
    /// A decoded request of `model` for `context` with `options`,
    /// streaming or not (`include_usage` false): what a protocol's
    /// decoder written outside this crate returns (the structure is
    /// `#[non_exhaustive]`).
    pub fn new(context: Context, model: String, stream: bool, options: StreamOptions) -> Self {
        Self {
            context,
            model,
            stream,
            include_usage: false,
            options,
        }
    }
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
    /// The whole body (decoded from bytes: without `messages`, `model`
    /// and `stream`, which are read as they are parsed).
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
    /// Each read as the body was parsed, as a [`HeldView`] (`None` for
    /// one that is not an object), by a decoder that reads views (see
    /// [`common_bytes_viewing`]): the body is parsed once, and each
    /// message's content and fields when it is decoded.
    Views(Vec<Option<HeldView<'a>>>),
    /// A string where a list may be one (OpenAI Responses' `input`).
    One(Value),
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
            Messages::One(value) => f(0, value),
            Messages::Raw(raws) => raws.iter().enumerate().try_for_each(|(i, raw)| {
                let value: Value = serde_json::from_str(raw.get()).map_err(invalid_json)?;
                f(i, &value)
            }),
            // Only a decoder that reads views asks for them, and it reads
            // them with `each_view`.
            Messages::Views(_) => Err(ApiError::new(
                500,
                "the request's messages were read as views, not as values",
            )),
        }
    }

    /// Calls `f` with each message read as a [`MessageView`] keeping
    /// `fields` (`None` for a message that is not an object) and its
    /// index, in order, until it fails. Views read as the body was
    /// parsed were read with the same `fields`, and are given away.
    pub(crate) fn each_view<'s>(
        &'s mut self,
        fields: &'static [&'static str],
        mut f: impl FnMut(usize, Option<MessageView<'s>>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let from_value = |value: &'s Value| match value {
            Value::Object(_) => MessageFields(fields)
                .deserialize(value)
                .map(Some)
                .map_err(invalid_json),
            _ => Ok(None),
        };
        match self {
            Messages::Values(values) => values
                .iter()
                .enumerate()
                .try_for_each(|(i, value)| f(i, from_value(value)?)),
            Messages::One(value) => f(0, from_value(value)?),
            Messages::Raw(raws) => raws.iter().enumerate().try_for_each(|(i, raw)| {
                // A raw value starts with its first character.
                let view = if raw.get().starts_with('{') {
                    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
                    Some(
                        MessageFields(fields)
                            .deserialize(&mut deserializer)
                            .map_err(invalid_json)?,
                    )
                } else {
                    None
                };
                f(i, view)
            }),
            Messages::Views(views) => {
                core::mem::take(views)
                    .into_iter()
                    .enumerate()
                    .try_for_each(|(i, held)| {
                        let view = held.map(HeldView::view).transpose().map_err(invalid_json)?;
                        f(i, view)
                    })
            }
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

/// [`common_bytes`] for a decoder that reads each message as a
/// [`MessageView`] keeping `fields`: the messages are read as the body is
/// parsed ([`Messages::Views`]), so the body is parsed once; each keeps
/// its role, and the text its content and fields span, until it is
/// decoded.
pub(crate) fn common_bytes_viewing<'a>(
    body: &'a [u8],
    fields: &'static [&'static str],
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'a>, ApiError> {
    read_common_bytes(body, "messages", false, Some(fields), messages_error)
}

/// [`common_bytes`] with the list of messages at `key` (`input` for
/// OpenAI Responses, `contents` for Gemini); with `string_item`, a string
/// there is a list of that one string. The body is read in one pass: the
/// fields other than the messages into JSON values, each message as the
/// text it spans.
pub(crate) fn common_bytes_at<'a>(
    body: &'a [u8],
    key: &str,
    string_item: bool,
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'a>, ApiError> {
    read_common_bytes(body, key, string_item, None, messages_error)
}

/// [`common_bytes_at`], each message read as a view keeping `views`'
/// fields when they are given.
fn read_common_bytes<'a>(
    body: &'a [u8],
    key: &str,
    string_item: bool,
    views: Option<&'static [&'static str]>,
    messages_error: impl FnOnce(Option<&Value>) -> ApiError,
) -> Result<Common<'a>, ApiError> {
    let visitor = FieldsOf { key, views };
    let read = match core::str::from_utf8(body) {
        // Checked once, whole: the parser then checks no string again.
        Ok(text) => fields_of(serde_json::Deserializer::from_str(text), visitor),
        // The parser names where the text stops being UTF-8.
        Err(_) => fields_of(serde_json::Deserializer::from_slice(body), visitor),
    };
    let Fields {
        object,
        model,
        stream,
        messages,
    } = match read {
        Ok(fields) => fields,
        Err(error) => {
            // Not an object: say what it is, or why it is not JSON.
            let value: Value = serde_json::from_slice(body).map_err(invalid_json)?;
            body_object(&value)?;
            return Err(invalid_json(error));
        }
    };
    let messages = match messages {
        Some(Listed::Items(items)) => Messages::Raw(items),
        Some(Listed::Views(views)) => Messages::Views(views),
        Some(Listed::Other(Value::String(text))) if string_item => {
            Messages::One(Value::String(text))
        }
        Some(Listed::Other(found)) => return Err(messages_error(Some(&found))),
        None => return Err(messages_error(None)),
    };
    Ok(Common {
        object: Cow::Owned(object),
        model: model.unwrap_or_default(),
        stream: stream == Some(true),
        messages,
    })
}

/// The fields `visitor` reads from the whole of `deserializer`'s text.
fn fields_of<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
    visitor: FieldsOf<'_>,
) -> Result<Fields<'de>, serde_json::Error> {
    let fields = deserializer.deserialize_map(visitor)?;
    deserializer.end()?;
    Ok(fields)
}

/// Reads a request body's fields: the one at `key` as a [`Listed`]
/// (its items as views keeping `views`' fields when given), `model` and
/// `stream` when they are a string and a boolean, the others into a map
/// (a repeated key: the last one wins).
struct FieldsOf<'k> {
    key: &'k str,
    views: Option<&'static [&'static str]>,
}

/// What [`FieldsOf`] read.
struct Fields<'a> {
    object: Map<String, Value>,
    model: Option<String>,
    stream: Option<bool>,
    messages: Option<Listed<'a>>,
}

impl<'de> Visitor<'de> for FieldsOf<'_> {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Fields {
            object: Map::new(),
            model: None,
            stream: None,
            messages: None,
        };
        while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
            if name == self.key {
                fields.messages = Some(map.next_value_seed(ListedAs(self.views))?);
                continue;
            }
            let value: Value = map.next_value()?;
            // The last `model` or `stream` wins, as in a map, even when it
            // is not a string or a boolean.
            match (&*name, value) {
                ("model", Value::String(model)) => fields.model = Some(model),
                ("model", _) => fields.model = None,
                ("stream", value) => fields.stream = value.as_bool(),
                (_, value) => {
                    fields.object.insert(name.into_owned(), value);
                }
            }
        }
        Ok(fields)
    }
}

/// The value at a body's list of messages: an array, each element kept
/// as the text it spans or read as a view, or anything else as a JSON
/// value (for the error, or a string that is a list of one).
enum Listed<'a> {
    Items(Vec<&'a RawValue>),
    Views(Vec<Option<HeldView<'a>>>),
    Other(Value),
}

/// Reads a [`Listed`]: an array's items as views keeping the fields
/// given, else as text.
struct ListedAs(Option<&'static [&'static str]>);

impl<'de> DeserializeSeed<'de> for ListedAs {
    type Value = Listed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListedAs {
    type Value = Listed<'de>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(fields) = self.0 else {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<&'de RawValue>()? {
                items.push(item);
            }
            return Ok(Listed::Items(items));
        };
        let mut views = Vec::new();
        while let Some(view) = seq.next_element_seed(ViewOf(fields))? {
            views.push(view);
        }
        Ok(Listed::Views(views))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Listed::Other)
    }

    fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Listed::Other(Value::String(text.to_owned())))
    }

    visit_scalars!(Listed::Other);
}

/// Reads one item of a list of messages: an object as a held view keeping
/// the fields given, anything else as `None` (skipped).
struct ViewOf(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for ViewOf {
    type Value = Option<HeldView<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ViewOf {
    type Value = Option<HeldView<'de>>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        HeldFields(self.0).visit_map(map).map(Some)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    visit_scalars!(|_| None);
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
        message.api = self.api.pi_api().into();
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

/// The request body as an object, or the 400 both providers send.
fn body_object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::new(
            400,
            format!(
                "the request body must be a JSON object, found {}",
                json_kind(body)
            ),
        )
    })
}

/// Tool-call arguments from their JSON text: an object, or `{}` with the
/// text kept as `rawArguments` when it is not one. A lone surrogate
/// escape in the text (`\ud800` in the request, JSON inside a JSON
/// string) becomes U+FFFD, as the client side's projectors make it.
pub(crate) fn arguments_from_text(text: &str) -> (Map<String, Value>, Option<String>) {
    let parsed = serde_json::from_str::<Value>(text).or_else(|error| {
        match crate::surrogates::replace_lone_surrogates(text) {
            Some(fixed) => serde_json::from_str::<Value>(&fixed),
            None => Err(error),
        }
    });
    match parsed {
        Ok(Value::Object(map)) => (map, None),
        _ if text.trim().is_empty() => (Map::new(), None),
        _ => (Map::new(), Some(text.to_owned())),
    }
}

/// `decode` on a request `body`; when that fails and the body has a lone
/// UTF-16 surrogate escape (`"\ud800"` alone, which JavaScript's
/// `JSON.stringify` writes for half an emoji and serde_json refuses), on
/// the body with each one replaced by `\ufffd` (U+FFFD, the rule of Pi and
/// of this crate's projectors, see [`surrogates`](crate::surrogates)). A
/// body without one is decoded once, as it is.
pub(crate) fn replacing_lone_surrogates<T>(
    body: &[u8],
    decode: impl Fn(&[u8]) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let first = decode(body);
    if first.is_ok() {
        return first;
    }
    match core::str::from_utf8(body)
        .ok()
        .and_then(crate::surrogates::replace_lone_surrogates)
    {
        Some(fixed) => decode(fixed.as_bytes()),
        None => first,
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
    fn bodies_read_from_bytes_decode_as_their_json_values() {
        use crate::anthropic::decode as anthropic;
        use crate::openai::decode as openai;
        let bodies = [
            r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
            r#"{"m\u006fdel":"m","me\u0073sages":[{"role":"user","content":"a\"b"}],"max_tokens":5}"#,
            r#"{"messages":[],"messages":[{"role":"user","content":"last wins"}],"model":"x","model":"y"}"#,
            r#"{"model":"x","model":7,"stream":true,"stream":"yes","messages":[]}"#,
            r#"{"model":{"a":[1]},"stream":false,"messages":[],"temperature":0.2,"max_tokens":9}"#,
            r#"{"messages":{"role":"user"}}"#,
            r#"{"messages":"text"}"#,
            r#"{"messages":null}"#,
            r#"{"messages":[1.5, true, null]}"#,
            r#"{"messages":[[{"deep":[[]]}]]}"#,
            r#"{}"#,
            r#"[{"messages":[]}]"#,
            r#""messages""#,
            r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}"#,
        ];
        for body in bodies {
            let value: Value = serde_json::from_str(body).unwrap();
            let outcome =
                |r: Result<DecodedRequest, ApiError>| r.map_err(|e| (e.status, e.message));
            assert_eq!(
                outcome(openai::decode_body(body.as_bytes())),
                outcome(openai::decode_request(&value)),
                "{body}"
            );
            assert_eq!(
                outcome(anthropic::decode_body(body.as_bytes())),
                outcome(anthropic::decode_request(&value)),
                "{body}"
            );
        }
        let not_utf8 = b"{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}";
        for broken in [
            &b"{\"messages\": ["[..],
            b"{\"a\":1} x",
            b"\xff",
            b"",
            not_utf8,
        ] {
            let error = openai::decode_body(broken).unwrap_err();
            assert_eq!(error.status, 400);
            assert!(
                error.message.contains("not valid JSON"),
                "{}",
                error.message
            );
        }
        // A byte that is not UTF-8 inside a string is named where it is.
        let error = openai::decode_body(not_utf8).unwrap_err();
        assert!(error.message.contains("column 43"), "{}", error.message);
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
