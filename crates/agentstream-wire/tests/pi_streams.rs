//! Our final message of each recorded Responses and Gemini stream against
//! the one pi-ai 0.73.1 makes of it (`tests/golden/streams/*.pi.json`,
//! made by `generate.mjs` there): equal field by field, except the
//! deliberate differences each case names.

use agentstream::message::AssistantMessage;
use agentstream::model::ModelEvent;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::responses::ResponsesProjector;
use agentstream_wire::sse::SseDecoder;
use serde_json::Value;

fn read(path: &str) -> String {
    let path = format!("{}/tests/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The payloads of a fixture (`.sse` bodies through our SSE decoder).
fn payloads(dir: &str, file: &str) -> Vec<String> {
    let text = read(&format!("fixtures/{dir}/{file}"));
    if file.ends_with(".sse") {
        let mut decoder = SseDecoder::new();
        let mut events = decoder.feed_to_vec(text.as_bytes()).unwrap();
        events.extend(decoder.finish_to_vec());
        events.into_iter().map(|e| e.data).collect()
    } else {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(String::from)
            .collect()
    }
}

fn final_message(events: &[ModelEvent]) -> AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .cloned()
        .unwrap()
}

/// The message as JSON with what Pi cannot match taken out: timestamps,
/// costs, and signatures compared as parsed JSON where they are JSON.
fn comparable(message: &AssistantMessage) -> Value {
    let mut value = serde_json::to_value(message).unwrap();
    value["timestamp"] = Value::from(0);
    value["usage"]["cost"] = Value::Null;
    for block in value["content"].as_array_mut().unwrap() {
        for key in ["thinkingSignature", "textSignature"] {
            if let Some(Value::String(s)) = block.get(key) {
                if let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
                    block[key] = parsed;
                }
            }
        }
    }
    value
}

fn pi(file: &str) -> Value {
    let pi: Value = serde_json::from_str(&read(&format!("golden/streams/{file}.pi.json"))).unwrap();
    let message: AssistantMessage = serde_json::from_value(pi).unwrap();
    comparable(&message)
}

fn responses(file: &str) -> Value {
    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    let mut out = Vec::new();
    for data in payloads("openai-responses-sse", file) {
        projector.push_data(&data, &mut out);
    }
    projector.finish(&mut out);
    comparable(&final_message(&out))
}

fn gemini(file: &str) -> Value {
    let mut projector = GeminiProjector::new("gemini-3-flash-preview", "google");
    let mut out = Vec::new();
    for data in payloads("google-sse", file) {
        projector.push_data(&data, &mut out);
    }
    projector.finish(&mut out);
    comparable(&final_message(&out))
}

#[test]
fn responses_streams_equal_pi() {
    for file in [
        "genai-reasoning-tools.sse",
        "genai-reasoning-text.sse",
        "copilot-id-rotation.chunks.jsonl",
    ] {
        assert_eq!(responses(file), pi(file), "{file}");
    }
}

#[test]
fn responses_error_names_the_code_pi_loses() {
    // Deliberate: the `error` event of this stream nests its code and
    // message in `error`; Pi reads them at the top level and writes
    // "Error Code undefined: undefined".
    let file = "openai-error.chunks.jsonl";
    let (mut ours, mut theirs) = (responses(file), pi(file));
    assert_eq!(theirs["errorMessage"], "Error Code undefined: undefined");
    assert!(ours["errorMessage"]
        .as_str()
        .unwrap()
        .starts_with("Error Code insufficient_quota: You exceeded your current quota"));
    ours["errorMessage"] = Value::Null;
    theirs["errorMessage"] = Value::Null;
    assert_eq!(ours, theirs);
}

#[test]
fn gemini_streams_equal_pi() {
    for file in ["genai-thinking.sse", "google-text.chunks.jsonl"] {
        assert_eq!(gemini(file), pi(file), "{file}");
    }
}

#[test]
fn gemini_tool_stream_equals_pi_but_for_its_empty_text_block() {
    // Deliberate: Pi opens a text block for the empty text part after the
    // call; we open none.
    let file = "genai-tool.sse";
    let mut theirs = pi(file);
    let content = theirs["content"].as_array_mut().unwrap();
    assert_eq!(
        content.pop().unwrap(),
        serde_json::json!({"type": "text", "text": ""})
    );
    assert_eq!(gemini(file), theirs);
}

#[test]
fn gemini_streamed_calls_differ_from_pi_by_design() {
    // Deliberate: Pi makes each piece of a Gemini 3 streamed call a call of
    // its own with empty arguments (13 calls) and an empty text block; we
    // assemble 4 calls. Everything else is equal.
    let file = "google-no-args-tool-call.chunks.jsonl";
    let (ours, theirs) = (gemini(file), pi(file));
    let calls = |v: &Value| {
        v["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "toolCall")
            .count()
    };
    assert_eq!((calls(&ours), calls(&theirs)), (4, 13));
    for key in ["usage", "stopReason", "responseId"] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    assert_eq!(ours["content"][0], theirs["content"][0]);
}
