//! The chunk projector and `OpenAiStream` on our own recorded-style
//! fixtures: every case of the projector's rules, each produced sequence
//! checked with the protocol checker.

use agentstream::message::{AssistantMessage, ContentBlock, StopReason};
use agentstream::model::{validate_events, AbortController, ErrorReason, ModelEvent};
use agentstream_wire::openai::{OpenAiProjector, OpenAiStream};
use serde_json::json;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("fixtures/openai/", $name))
    };
}

fn checked(events: Vec<ModelEvent>) -> Vec<ModelEvent> {
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    events
}

/// The whole body in one piece, through `OpenAiStream`.
fn sse(body: &str) -> Vec<ModelEvent> {
    let mut stream = OpenAiStream::new("m", "p", None);
    let mut events: Vec<ModelEvent> = stream.feed(body.as_bytes()).collect();
    events.extend(stream.finish_input());
    checked(events)
}

/// One payload per line, through `OpenAiProjector`.
fn chunks(text: &str) -> Vec<ModelEvent> {
    let mut projector = OpenAiProjector::new("m", "p");
    let mut events = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        projector.push_data(line, &mut events);
    }
    projector.finish(&mut events);
    checked(events)
}

fn trace(events: &[ModelEvent]) -> String {
    events
        .iter()
        .map(ModelEvent::type_name)
        .collect::<Vec<_>>()
        .join(" ")
}

fn last(events: &[ModelEvent]) -> &AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap()
}

fn deltas(events: &[ModelEvent], kind: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.type_name() == kind)
        .map(|e| e.delta().unwrap().to_string())
        .collect()
}

fn calls(message: &AssistantMessage) -> Vec<(String, String, serde_json::Value)> {
    message
        .tool_calls()
        .map(|c| {
            (
                c.id.clone(),
                c.name.clone(),
                serde_json::Value::Object(c.arguments.clone()),
            )
        })
        .collect()
}

#[test]
fn reasoning_fields_duplicates_and_the_switch_to_text() {
    let events = sse(fixture!("reasoning-then-text.sse"));
    assert_eq!(
        trace(&events),
        "start thinking_start thinking_delta thinking_delta thinking_delta thinking_end \
         text_start text_delta text_delta text_end done"
    );
    assert_eq!(
        deltas(&events, "thinking_delta"),
        ["Let me", " think.", " Done."]
    );
    let message = last(&events);
    assert!(
        matches!(&message.content[0], ContentBlock::Thinking(t) if t.thinking == "Let me think. Done.")
    );
    assert_eq!(message.text(), "The answer is 4.");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.api, "openai-completions");
    assert_eq!(message.extra["responseId"], "r1");
    // OpenAI counts reasoning inside completion_tokens: 20 + 15 = 35.
    assert_eq!((message.usage.input, message.usage.output), (20, 15));
    assert_eq!(message.usage.total_tokens, Some(35));
}

#[test]
fn xai_usage_in_the_choice_adds_reasoning_once_and_empty_usage_is_skipped() {
    let events = chunks(fixture!("usage-in-choice-xai.chunks.jsonl"));
    assert_eq!(
        trace(&events),
        "start thinking_start thinking_delta thinking_end text_start text_delta text_end done"
    );
    let usage = &last(&events).usage;
    // 10 + 2 + 30 = 42: completion_tokens excluded the reasoning tokens.
    assert_eq!(
        (usage.input, usage.output, usage.total_tokens),
        (10, 32, Some(42))
    );
}

