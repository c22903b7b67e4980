//! The Anthropic Messages projector on the four recorded streams in
//! `tests/fixtures/anthropic-sse/` and on the failure shapes of its
//! rules; every produced sequence must pass `validate_events`.

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::anthropic::AnthropicProjector;
use agentstream_wire::sse::SseDecoder;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/anthropic-sse/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn run_payloads<'a>(payloads: impl IntoIterator<Item = &'a str>, finish: bool) -> Vec<ModelEvent> {
    let mut p = AnthropicProjector::new("claude", "anthropic");
    let mut out = Vec::new();
    for data in payloads {
        p.push_data(data, &mut out);
    }
    if finish {
        p.finish(&mut out);
    }
    assert!(
        validate_events(&out).is_empty(),
        "{:?}",
        validate_events(&out)
    );
    out
}

fn run_sse(body: &str) -> Vec<ModelEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.feed_to_vec(body.as_bytes()).unwrap();
    events.extend(decoder.finish_to_vec());
    run_payloads(events.iter().map(|e| e.data.as_str()), true)
}

fn final_message(events: &[ModelEvent]) -> &agentstream::message::AssistantMessage {
    match events.last() {
        Some(ModelEvent::Done { message, .. }) => message,
        Some(ModelEvent::Error { error, .. }) => error,
        other => panic!("no terminal event: {other:?}"),
    }
}

#[test]
fn text_with_ping() {
    let events = run_sse(&fixture("anthropic-text-ping.sse"));
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    assert!(matches!(&m.content[..], [ContentBlock::Text(t)] if !t.text.is_empty()));
    assert!(m.usage.output > 0);
    assert_eq!(
        m.usage.total_tokens,
        Some(m.usage.input + m.usage.output + m.usage.cache_read + m.usage.cache_write)
    );
}

#[test]
fn text_then_tool_use() {
    let events = run_sse(&fixture("anthropic-text-tool-use.sse"));
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    assert_eq!(m.usage.input, 377);
    match &m.content[..] {
        [ContentBlock::Text(_), ContentBlock::ToolCall(call)] => {
            assert_eq!(call.name, "get_weather");
            assert_eq!(call.id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
            assert!(call.arguments.get("location").is_some(), "{call:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tool_with_no_arguments_gives_empty_object() {
    let body = fixture("anthropic-tool-no-args.chunks.jsonl");
    let events = run_payloads(body.lines().filter(|l| !l.trim().is_empty()), true);
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let call = m
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolCall(c) => Some(c),
            _ => None,
        })
        .expect("a tool call");
    assert!(call.arguments.is_empty());
}

#[test]
fn thinking_keeps_its_signature() {
    let body = fixture("anthropic-thinking-signature.chunks.jsonl");
    let events = run_payloads(body.lines().filter(|l| !l.trim().is_empty()), true);
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    match &m.content[..] {
        [ContentBlock::Thinking(t), ContentBlock::Text(_)] => {
            assert!(!t.thinking.is_empty());
            assert!(t
                .thinking_signature
                .as_deref()
                .is_some_and(|s| !s.is_empty()));
        }
        other => panic!("{other:?}"),
    }
}

const START: &str = r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3}}}"#;

#[test]
fn error_event_after_200() {
    let events = run_payloads(
        [
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ],
        true,
    );
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("overloaded_error: Overloaded")
    );
    assert!(matches!(&m.content[..], [ContentBlock::Text(t)] if t.text == "par"));
}

#[test]
fn tool_use_cut_off_without_block_stop_ends_in_length() {
    // As Pi 0.73.1 does: the cut call is kept, its arguments completed
    // leniently (`tests/cut_tool_calls.rs` checks this against Pi).
    let events = run_payloads(
        [
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ],
        true,
    );
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::Length);
    assert!(
        matches!(&m.content[..], [ContentBlock::ToolCall(c)] if c.arguments.get("a") == Some(&serde_json::Value::Null)),
        "{:?}",
        m.content
    );
    assert_eq!(m.usage.output, 9);
}

#[test]
fn truncated_body_is_an_error() {
    let events = run_payloads([START], true);
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
}

#[test]
fn stop_reasons_and_padding_and_unknowns() {
    for (reason, expected) in [
        ("end_turn", StopReason::Stop),
        ("stop_sequence", StopReason::Stop),
        ("pause_turn", StopReason::Stop),
        ("max_tokens", StopReason::Length),
        ("refusal", StopReason::Error),
        ("model_context_window_exceeded", StopReason::Error),
        ("something_new", StopReason::Error),
    ] {
        let delta = format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}"}},"context_management":{{}},"usage":{{"output_tokens":2}}}}   "#
        );
        let events = run_payloads(
            [
                START,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s"}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"ping"}"#,
                delta.as_str(),
                "{\"type\":\"message_stop\"}\n  ",
            ],
            true,
        );
        let m = final_message(&events);
        assert_eq!(m.stop_reason, expected, "{reason}");
        if expected == StopReason::Error {
            assert!(m
                .error_message
                .as_deref()
                .is_some_and(|e| e.contains(reason)));
        }
    }
}

#[test]
fn redacted_thinking_is_kept() {
    let events = run_payloads(
        [
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_stop"}"#,
        ],
        true,
    );
    match &final_message(&events).content[..] {
        [ContentBlock::Thinking(t)] => {
            assert_eq!(t.redacted, Some(true));
            assert_eq!(t.thinking_signature.as_deref(), Some("opaque"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn abort_and_garbage() {
    let mut p = AnthropicProjector::new("claude", "anthropic");
    let mut out = Vec::new();
    p.push_data(START, &mut out);
    p.abort(&mut out);
    assert!(validate_events(&out).is_empty());
    assert_eq!(final_message(&out).stop_reason, StopReason::Aborted);
    for data in ["not json", "[1]", "{}"] {
        let events = run_payloads([data], false);
        assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    }
}
