//! Cross-dialect replay: a cassette recorded against one API answers a
//! client of another (recorded on Anthropic, replayed to the OpenAI SDK).
//!
//! When no cassette of the client's own API matches a request (the
//! default; with [`Match::Order`](super::Match::Order) never), the
//! cassettes of the other APIs are tried on the request's
//! [`neutral`] context: the Pi context every protocol decodes to, less
//! what one protocol carries and another does not. The first unplayed one
//! whose neutral context is the request's (else the last played) answers:
//! its body is decoded to Pi's events by the projector of the API it was
//! recorded on (a [`ReplayModel`]), and those events are written by the
//! client's API encoder, as a scripted turn's are.
//!
//! What cannot cross (left out of the match, and not in the answer):
//!
//! - thinking blocks and every signature (`thinkingSignature`,
//!   `textSignature`, `thoughtSignature`): each provider's own, opaque to
//!   the others (OpenAI Chat Completions sends no reasoning back at all);
//! - the assistant messages' `api`, `provider`, `model`, `usage`,
//!   `stopReason`, `responseId` and `timestamp`, and a tool result's
//!   `toolName` (Chat Completions' tool messages carry none);
//! - provider-only response fields: the recorded headers (request ids,
//!   rate limits), ids of the response, cache-write usage that the
//!   client's API has no field for, and the recorded status of a failed
//!   exchange (a failed or cut cassette answers as the model error it
//!   decodes to, after HTTP 200 when streamed).
//!
//! Tool calls keep their recorded ids where the client's API has them (a
//! Responses client reads `ID|ITEM`, its item id added; a Gemini client
//! names calls itself, as Gemini sends none). A user message whose
//! content is one text block matches the same text given as a string
//! (the protocols differ in which they send).
//!
//! Cross-dialect replay needs a streamed recording (a non-streamed
//! body is not an event stream the projectors read); a proxy recording on
//! a miss (`--replay` with `--upstream`) records the miss rather than
//! crossing.

use agentstream::message::Context;
use agentstream::model::{Model, ModelStream, StreamOptions};
use agentstream_wire::replay::{Recording, ReplayModel};
use agentstream_wire::server::ApiError;
use serde_json::{Map, Value};

use super::player::read_checked;
use super::{CassetteDir, CassetteError};

/// The fields of an assistant message that cross.
const ASSISTANT: [&str; 2] = ["role", "content"];
/// The fields of a tool result that cross.
const TOOL_RESULT: [&str; 4] = ["role", "toolCallId", "content", "isError"];
/// The fields of a tool that cross.
const TOOL: [&str; 3] = ["name", "description", "parameters"];
/// The fields of a content block that cross (the others, signatures
/// among them, do not).
const BLOCK: [&str; 7] = [
    "type",
    "text",
    "id",
    "name",
    "arguments",
    "data",
    "mimeType",
];

/// `context` (Pi's JSON) less what does not cross between APIs (see the
/// [module documentation](self)).
pub(crate) fn neutral(context: &Value) -> Value {
    let mut out = Map::new();
    if let Some(system) = context.get("systemPrompt").filter(|s| !s.is_null()) {
        out.insert("systemPrompt".into(), system.clone());
    }
    let messages = context
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    out.insert(
        "messages".into(),
        messages.iter().map(neutral_message).collect(),
    );
    let tools = context
        .get("tools")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if !tools.is_empty() {
        out.insert(
            "tools".into(),
            tools.iter().map(|tool| only(tool, &TOOL)).collect(),
        );
    }
    Value::Object(out)
}

fn neutral_message(message: &Value) -> Value {
    let mut kept = match message.get("role").and_then(Value::as_str) {
        Some("assistant") => only(message, &ASSISTANT),
        Some("toolResult") => only(message, &TOOL_RESULT),
        _ => only(message, &["role", "content"]),
    };
    if let Some(content) = kept.get_mut("content") {
        *content = neutral_content(content);
    }
    kept
}

