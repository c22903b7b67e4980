//! A lone UTF-16 surrogate escape in a request body (`"\ud800"` alone,
//! which JavaScript's `JSON.stringify` writes for half an emoji) is read
//! as U+FFFD by the server half of every protocol, as the projectors read
//! one on the client side, instead of failing the request; a whole pair
//! stays the character it encodes, and an escaped backslash before `u`
//! stays text. In tool-call arguments (JSON inside a JSON string, so the
//! half arrives escaped twice) it is U+FFFD too, and the arguments parse.

use agentstream::message::{AssistantMessage, ContentBlock, Message};
use agentstream_wire::server::DecodedRequest;
use agentstream_wire::{anthropic, gemini, openai, responses};
use serde_json::json;

/// The user's text in every request below, as JSON text.
const SAID: &str = r#""half \ud800 here, low \udc00 too, whole \ud83d\ude00, literal \\ud800""#;

/// What the user said once decoded.
const HEARD: &str = "half \u{fffd} here, low \u{fffd} too, whole \u{1f600}, literal \\ud800";

/// Arguments whose value holds a lone half, escaped twice.
const ARGUMENTS: &str = r#""{\"x\":\"a\\ud800b\"}""#;

fn check(api: &str, request: Result<DecodedRequest, agentstream_wire::server::ApiError>) {
    let request = request.unwrap_or_else(|e| panic!("{api}: {e:?}"));
    let context = serde_json::to_string(&request.context).unwrap();
    let heard = serde_json::to_string(HEARD).unwrap();
    assert!(
        context.contains(heard.trim_matches('"')),
        "{api}: {context}"
    );
    // No private-use marker leaks.
    assert!(
        !context.chars().any(|c| c >= '\u{100000}'),
        "{api}: {context}"
    );
}

fn tool_call(api: &str, request: &DecodedRequest) {
    let call = request
        .context
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(AssistantMessage { content, .. }) => {
                content.iter().find_map(|b| match b {
                    ContentBlock::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{api}: no tool call"));
    assert_eq!(
        serde_json::Value::Object(call.arguments.clone()),
        json!({"x": "a\u{fffd}b"}),
        "{api}"
    );
}

#[test]
fn chat_completions() {
    let body = format!(
        r#"{{"model": "m", "messages": [{{"role": "user", "content": {SAID}}},
            {{"role": "assistant", "content": null, "tool_calls": [{{"id": "c1", "type": "function",
              "function": {{"name": "f", "arguments": {ARGUMENTS}}}}}]}}]}}"#
    );
    let request = openai::decode::decode_body(body.as_bytes());
    check("openai", request.clone());
    tool_call("openai", &request.unwrap());
}

#[test]
fn anthropic_messages() {
    let body = format!(
        r#"{{"model": "m", "max_tokens": 10, "messages": [{{"role": "user", "content": {SAID}}},
            {{"role": "assistant", "content": [{{"type": "tool_use", "id": "c1", "name": "f",
              "input": {{"x": "a\ud800b"}}}}]}}]}}"#
    );
    let request = anthropic::decode::decode_body(body.as_bytes());
    check("anthropic", request.clone());
    tool_call("anthropic", &request.unwrap());
}

#[test]
fn openai_responses() {
    let body = format!(
        r#"{{"model": "m", "input": [{{"role": "user", "content": {SAID}}},
            {{"type": "function_call", "call_id": "c1", "name": "f", "arguments": {ARGUMENTS}}}]}}"#
    );
    let request = responses::decode::decode_body(body.as_bytes());
    check("responses", request.clone());
    tool_call("responses", &request.unwrap());
}

#[test]
fn gemini() {
    let body = format!(
        r#"{{"contents": [{{"role": "user", "parts": [{{"text": {SAID}}}]}},
            {{"role": "model", "parts": [{{"functionCall": {{"name": "f", "args": {{"x": "a\ud800b"}}}}}}]}}]}}"#
    );
    let request = gemini::decode::decode_body(body.as_bytes(), "m", true);
    check("gemini", request.clone());
    tool_call("gemini", &request.unwrap());
}

#[test]
fn bedrock_converse() {
    let body = format!(
        r#"{{"messages": [{{"role": "user", "content": [{{"text": {SAID}}}]}},
            {{"role": "assistant", "content": [{{"toolUse": {{"toolUseId": "c1", "name": "f",
              "input": {{"x": "a\ud800b"}}}}}}]}}]}}"#
    );
    let request = agentstream_wire::bedrock::decode::decode_body(body.as_bytes(), "m", true);
    check("bedrock", request.clone());
    tool_call("bedrock", &request.unwrap());
}

/// A body that is not JSON for another reason is still refused, with the
/// parser's error.
#[test]
fn other_errors_are_still_errors() {
    let body = format!(r#"{{"model": "m", "messages": [{{"role": "user", "content": {SAID}}}"#);
    let error = openai::decode::decode_body(body.as_bytes()).unwrap_err();
    assert!(format!("{error:?}").contains("not valid JSON"), "{error:?}");
}
