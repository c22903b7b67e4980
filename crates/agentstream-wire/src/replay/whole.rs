//! A whole answer (a call that did not stream) as the event stream its
//! API would have sent for it, so one decoder, the stream's projector,
//! reads both: a Chat Completions `chat.completion` becomes one
//! `chat.completion.chunk` (its `message` as the `delta`, each tool call
//! given its `index`) and `[DONE]`; an Anthropic `message` becomes
//! `message_start`, a start, delta(s) and stop per content block,
//! `message_delta` and `message_stop`; a Responses `response` becomes
//! `response.created`, an `output_item.added`/`.done` pair per output item
//! and `response.completed` (`.incomplete`, `.failed` as its `status`
//! says); a Gemini `GenerateContentResponse` is already the shape of one
//! streamed chunk; a Bedrock `Converse` answer becomes the event-stream
//! messages of `ConverseStream` (`messageStart`, a `contentBlockStart`
//! for a tool use, a delta and a stop per block, `messageStop` and
//! `metadata`: binary, not SSE).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::api::Api;

/// The SSE body `api`'s server would have streamed for the whole answer
/// `body`, or `None` when `body`
/// is not a JSON object (an error page, an empty body) or is the API's
/// error body (an object with an `error` that is not `null`: each of the
/// four APIs' error shape has one; a Response has `"error": null`), which
/// stays as it is.
#[must_use]
pub fn whole_as_events(api: Api, body: &[u8]) -> Option<Vec<u8>> {
    let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    if answer.get("error").is_some_and(|e| !e.is_null()) {
        return None;
    }
    if api == Api::Bedrock {
        return converse(&answer);
    }
    let mut out = String::new();
    let mut event = |name: Option<&str>, data: &Value| {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    };
    match api {
        Api::OpenAi | Api::Mistral => {
            let mut chunk = answer.clone();
            chunk.insert("object".into(), json!("chat.completion.chunk"));
            let choices: Vec<Value> = answer
                .get("choices")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(openai_choice)
                .collect();
            chunk.insert("choices".into(), Value::Array(choices));
            event(None, &Value::Object(chunk));
            out.push_str("data: [DONE]\n\n");
        }
        Api::Anthropic => anthropic(&answer, &mut event),
        Api::Responses | Api::Azure => {
            let id = answer.get("id").cloned().unwrap_or(Value::Null);
            let model = answer.get("model").cloned().unwrap_or(Value::Null);
            event(
                Some("response.created"),
                &json!({"type": "response.created",
                    "response": {"id": id, "model": model, "status": "in_progress"}}),
            );
            let items = answer.get("output").and_then(Value::as_array);
            for (i, item) in items.into_iter().flatten().enumerate() {
                let mut added = item.clone();
                if let Some(added) = added.as_object_mut() {
                    // The parts arrive with the item's end.
                    for key in ["content", "summary"] {
                        if added.contains_key(key) {
                            added.insert(key.into(), json!([]));
                        }
                    }
                    if added.contains_key("arguments") {
                        added.insert("arguments".into(), json!(""));
                    }
                }
                for (kind, item) in [("added", &added), ("done", item)] {
                    let name = format!("response.output_item.{kind}");
                    event(
                        Some(&name),
                        &json!({"type": name, "output_index": i, "item": item}),
                    );
                }
            }
            let name = match answer.get("status").and_then(Value::as_str) {
                Some("incomplete") => "response.incomplete",
                Some("failed") => "response.failed",
                _ => "response.completed",
            };
            event(
                Some(name),
                &json!({"type": name, "response": Value::Object(answer.clone())}),
            );
        }
        // Bedrock's answer was read above (event-stream messages).
        Api::Gemini | Api::Bedrock => event(None, &Value::Object(answer.clone())),
    }
    Some(out.into_bytes())
}

/// A `chat.completion` choice as a chunk's: its `message` as the `delta`,
/// each tool call with its `index`.
fn openai_choice(choice: &Value) -> Value {
    let mut choice = choice.clone();
    if let Some(object) = choice.as_object_mut() {
        let mut delta = object.remove("message").unwrap_or_else(|| json!({}));
        if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (i, call) in calls.iter_mut().enumerate() {
                if let Some(call) = call.as_object_mut() {
                    call.insert("index".into(), json!(i));
                }
            }
        }
        object.insert("delta".into(), delta);
    }
    choice
}

