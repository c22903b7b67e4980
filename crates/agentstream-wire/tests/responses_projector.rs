//! The OpenAI Responses projector on the recorded streams in
//! `tests/fixtures/openai-responses-sse/` (each README row checked) and on
//! hostile input: truncated, out of order, unknown events, limits, a call
//! cut off by `max_output_tokens`. Every sequence must pass
//! `validate_events`.

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::{ErrorCause, ModelEvent};
use agentstream_wire::limits::Limits;
use agentstream_wire::responses::ResponsesProjector;
use serde_json::{json, Value};

mod projector_support;
use projector_support::{decoded, every_cut_ends_cleanly, last, project};

fn fixture(name: &str) -> String {
    projector_support::fixture("openai-responses-sse", name)
}

fn run<'a>(payloads: impl IntoIterator<Item = &'a str>) -> Vec<ModelEvent> {
    project(&mut ResponsesProjector::new("gpt-5", "openai"), payloads)
}

/// The SSE body in pieces of 7 bytes.
fn run_sse(body: &str) -> Vec<ModelEvent> {
    let events = decoded(body.as_bytes().chunks(7));
    run(events.iter().map(|e| e.data.as_str()))
}

fn types(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(ModelEvent::type_name).collect()
}

#[test]
fn reasoning_then_a_streamed_function_call() {
    let events = run_sse(&fixture("genai-reasoning-tools.sse"));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let [ContentBlock::Thinking(thinking), ContentBlock::ToolCall(call)] = &m.content[..] else {
        panic!("{:?}", m.content);
    };
    // The reasoning item, encrypted content included, is the signature.
    let item: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["type"], "reasoning");
    assert!(item["id"].as_str().unwrap().starts_with("rs_"));
    assert!(!item["encrypted_content"].as_str().unwrap().is_empty());
    assert_eq!(call.name, "get_weather");
    let (call_id, item_id) = call.id.split_once('|').unwrap();
    assert!(
        call_id.starts_with("call_") && item_id.starts_with("fc_"),
        "{}",
        call.id
    );
    assert_eq!(
        serde_json::Value::Object(call.arguments.clone()),
        json!({"city": "Paris", "country": "France", "unit": "C"})
    );
    let deltas = events
        .iter()
        .filter(|e| e.type_name() == "toolcall_delta")
        .count();
    assert_eq!(deltas, 13);
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (106, 45, Some(151))
    );
    assert!(m.extra["responseId"].as_str().unwrap().starts_with("resp_"));
}