#[test]
fn interleaved_parallel_calls_stream_the_first_and_buffer_the_second() {
    let events = chunks(fixture!("interleaved-parallel-calls.chunks.jsonl"));
    assert_eq!(
        trace(&events),
        "start toolcall_start toolcall_delta toolcall_delta toolcall_end \
         toolcall_start toolcall_delta toolcall_end done"
    );
    assert_eq!(
        deltas(&events, "toolcall_delta"),
        ["{\"path\":", "\"a.txt\"}", "{\"path\":\"b.txt\"}"]
    );
    let message = last(&events);
    assert_eq!(
        calls(message),
        [
            ("call_a".into(), "read".into(), json!({"path": "a.txt"})),
            ("call_b".into(), "write".into(), json!({"path": "b.txt"})),
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[test]
fn calls_without_index_fall_back_to_the_id_then_the_latest_call() {
    let events = chunks(fixture!("calls-without-index.chunks.jsonl"));
    assert_eq!(
        trace(&events),
        "start text_start text_delta text_end toolcall_start toolcall_delta toolcall_delta \
         toolcall_end toolcall_start toolcall_delta toolcall_end done"
    );
    let message = last(&events);
    assert_eq!(
        calls(message),
        [
            ("x1".into(), "ls".into(), json!({"dir": "/"})),
            ("x2".into(), "pwd".into(), json!({})),
        ]
    );
    // `stop` with tool calls is toolUse.
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    // Empty arguments: one synthetic `{}` delta so the deltas parse.
    assert_eq!(deltas(&events, "toolcall_delta")[2], "{}");
}

#[test]
fn late_id_and_name_index_from_one_repeated_finish_and_cached_usage() {
    let events = chunks(fixture!("late-id-and-name.chunks.jsonl"));
    // The call opens only once its name is known; its buffered text goes out
    // as one delta.
    assert_eq!(
        trace(&events),
        "start toolcall_start toolcall_delta toolcall_delta toolcall_end done"
    );
    assert_eq!(
        deltas(&events, "toolcall_delta"),
        ["{\"q\":\"rust", " sse\"}"]
    );
    let message = last(&events);
    assert_eq!(
        calls(message),
        [(
            "call_late".into(),
            "search".into(),
            json!({"q": "rust sse"})
        )]
    );
    let usage = &message.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.total_tokens
        ),
        (36, 12, 64, Some(112))
    );
}

#[test]
fn whole_arguments_empty_arguments_and_only_choice_zero() {
    let events = chunks(fixture!("whole-and-empty-arguments.chunks.jsonl"));
    assert_eq!(
        trace(&events),
        "start toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta \
         toolcall_end done"
    );
    let message = last(&events);
    assert_eq!(
        calls(message),
        [
            ("c1".into(), "now".into(), json!({})),
            ("c2".into(), "add".into(), json!({"a": 1, "b": 2})),
        ]
    );
    assert_eq!(message.text(), "");
    let ModelEvent::ToolCallEnd { tool_call, .. } = &events[6] else {
        panic!("not toolcall_end")
    };
    assert_eq!(tool_call.arguments["b"], 2);
}

#[test]
fn unparsable_arguments_end_in_error_and_are_never_handed_on() {
    let events = chunks(fixture!("unparsable-arguments.chunks.jsonl"));
    assert_eq!(
        trace(&events),
        "start text_start text_delta text_end toolcall_start toolcall_delta error"
    );
    let message = last(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "Calling.");
    assert_eq!(message.tool_calls().count(), 0);
    let error = message.error_message.as_deref().unwrap();
    assert!(
        error.starts_with("the arguments of tool call \"c1\" (read) are not a JSON object: "),
        "{error}"
    );
    assert!(error.ends_with("received: {\"path\": \"a.txt\""), "{error}");
}

#[test]
fn content_filter_and_unknown_finish_reasons_end_in_error_naming_them() {
    let events = chunks(fixture!("content-filter.chunks.jsonl"));
    assert_eq!(trace(&events), "start text_start text_delta error");
    let message = last(&events);
    assert_eq!(message.text(), "I can");
    assert_eq!(
        message.error_message.as_deref(),
        Some("the provider ended the response with finish_reason \"content_filter\"")
    );
    let events = chunks(
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"weird"}]}
[DONE]"#,
    );
    assert_eq!(trace(&events), "start error");
    assert!(last(&events)
        .error_message
        .as_deref()
        .unwrap()
        .contains("\"weird\""));
}

