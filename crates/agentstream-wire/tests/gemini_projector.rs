//! The Gemini projector on the recorded streams in
//! `tests/fixtures/google-sse/` (each README row checked) and on hostile
//! input: truncated, block and finish reasons, error payloads, streamed
//! calls cut by `MAX_TOKENS`, limits. Every sequence must pass
//! `validate_events`.

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::{ErrorCause, ModelEvent};
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::limits::Limits;
use serde_json::{json, Value};

mod projector_support;
use projector_support::{decoded, every_cut_ends_cleanly, last, project};

fn fixture(name: &str) -> String {
    projector_support::fixture("google-sse", name)
}

fn run<'a>(payloads: impl IntoIterator<Item = &'a str>) -> Vec<ModelEvent> {
    project(
        &mut GeminiProjector::new("gemini-3-flash-preview", "google"),
        payloads,
    )
}

fn run_sse(body: &str) -> Vec<ModelEvent> {
    let events = decoded(body.as_bytes().chunks(5));
    run(events.iter().map(|e| e.data.as_str()))
}

fn lines(body: &str) -> Vec<&str> {
    body.lines().filter(|l| !l.trim().is_empty()).collect()
}

fn chunk(parts: Value, finish: Option<&str>) -> String {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    json!({"candidates": [candidate], "responseId": "r1"}).to_string()
}

#[test]
fn thinking_then_text_with_thoughts_counted_as_output() {
    let events = run_sse(&fixture("genai-thinking.sse"));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    let Some(ContentBlock::Thinking(thinking)) = m.content.first() else {
        panic!("{:?}", m.content)
    };
    assert_eq!(thinking.thinking.chars().count(), 1604);
    assert!(matches!(m.content.last(), Some(ContentBlock::Text(t)) if !t.text.is_empty()));
    // 35 candidates + 697 thoughts.
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (12, 732, Some(744))
    );
}

#[test]
fn a_whole_function_call_keeps_its_id_and_signature() {
    let events = run_sse(&fixture("genai-tool.sse"));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let call = m.tool_calls().next().expect("a call");
    assert_eq!(call.id, "u959pftr");
    assert_eq!(call.name, "get_weather");
    assert_eq!(
        Value::Object(call.arguments.clone()),
        json!({"country": "Egypt", "unit": "C", "city": "Cairo"})
    );
    assert!(!call.thought_signature.as_deref().unwrap_or("").is_empty());
    assert!(matches!(m.content.first(), Some(ContentBlock::Thinking(_))));
    assert!(m.content.iter().any(|b| matches!(b, ContentBlock::Text(_))));
    assert_eq!((m.usage.input, m.usage.output), (135, 136 + 226));
}

#[test]
fn a_text_signature_on_an_empty_part_is_kept() {
    let body = fixture("google-text.chunks.jsonl");
    let events = run(lines(&body));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop);
    let [ContentBlock::Text(text)] = &m.content[..] else {
        panic!("{:?}", m.content)
    };
    assert!(text.text.starts_with("There are **3**"));
    assert!(text
        .text_signature
        .as_deref()
        .unwrap()
        .starts_with("EqsFCqgF"));
    assert_eq!(
        m.usage.output,
        m.usage.total_tokens.unwrap() - m.usage.input
    );
    assert_eq!(m.extra["responseId"], "bH6LaZW8Fp_3nsEPqtaSwQ4");
}

#[test]
fn gemini_3_streamed_calls_are_assembled() {
    let body = fixture("google-no-args-tool-call.chunks.jsonl");
    let events = run(lines(&body));
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = m.tool_calls().collect();
    let shown: Vec<(String, Value)> = calls
        .iter()
        .map(|c| (c.name.clone(), Value::Object(c.arguments.clone())))
        .collect();
    assert_eq!(
        shown,
        [
            ("read_theme".into(), json!({})),
            ("read_screen".into(), json!({"id": "A"})),
            ("read_screen".into(), json!({"id": "B"})),
            ("read_screen".into(), json!({"id": "C"})),
        ]
    );
    // Deterministic ids: name, response id, position.
    assert_eq!(calls[1].id, "read_screen__vr4aYiWEJnYodAPkujX0QM_2");
    assert!(calls[0].thought_signature.is_some());
    // 58 candidates + 183 thoughts; no empty text block for the last part.
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (249, 241, Some(490))
    );
    assert!(!m
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(t) if t.text.is_empty())));
}

#[test]
fn max_tokens_in_a_streamed_call_ends_in_length_with_what_arrived() {
    let start = chunk(
        json!([{"functionCall": {"name": "write", "willContinue": true}}]),
        None,
    );
    let piece = chunk(
        json!([{"functionCall": {"partialArgs": [
            {"jsonPath": "$.path", "stringValue": "a.txt"},
            {"jsonPath": "$.body", "stringValue": "hel", "willContinue": true}
        ], "willContinue": true}}]),
        None,
    );
    let more = chunk(
        json!([{"functionCall": {"partialArgs": [{"jsonPath": "$.body", "stringValue": "lo", "willContinue": true}], "willContinue": true}}]),
        Some("MAX_TOKENS"),
    );
    let events = run([start.as_str(), piece.as_str(), more.as_str()]);
    assert_eq!(events.last().unwrap().type_name(), "done");
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Length);
    let call = m.tool_calls().next().unwrap();
    assert_eq!(
        Value::Object(call.arguments.clone()),
        json!({"path": "a.txt", "body": "hello"})
    );
}