#[test]
fn reasoning_then_text() {
    let events = run_sse(&fixture("genai-reasoning-text.sse"));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    let text = m.text();
    assert!(!text.is_empty());
    assert_eq!(
        events
            .iter()
            .filter(|e| e.type_name() == "text_delta")
            .count(),
        31
    );
    let Some(ContentBlock::Text(block)) = m.content.last() else {
        panic!()
    };
    let signature: Value = serde_json::from_str(block.text_signature.as_deref().unwrap()).unwrap();
    assert_eq!(signature["v"], 1);
    assert!(signature["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (21, 45, Some(66))
    );
}

#[test]
fn an_error_event_after_http_200_keeps_the_provider_code() {
    let body = fixture("openai-error.chunks.jsonl");
    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    let events = project(&mut projector, body.lines());
    assert_eq!(types(&events), ["start", "error"]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    let message = m.error_message.as_deref().unwrap();
    assert!(
        message.starts_with("Error Code insufficient_quota: You exceeded"),
        "{message}"
    );
    match projector.error_cause() {
        Some(ErrorCause::Provider(p)) => assert_eq!(p.code.as_deref(), Some("insufficient_quota")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn rotating_item_ids_are_matched_by_output_index() {
    let body = fixture("copilot-id-rotation.chunks.jsonl");
    let events = run(body.lines());
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    let [ContentBlock::Thinking(thinking), ContentBlock::Text(text)] = &m.content[..] else {
        panic!("{:?}", m.content);
    };
    assert_eq!(thinking.thinking, "**Counting character occurrences**");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.type_name() == "text_delta")
            .count(),
        55
    );
    assert!(text.text.starts_with("There are **3** letter"));
    assert!(text.text.ends_with("**3, 8, and 9**."));
    // The finished item's id, as Pi keeps it, with its phase.
    let signature: Value = serde_json::from_str(text.text_signature.as_deref().unwrap()).unwrap();
    assert_eq!(
        signature,
        json!({"v": 1, "id": "capture-id-68", "phase": "final_answer"})
    );
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (19, 105, Some(124))
    );
}

const ADD_CALL: &str = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":""}}"#;

fn args_delta(delta: &str) -> String {
    json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": delta})
        .to_string()
}

#[test]
fn a_call_cut_by_max_output_tokens_ends_in_length_with_lenient_arguments() {
    let first = args_delta(r#"{"city":"Par"#);
    let incomplete = r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}"#;
    let events = run([ADD_CALL, first.as_str(), incomplete]);
    assert_eq!(events.last().unwrap().type_name(), "done");
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Length);
    let Some(ContentBlock::ToolCall(call)) = m.content.first() else {
        panic!("{:?}", m.content)
    };
    assert_eq!(
        Value::Object(call.arguments.clone()),
        json!({"city": "Par"})
    );
    assert_eq!(call.id, "call_1|fc_1");
    assert_eq!((m.usage.input, m.usage.output), (10, 5));
}

#[test]
fn completed_with_status_incomplete_is_length_and_content_filter_is_an_error() {
    let completed = r#"{"type":"response.completed","response":{"status":"incomplete"}}"#;
    let events = run([ADD_CALL, completed]);
    assert_eq!(last(&events).stop_reason, StopReason::Length);
    let filtered = r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}"#;
    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    let events = project(&mut projector, [filtered]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    assert!(m
        .error_message
        .as_deref()
        .unwrap()
        .contains("content_filter"));
    match projector.error_cause() {
        Some(ErrorCause::Provider(p)) => assert_eq!(p.code.as_deref(), Some("content_filter")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn response_failed_names_code_and_message() {
    let failed = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}"#;
    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    let events = project(&mut projector, [failed]);
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("server_error: boom")
    );
    match projector.error_cause() {
        Some(ErrorCause::Provider(p)) => assert_eq!(p.code.as_deref(), Some("server_error")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_truncated_stream_keeps_what_arrived_and_ends_in_error() {
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}}"#;
    let delta = r#"{"type":"response.output_text.delta","output_index":0,"delta":"half an ans"}"#;
    let events = run([added, delta]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    assert!(m.error_message.as_deref().unwrap().contains("truncated"));
    assert_eq!(m.text(), "half an ans");
}

#[test]
fn unknown_events_items_and_stale_indexes_are_ignored() {
    let events = run([
        r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
        r#"{"type":"response.something_new","output_index":0,"delta":"x"}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws"}}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"lost"}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m"}}"#,
        r#"{"type":"response.output_text.delta","output_index":7,"delta":"wrong index"}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"delta":"kept"}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"again"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    assert_eq!(m.text(), "kept");
}

#[test]
fn not_json_and_not_an_event_end_in_error() {
    for bad in ["{oops", "[1,2]", r#"{"type":5}"#] {
        let events = run([bad]);
        assert_eq!(last(&events).stop_reason, StopReason::Error, "{bad}");
    }
}

#[test]
fn limits_end_the_stream_naming_them() {
    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    projector.set_limits(Limits::default().with_max_tool_argument_bytes(8));
    let delta = args_delta(r#"{"city":"Paris"}"#);
    let events = project(&mut projector, [ADD_CALL, delta.as_str()]);
    let message = last(&events).error_message.as_deref().unwrap();
    assert!(message.contains("max_tool_argument_bytes"), "{message}");

    let mut projector = ResponsesProjector::new("gpt-5", "openai");
    projector.set_limits(Limits::default().with_max_content_blocks(2));
    let items: Vec<String> = (0..5)
        .map(|i| {
            json!({"type": "response.output_item.added", "output_index": i, "item": {"type": "message", "id": "m"}})
                .to_string()
        })
        .collect();
    let events = project(&mut projector, items.iter().map(String::as_str));
    let m = last(&events);
    assert!(m
        .error_message
        .as_deref()
        .unwrap()
        .contains("max_content_blocks"));
    assert_eq!(m.content.len(), 2);
}

#[test]
fn summary_parts_are_joined_by_a_blank_line() {
    let events = run([
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}"#,
        r#"{"type":"response.reasoning_summary_part.added","output_index":0,"part":{"type":"summary_text","text":""}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"one"}"#,
        r#"{"type":"response.reasoning_summary_part.added","output_index":0,"part":{"type":"summary_text","text":""}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"two"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","encrypted_content":"enc","summary":[{"type":"summary_text","text":"one"},{"type":"summary_text","text":"two"}]}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ]);
    let Some(ContentBlock::Thinking(t)) = last(&events).content.first() else {
        panic!()
    };
    assert_eq!(t.thinking, "one\n\ntwo");
    let item: Value = serde_json::from_str(t.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(
        (item["id"].as_str(), item["encrypted_content"].as_str()),
        (Some("rs_1"), Some("enc"))
    );
}

#[test]
fn a_final_text_that_extends_the_deltas_sends_the_rest() {
    let events = run([
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f"}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}"#,
        r#"{"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"a\":1}"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{\"a\":1}"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let Some(ContentBlock::ToolCall(call)) = m.content.first() else {
        panic!()
    };
    assert_eq!(Value::Object(call.arguments.clone()), json!({"a": 1}));
}

#[test]
fn split_surrogate_halves_are_joined() {
    let events = run([
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"a\ud83d"}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"\ude00b"}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ]);
    assert_eq!(last(&events).text(), "a😀b");
}

#[test]
fn every_cut_of_a_fixture_ends_cleanly() {
    every_cut_ends_cleanly(&fixture("genai-reasoning-tools.sse"), 97, |payloads| {
        run(payloads)
    });
}

#[test]
fn the_projectors_and_options_are_send_and_sync() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    check::<ResponsesProjector>();
    check::<agentstream_wire::responses::OpenAiResponses>();
    check::<agentstream_wire::gemini::GeminiProjector>();
    check::<agentstream_wire::gemini::Gemini>();
    check::<agentstream_wire::config::Call<'static>>();
}