#[test]
fn finish_reason_mapping() {
    for (reason, expected) in [
        ("stop", StopReason::Stop),
        ("end", StopReason::Stop),
        ("length", StopReason::Length),
        ("tool_calls", StopReason::Stop),
        ("function_call", StopReason::Stop),
    ] {
        let body = format!(
            r#"{{"choices":[{{"index":0,"delta":{{"content":"x"}},"finish_reason":"{reason}"}}]}}"#
        );
        assert_eq!(last(&chunks(&body)).stop_reason, expected, "{reason}");
    }
    let with_call = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}"#;
    for reason in ["stop", "tool_calls", "function_call"] {
        let body = format!(
            "{with_call}\n{{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{reason}\"}}]}}"
        );
        assert_eq!(last(&chunks(&body)).stop_reason, StopReason::ToolUse);
    }
    // No finish_reason, but [DONE]: a proper end.
    let events = chunks("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n[DONE]");
    assert_eq!(last(&events).stop_reason, StopReason::Stop);
}

#[test]
fn truncated_streams_end_in_error_with_what_arrived() {
    let events = sse(fixture!("truncated.sse"));
    assert_eq!(
        trace(&events),
        "start text_start text_delta text_delta error"
    );
    let message = last(&events);
    assert_eq!(message.text(), "Once upon a time");
    assert!(message
        .error_message
        .as_deref()
        .unwrap()
        .contains("truncated"));
    // An empty body too.
    let events = sse("");
    assert_eq!(trace(&events), "error");
}

#[test]
fn in_band_errors_and_non_json_data_end_in_error_with_the_message() {
    let events = sse(fixture!("in-band-error.sse"));
    assert_eq!(trace(&events), "start text_start text_delta error");
    let message = last(&events);
    assert_eq!(message.text(), "Partial");
    assert_eq!(
        message.error_message.as_deref(),
        Some("Upstream provider overloaded (code: 502)")
    );

    let events = sse("data: {\"error\":\"quota exceeded\"}\n\n");
    assert_eq!(trace(&events), "error");
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("quota exceeded")
    );

    let events = sse("data: {\"choices\":[]}\n\ndata: Internal Server Error\n\n");
    assert_eq!(trace(&events), "start error");
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("the provider sent data that is not JSON: Internal Server Error")
    );

    let events = sse("data: {\"choices\":\"nope\"}\n\n");
    assert!(last(&events)
        .error_message
        .as_deref()
        .unwrap()
        .contains("not a chat.completion.chunk"));

    let events = sse("event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n");
    assert_eq!(last(&events).error_message.as_deref(), Some("boom"));

    // A named event other than `error` is skipped.
    let events = sse("event: ping\ndata: {}\n\ndata: [DONE]\n\n");
    assert_eq!(trace(&events), "start done");
}

#[test]
fn a_200_body_that_is_not_an_event_stream_is_an_error_quoting_it() {
    let events =
        sse("{\"error\":{\"message\":\"Invalid model\",\"type\":\"invalid_request_error\"}}");
    assert_eq!(trace(&events), "error");
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("the response is not an event stream: Invalid model (code: invalid_request_error)")
    );
}

#[test]
fn events_after_done_are_ignored() {
    let events = sse(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\ndata: not json\n\n",
    );
    assert_eq!(trace(&events), "start text_start text_delta text_end done");
    assert_eq!(last(&events).text(), "a");
}

#[test]
fn a_fragment_for_a_call_that_already_ended_is_an_error() {
    let events = chunks(
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{"content":"text"}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"  "}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"}}]}}]}"#,
    );
    assert_eq!(
        trace(&events),
        "start toolcall_start toolcall_delta toolcall_end text_start text_delta error"
    );
    assert!(last(&events)
        .error_message
        .as_deref()
        .unwrap()
        .contains("after it was complete"));
}

#[test]
fn a_call_that_never_gets_a_name_is_an_error() {
    let events = chunks(
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    );
    assert_eq!(trace(&events), "start error");
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("tool call \"a\" never received a name")
    );
}

const MID_TEXT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n";
const MID_CALL: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n";