/// The event-stream messages of a Bedrock `Converse` answer; `None` for
/// a body without `output` (Bedrock's error body, `{"message"}`).
fn converse(answer: &Map<String, Value>) -> Option<Vec<u8>> {
    let blocks = answer
        .get("output")?
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    let mut event = |name: &str, data: &Value| {
        // The names are constants and a body read into memory is far
        // under 4 GiB: the message always encodes.
        let _ = crate::eventstream::encode_event(name, data.to_string().as_bytes(), &mut out);
    };
    event("messageStart", &json!({"role": "assistant"}));
    for (i, block) in blocks.into_iter().flatten().enumerate() {
        let mut deltas = Vec::new();
        if let Some(text) = block.get("text") {
            deltas.push(json!({"text": text}));
        } else if let Some(call) = block.get("toolUse") {
            let start =
                json!({"toolUse": {"toolUseId": call.get("toolUseId"), "name": call.get("name")}});
            event(
                "contentBlockStart",
                &json!({"contentBlockIndex": i, "start": start}),
            );
            let input = call.get("input").cloned().unwrap_or_else(|| json!({}));
            deltas.push(json!({"toolUse": {"input": input.to_string()}}));
        } else if let Some(reasoning) = block
            .get("reasoningContent")
            .and_then(|r| r.get("reasoningText"))
        {
            deltas.push(json!({"reasoningContent": {"text": reasoning.get("text")}}));
            if let Some(signature) = reasoning.get("signature") {
                deltas.push(json!({"reasoningContent": {"signature": signature}}));
            }
        }
        for delta in deltas {
            event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": i, "delta": delta}),
            );
        }
        event("contentBlockStop", &json!({"contentBlockIndex": i}));
    }
    let field = |key: &str| answer.get(key).cloned().unwrap_or(Value::Null);
    event("messageStop", &json!({"stopReason": field("stopReason")}));
    event(
        "metadata",
        &json!({"usage": field("usage"), "metrics": field("metrics")}),
    );
    Some(out)
}

/// The events of an Anthropic `message`.
fn anthropic(answer: &Map<String, Value>, event: &mut impl FnMut(Option<&str>, &Value)) {
    let mut start = answer.clone();
    start.insert("content".into(), json!([]));
    start.insert("stop_reason".into(), Value::Null);
    event(
        Some("message_start"),
        &json!({"type": "message_start", "message": Value::Object(start)}),
    );
    let blocks = answer.get("content").and_then(Value::as_array);
    for (i, block) in blocks.into_iter().flatten().enumerate() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        let (opened, deltas): (Value, Vec<Value>) = match kind {
            "text" => (
                json!({"type": "text", "text": ""}),
                vec![json!({"type": "text_delta", "text": text("text")})],
            ),
            "thinking" => {
                let mut deltas =
                    vec![json!({"type": "thinking_delta", "thinking": text("thinking")})];
                if block.get("signature").is_some() {
                    deltas.push(json!({"type": "signature_delta", "signature": text("signature")}));
                }
                (json!({"type": "thinking", "thinking": ""}), deltas)
            }
            "tool_use" => {
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                (
                    json!({"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}),
                    vec![json!({"type": "input_json_delta", "partial_json": input.to_string()})],
                )
            }
            // Whole as it is (`redacted_thinking`, server tools).
            _ => (block.clone(), Vec::new()),
        };
        event(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": i, "content_block": opened}),
        );
        for delta in deltas {
            event(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": i, "delta": delta}),
            );
        }
        event(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": i}),
        );
    }
    let stop = |key: &str| answer.get(key).cloned().unwrap_or(Value::Null);
    event(
        Some("message_delta"),
        &json!({"type": "message_delta",
            "delta": {"stop_reason": stop("stop_reason"), "stop_sequence": stop("stop_sequence")},
            "usage": stop("usage")}),
    );
    event(Some("message_stop"), &json!({"type": "message_stop"}));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_and_what_is_not_json_are_left_alone() {
        for api in Api::ALL {
            assert_eq!(whole_as_events(api, b"not json"), None);
            assert_eq!(whole_as_events(api, b"[1]"), None);
            let error =
                br#"{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}"#;
            assert_eq!(whole_as_events(api, error), None);
        }
    }

    #[test]
    fn a_completion_becomes_one_chunk_with_indexed_calls_then_done() {
        let completion = br#"{"id": "c1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}]}"#;
        let events = whole_as_events(Api::OpenAi, completion).unwrap();
        let text = core::str::from_utf8(&events).unwrap();
        let (chunk, done) = text.split_once("\n\n").unwrap();
        assert_eq!(done, "data: [DONE]\n\n");
        let chunk: Value = serde_json::from_str(chunk.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["choices"][0]["delta"]["tool_calls"][1]["index"], 1);
        assert_eq!(chunk["choices"][0]["finish_reason"], "tool_calls");
    }
}