#[test]
fn typed_partial_values_and_nested_paths() {
    let start = chunk(
        json!([{"functionCall": {"name": "f", "willContinue": true, "partialArgs": [
            {"jsonPath": "$.n", "numberValue": 2.5},
            {"jsonPath": "$.flags[0]", "boolValue": true},
            {"jsonPath": "$.flags[1]", "nullValue": null},
            {"jsonPath": "$.deep.k", "stringValue": "v"}
        ]}}]),
        None,
    );
    let end = chunk(json!([{"functionCall": {}}]), Some("STOP"));
    let events = run([start.as_str(), end.as_str()]);
    let call = last(&events).tool_calls().next().unwrap().clone();
    assert_eq!(
        Value::Object(call.arguments),
        json!({"n": 2.5, "flags": [true, null], "deep": {"k": "v"}})
    );
}

#[test]
fn safety_and_other_finish_reasons_are_errors_naming_them() {
    for reason in [
        "SAFETY",
        "RECITATION",
        "MALFORMED_FUNCTION_CALL",
        "SOMETHING_NEW",
    ] {
        let data = chunk(json!([{"text": "partial"}]), Some(reason));
        let mut projector = GeminiProjector::new("gemini-2.5-flash", "google");
        let events = project(&mut projector, [data.as_str()]);
        let m = last(&events);
        assert_eq!(m.stop_reason, StopReason::Error);
        assert!(m.error_message.as_deref().unwrap().contains(reason));
        assert_eq!(m.text(), "partial");
        match projector.error_cause() {
            Some(ErrorCause::Provider(p)) => assert_eq!(p.code.as_deref(), Some(reason)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_blocked_prompt_is_an_error_naming_the_reason() {
    let data = r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"nope"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}"#;
    let events = run([data]);
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    let message = m.error_message.as_deref().unwrap();
    assert!(
        message.contains("blockReason \"PROHIBITED_CONTENT\": nope"),
        "{message}"
    );
    assert_eq!(m.usage.input, 7);
}

#[test]
fn an_error_payload_after_http_200() {
    let data =
        r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}"#;
    let mut projector = GeminiProjector::new("gemini-2.5-flash", "google");
    let events = project(&mut projector, [data]);
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("RESOURCE_EXHAUSTED: Resource exhausted (code: 429)")
    );
    match projector.error_cause() {
        Some(ErrorCause::Provider(p)) => assert_eq!(p.code.as_deref(), Some("429")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_body_without_finish_reason_is_truncated() {
    let data = chunk(json!([{"text": "half"}]), None);
    let m = last(&run([data.as_str()])).clone();
    assert_eq!(m.stop_reason, StopReason::Error);
    assert!(m.error_message.as_deref().unwrap().contains("truncated"));
    assert_eq!(m.text(), "half");
}

#[test]
fn bad_paths_and_bad_json_end_in_error() {
    let start = chunk(
        json!([{"functionCall": {"name": "f", "willContinue": true}}]),
        None,
    );
    for path in ["no-dollar", "$.a[3]", "$"] {
        let piece = chunk(
            json!([{"functionCall": {"partialArgs": [{"jsonPath": path, "stringValue": "x"}], "willContinue": true}}]),
            None,
        );
        let m = last(&run([start.as_str(), piece.as_str()])).clone();
        assert_eq!(m.stop_reason, StopReason::Error, "{path}");
        assert!(m.error_message.as_deref().unwrap().contains("jsonPath"));
    }
    for bad in ["{oops", "[]", r#"{"candidates":5}"#] {
        assert_eq!(last(&run([bad])).stop_reason, StopReason::Error, "{bad}");
    }
}

#[test]
fn limits_on_calls_and_assembled_arguments() {
    let mut projector = GeminiProjector::new("gemini-2.5-flash", "google");
    projector.set_limits(Limits::default().with_max_tool_calls(2));
    let calls = chunk(
        json!([
            {"functionCall": {"name": "a", "args": {}}},
            {"functionCall": {"name": "b", "args": {}}},
            {"functionCall": {"name": "c", "args": {}}}
        ]),
        Some("STOP"),
    );
    let events = project(&mut projector, [calls.as_str()]);
    let m = last(&events);
    assert!(m
        .error_message
        .as_deref()
        .unwrap()
        .contains("max_tool_calls"));
    assert_eq!(m.tool_calls().count(), 2);

    let mut projector = GeminiProjector::new("gemini-3-pro", "google");
    projector.set_limits(Limits::default().with_max_tool_argument_bytes(64));
    let start = chunk(
        json!([{"functionCall": {"name": "f", "willContinue": true}}]),
        None,
    );
    let mut payloads = vec![start];
    for _ in 0..20 {
        payloads.push(chunk(json!([{"functionCall": {"partialArgs": [{"jsonPath": "$.s", "stringValue": "0123456789", "willContinue": true}], "willContinue": true}}]), None));
    }
    let events = project(&mut projector, payloads.iter().map(String::as_str));
    assert!(last(&events)
        .error_message
        .as_deref()
        .unwrap()
        .contains("max_tool_argument_bytes"));
}

#[test]
fn duplicate_ids_get_generated_ones() {
    let calls = chunk(
        json!([
            {"functionCall": {"name": "a", "args": {"x": 1}, "id": "same"}},
            {"functionCall": {"name": "a", "args": {"x": 2}, "id": "same"}}
        ]),
        Some("STOP"),
    );
    let events = run([calls.as_str()]);
    let ids: Vec<_> = last(&events).tool_calls().map(|c| c.id.clone()).collect();
    assert_eq!(ids, ["same", "a_r1_2"]);
}

#[test]
fn every_cut_of_a_fixture_ends_cleanly() {
    every_cut_ends_cleanly(&fixture("genai-tool.sse"), 83, |payloads| run(payloads));
}
