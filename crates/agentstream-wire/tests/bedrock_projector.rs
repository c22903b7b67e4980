//! The Bedrock `ConverseStream` projector against pi-ai 0.73.1: each
//! recorded stream of `fixtures/bedrock/` encoded as event-stream
//! messages, fed through `BedrockStream` in pieces of every size from 1
//! byte, and compared with what pi-ai's `bedrock-converse-stream`
//! provider made of the same messages (`fixtures/bedrock/pi-ai/*.json`,
//! written by `oracle/pi-ai/bedrock-goldens.mjs`): the events (type,
//! index, delta, content, call, reason) and the final message, equal
//! except the deliberate differences `pi_view` applies.

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::bedrock::BedrockStream;
use agentstream_wire::eventstream::{encode_event, encode_message, Header, HeaderValue};
use serde_json::{json, Value};

mod event_fields_support;
use event_fields_support::event_fields;

const FIXTURES: [&str; 4] = [
    "amazon-bedrock-text",
    "amazon-bedrock-reasoning",
    "amazon-bedrock-tool-call.1",
    "amazon-bedrock-tool-no-args",
];

fn read(path: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/bedrock/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn body(name: &str) -> Vec<u8> {
    let mut body = Vec::new();
    for line in read(&format!("{name}.events.jsonl"))
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let value: Value = serde_json::from_str(line).unwrap();
        let (event, payload) = value.as_object().unwrap().iter().next().unwrap();
        encode_event(event, payload.to_string().as_bytes(), &mut body).unwrap();
    }
    body
}

fn run(body: &[u8], piece: usize) -> Vec<ModelEvent> {
    let mut stream = BedrockStream::new("anthropic.claude-sonnet-4-5", "amazon-bedrock", None);
    let mut events = Vec::new();
    for chunk in body.chunks(piece) {
        events.extend(stream.feed(chunk));
    }
    events.extend(stream.finish_input());
    events
}

/// An event as the golden holds it (Pi's JSON without `partial`).
fn view(event: &ModelEvent) -> Value {
    event_fields(&serde_json::to_value(event).unwrap())
}

/// pi-ai's golden with the deliberate differences applied: we always
/// open with `start` (pi-ai only on a `messageStart`); an empty delta is
/// no event here (pi-ai emits one with `""`), except that a tool call
/// whose input is empty streams `{}` as its one delta (a call's deltas
/// join to its arguments' JSON object, `validate_events`'s rule).
fn pi_view(golden: &Value) -> (Vec<Value>, Value) {
    let mut events: Vec<Value> = golden["events"].as_array().unwrap().clone();
    if events.first().map(|e| e["type"] != "start").unwrap_or(true) {
        events.insert(0, json!({"type": "start"}));
    }
    let calls_with_input: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "toolcall_delta" && e["delta"] != "")
        .map(|e| e["contentIndex"].clone())
        .collect();
    for event in &mut events {
        if event["type"] == "toolcall_delta"
            && event["delta"] == ""
            && !calls_with_input.contains(&event["contentIndex"])
        {
            event["delta"] = json!("{}");
        }
    }
    events.retain(|e| e.get("delta") != Some(&json!("")));
    (events, golden["final"].clone())
}

#[test]
fn every_fixture_agrees_with_pi_ai() {
    for name in FIXTURES {
        let golden: Value = serde_json::from_str(&read(&format!("pi-ai/{name}.json"))).unwrap();
        let (pi_events, pi_final) = pi_view(&golden);
        let body = body(name);
        for piece in [1, 7, 64, body.len()] {
            let events = run(&body, piece);
            assert!(
                validate_events(&events).is_empty(),
                "{name}: {:?}",
                validate_events(&events)
            );
            let ours: Vec<Value> = events.iter().map(view).collect();
            assert_eq!(ours, pi_events, "{name}, pieces of {piece}");
            let mut last =
                serde_json::to_value(events.last().unwrap().terminal_message().unwrap()).unwrap();
            last["timestamp"] = json!(0);
            assert_eq!(
                last, pi_final,
                "{name}, pieces of {piece}: the final message"
            );
        }
    }
}

fn terminal(events: &[ModelEvent]) -> (String, String) {
    let message = events.last().unwrap().terminal_message().unwrap();
    let value = serde_json::to_value(message).unwrap();
    (
        value["stopReason"].as_str().unwrap().into(),
        message.error_message.clone().unwrap_or_default(),
    )
}

#[test]
fn exceptions_end_in_error_with_pi_ais_prefix() {
    let mut body = Vec::new();
    encode_event("messageStart", br#"{"role":"assistant"}"#, &mut body).unwrap();
    encode_event(
        "contentBlockDelta",
        br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
        &mut body,
    )
    .unwrap();
    let headers = [
        Header::new(
            ":exception-type",
            HeaderValue::String("throttlingException"),
        ),
        Header::new(":content-type", HeaderValue::String("application/json")),
        Header::new(":message-type", HeaderValue::String("exception")),
    ];
    encode_message(&headers, br#"{"message":"Too many requests"}"#, &mut body).unwrap();
    let events = run(&body, 5);
    assert!(validate_events(&events).is_empty());
    assert_eq!(
        terminal(&events),
        ("error".into(), "Throttling error: Too many requests".into())
    );
    let message = events.last().unwrap().terminal_message().unwrap();
    assert_eq!(
        serde_json::to_value(&message.content).unwrap(),
        json!([{"type": "text", "text": "Hi"}])
    );
}

/// A body of one text delta and nothing else.
fn one_text_delta() -> Vec<u8> {
    let mut body = Vec::new();
    let delta = br#"{"contentBlockIndex":0,"delta":{"text":"x"}}"#;
    encode_event("contentBlockDelta", delta, &mut body).unwrap();
    body
}

#[test]
fn stop_reasons_map_as_pi_ai_maps_them() {
    for (wire, ours) in [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "toolUse"),
        ("guardrail_intervened", "error"),
        ("content_filtered", "error"),
    ] {
        let mut body = one_text_delta();
        encode_event(
            "messageStop",
            format!(r#"{{"stopReason":"{wire}"}}"#).as_bytes(),
            &mut body,
        )
        .unwrap();
        let events = run(&body, 3);
        assert!(validate_events(&events).is_empty(), "{wire}");
        assert_eq!(terminal(&events).0, ours, "{wire}");
    }
}

#[test]
fn broken_framing_and_truncation_end_in_error() {
    let body = one_text_delta();
    // No messageStop: truncated.
    let (reason, message) = terminal(&run(&body, 4));
    assert_eq!(reason, "error");
    assert!(message.contains("messageStop"), "{message}");
    // A cut message.
    let (reason, message) = terminal(&run(&body[..body.len() - 3], 4));
    assert_eq!(reason, "error");
    assert!(message.contains("the input ended"), "{message}");
    // A corrupted checksum.
    let mut bad = body.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let (reason, message) = terminal(&run(&bad, 4));
    assert_eq!(reason, "error");
    assert!(message.contains("message checksum"), "{message}");
}