#[test]
fn abort_mid_text_keeps_the_text_without_text_end() {
    let controller = AbortController::new();
    let mut stream = OpenAiStream::new("m", "p", Some(controller.signal()));
    let mut events: Vec<ModelEvent> = stream.feed(MID_TEXT.as_bytes()).collect();
    controller.abort();
    events.extend(stream.feed(b"data: {\"choices\":[]}\n\n"));
    events.extend(stream.finish_input());
    let events = checked(events);
    assert_eq!(trace(&events), "start text_start text_delta error");
    let ModelEvent::Error { reason, error, .. } = events.last().unwrap() else {
        panic!("not an error")
    };
    assert_eq!(*reason, ErrorReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.text(), "Hel");
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
}

#[test]
fn abort_mid_call_leaves_out_an_incomplete_call_and_keeps_a_complete_one() {
    let mut stream = OpenAiStream::new("m", "p", None);
    let mut events: Vec<ModelEvent> = stream.feed(MID_TEXT.as_bytes()).collect();
    events.extend(stream.feed(MID_CALL.as_bytes()));
    events.extend(stream.abort());
    events.extend(stream.abort());
    let events = checked(events);
    assert_eq!(
        trace(&events),
        "start text_start text_delta text_end toolcall_start toolcall_delta error"
    );
    let message = last(&events);
    assert_eq!(message.content.len(), 1);
    assert_eq!(message.text(), "Hel");

    let mut stream = OpenAiStream::new("m", "p", None);
    let mut events: Vec<ModelEvent> = stream.feed(MID_CALL.as_bytes()).collect();
    events.extend(stream.feed(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\n",
    ));
    events.extend(stream.abort());
    let events = checked(events);
    assert_eq!(
        calls(last(&events)),
        [("c".into(), "f".into(), json!({"a": 1}))]
    );
}

#[test]
fn http_errors_name_the_status_and_the_provider_message() {
    let cases: [(u16, &[u8], Option<&str>, &str); 4] = [
        (
            401,
            br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            None,
            "HTTP 401 Unauthorized: Incorrect API key provided (code: invalid_api_key)",
        ),
        (
            404,
            br#"{"message":"model not found"}"#,
            None,
            "HTTP 404 Not Found: model not found",
        ),
        (
            429,
            b"slow down",
            Some("7"),
            "HTTP 429 Too Many Requests: slow down; retry after 7",
        ),
        (503, b"", None, "HTTP 503 Service Unavailable"),
    ];
    for (status, body, retry, expected) in cases {
        let mut stream = OpenAiStream::new("m", "p", None);
        let events = checked(stream.http_error(status, body, retry).collect());
        assert_eq!(trace(&events), "error");
        assert_eq!(last(&events).error_message.as_deref(), Some(expected));
        assert!(stream.is_finished());
        assert_eq!(stream.feed(MID_TEXT.as_bytes()).count(), 0);
    }
}

#[test]
fn a_transport_failure_mid_stream_keeps_the_partial() {
    let mut stream = OpenAiStream::new("m", "p", None).with_timestamp(1_700_000_000_000);
    let mut events: Vec<ModelEvent> = stream.feed(MID_TEXT.as_bytes()).collect();
    events.extend(stream.fail("connection reset"));
    let events = checked(events);
    let message = last(&events);
    assert_eq!(message.text(), "Hel");
    assert_eq!(message.timestamp, 1_700_000_000_000);
    assert_eq!(message.error_message.as_deref(), Some("connection reset"));
}

#[test]
fn partials_are_snapshots_and_toolcall_delta_partials_hold_raw_arguments() {
    let events = chunks(fixture!("interleaved-parallel-calls.chunks.jsonl"));
    let ModelEvent::ToolCallDelta { partial, .. } = &events[2] else {
        panic!("not a delta")
    };
    let Some(ContentBlock::ToolCall(call)) = partial.content_block(0) else {
        panic!("no call")
    };
    assert_eq!(call.raw_arguments.as_deref(), Some("{\"path\":"));
    assert!(call.arguments.is_empty());
    assert_eq!(partial.content_len(), 1);
}