/// Content without thinking blocks or signatures; one text block as its
/// text.
fn neutral_content(content: &Value) -> Value {
    let Value::Array(blocks) = content else {
        return content.clone();
    };
    let blocks: Vec<Value> = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) != Some("thinking"))
        .map(|block| only(block, &BLOCK))
        .collect();
    match blocks.as_slice() {
        [one] if one.get("type").and_then(Value::as_str) == Some("text") => {
            one.get("text").cloned().unwrap_or(Value::Null)
        }
        _ => Value::Array(blocks),
    }
}

/// `value`'s fields named in `keys`.
fn only(value: &Value, keys: &[&str]) -> Value {
    let Value::Object(object) = value else {
        return value.clone();
    };
    Value::Object(
        keys.iter()
            .filter_map(|&key| Some((key.to_owned(), object.get(key)?.clone())))
            .collect(),
    )
}

/// The events of cassette `name` in `dir` (its four files read again),
/// decoded by the projector of the API it was recorded on.
///
/// # Errors
/// HTTP 500 naming the cassette when a file cannot be read or is not a
/// recording.
pub(super) fn events_of(
    dir: &CassetteDir,
    name: &str,
    context: &Context,
    options: StreamOptions,
) -> Result<ModelStream, ApiError> {
    let failed = |text: String| ApiError::new(500, format!("agentstream replay: {name}: {text}"));
    let read = |leaf: &str| read_checked(dir, name, leaf).map(|(bytes, _)| bytes);
    let text = |leaf: &str| read(leaf).map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let files = (|| {
        let request = text("request.json")?;
        let response = text("response.json")?;
        let body = read("response.body")?;
        let lengths = match text("response.body.lengths") {
            Ok(lengths) => lengths,
            Err(error) if error.is_not_found() => format!("{}\n", body.len()),
            Err(error) => return Err(error),
        };
        Ok::<_, CassetteError>((request, response, body, lengths))
    })();
    let (request, response, body, lengths) = files.map_err(|error| failed(error.report()))?;
    let recording = Recording::from_cassette_files(&request, &response, &body, &lengths)
        .map_err(|error| failed(error.to_string()))?;
    Ok(ReplayModel::new([recording]).stream(context, options))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_one_api_carries_and_another_does_not_is_left_out() {
        let anthropic = json!({"systemPrompt": "Be brief.", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}], "timestamp": 1},
            {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
             "model": "m", "stopReason": "toolUse", "timestamp": 2, "usage": {"input": 1},
             "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "s"},
                         {"type": "toolCall", "id": "c1", "name": "f", "arguments": {"a": 1}}]},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "f", "isError": false,
             "content": [{"type": "text", "text": "ok"}], "timestamp": 3}],
            "tools": [{"name": "f", "description": "d", "parameters": {}}]});
        let openai = json!({"systemPrompt": "Be brief.", "messages": [
            {"role": "user", "content": "Hi", "timestamp": 0},
            {"role": "assistant", "api": "openai-completions", "provider": "openai",
             "model": "m", "stopReason": "stop", "timestamp": 0, "usage": {"input": 0},
             "content": [{"type": "toolCall", "id": "c1", "name": "f", "arguments": {"a": 1}}]},
            {"role": "toolResult", "toolCallId": "c1", "isError": false,
             "content": [{"type": "text", "text": "ok"}], "timestamp": 0}],
            "tools": [{"name": "f", "description": "d", "parameters": {}}]});
        assert_eq!(neutral(&anthropic), neutral(&openai));
        let mut other = openai.clone();
        other["messages"][2]["content"][0]["text"] = "not ok".into();
        assert_ne!(neutral(&anthropic), neutral(&other));
        let mut other = openai;
        other["messages"][1]["content"][0]["arguments"]["a"] = 2.into();
        assert_ne!(neutral(&anthropic), neutral(&other));
    }
}
