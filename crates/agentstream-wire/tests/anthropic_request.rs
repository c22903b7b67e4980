//! The Anthropic request builder, tool-call id normalization, the
//! endpoint configuration, and `AnthropicStream` (surrogates split across
//! deltas, random chunk boundaries, HTTP errors).

use agentstream::message::{
    assistant, image, text, thinking, tool_call, tool_result, user, user_blocks, ContentBlock,
    Context, Message, StopReason, ThinkingContent, Tool,
};
use agentstream::model::{validate_events, CacheRetention, ModelEvent, StreamOptions, ToolChoice};
use agentstream_wire::anthropic::{
    is_valid_tool_id, AnthropicConfig, AnthropicMessages, AnthropicStream,
};
use serde_json::{json, Value};

mod body_support;
use body_support::{request_body, request_body_with};

fn body(context: &Context, model: &str, options: &StreamOptions) -> Value {
    request_body_with(&AnthropicMessages::default(), model, context, options)
        .expect("valid context")
}

/// The message as if `claude-x` on the Anthropic API wrote it, so its
/// thinking is sent back as thinking.
fn same_model(
    mut message: agentstream::message::AssistantMessage,
) -> agentstream::message::AssistantMessage {
    message.provider = "anthropic".into();
    message.api = "anthropic-messages".into();
    message.model = "claude-x".into();
    message
}

/// The final message of a call's events (its terminal event's).
fn last_message(events: &[ModelEvent]) -> &agentstream::message::AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("the events end with a terminal event")
}

/// Panics unless `message` stopped normally, showing its error message.
fn assert_stopped(message: &agentstream::message::AssistantMessage) {
    assert_eq!(
        message.stop_reason,
        StopReason::Stop,
        "{:?}",
        message.error_message
    );
}

#[test]
fn every_block_kind_is_sent_as_anthropic_content() {
    let signed = ContentBlock::Thinking(ThinkingContent {
        thinking: "Let me think.".into(),
        thinking_signature: Some("sig-1".into()),
        ..ThinkingContent::default()
    });
    let redacted = ContentBlock::Thinking(ThinkingContent {
        thinking_signature: Some("opaque".into()),
        redacted: Some(true),
        ..ThinkingContent::default()
    });
    let mut result = tool_result("c1", "look", "seen", true);
    result.content.push(image("AAAA", "image/png"));
    let context = Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![
            user_blocks([text("Look:"), text(""), image("QUJD", "image/jpeg")]).into(),
            same_model(assistant(
                [
                    signed,
                    redacted,
                    thinking("unsigned"),
                    text(""),
                    text("Looking."),
                    tool_call("c1", "look", json!({"at": "it"})),
                    tool_call("c2", "none", json!({})),
                ],
                StopReason::ToolUse,
            ))
            .into(),
            result.into(),
            tool_result("c2", "none", "ok", false).into(),
            user("Thanks").into(),
        ],
        tools: Some(vec![Tool {
            name: "look".into(),
            description: "Looks.".into(),
            parameters: json!({"type": "object", "properties": {"at": {"type": "string"}}}),
            extra: Default::default(),
        }]),
        extra: Default::default(),
    };
    let options = StreamOptions::default()
        .with_max_tokens(1000)
        .with_thinking_budget(2000)
        .with_tool_choice(ToolChoice::Tool("look".into()))
        .with_temperature(1.0);
    let body = body(&context, "claude-x", &options);
    assert_eq!(body["model"], "claude-x");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    );
    // max_tokens must exceed the budget: raised to budget + max_tokens.
    assert_eq!(body["max_tokens"], 3000);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2000})
    );
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "look"}));
    assert_eq!(body["temperature"], 1.0);
    assert_eq!(
        body["tools"],
        json!([{"name": "look", "description": "Looks.", "input_schema": {"type": "object", "properties": {"at": {"type": "string"}}}, "cache_control": {"type": "ephemeral"}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Look:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}},
        ]})
    );
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me think.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "unsigned"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "c1", "name": "look", "input": {"at": "it"}},
            {"type": "tool_use", "id": "c2", "name": "none", "input": {}},
        ]})
    );
    // Both results in one user message; the image result as blocks.
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "is_error": true, "content": [
                {"type": "text", "text": "seen"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            ]},
            {"type": "tool_result", "tool_use_id": "c2", "is_error": false, "content": "ok"},
        ]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]})
    );
}

#[test]
fn without_options_only_the_required_fields_are_sent() {
    let context = Context::from_messages([user("hi").into()]);
    let uncached = StreamOptions::default().with_cache_retention(CacheRetention::None);
    assert_eq!(
        body(&context, "m", &uncached),
        json!({"model": "m", "max_tokens": 4096, "stream": true, "messages": [{"role": "user", "content": "hi"}]})
    );
    // Pi's default retention, `Short`, marks the last user block.
    assert_eq!(
        body(&context, "m", &StreamOptions::default())["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}])
    );
}

#[test]
fn ids_anthropic_would_refuse_are_rewritten_in_calls_and_results() {
    let long = format!("fc_{}", "0123456789".repeat(9));
    let ids = [long.as_str(), "call.1", "call:1", "call_1"];
    let mut messages: Vec<Message> = vec![user("go").into()];
    messages.push(
        assistant(
            ids.iter().map(|id| tool_call(*id, "f", json!({}))),
            StopReason::ToolUse,
        )
        .into(),
    );
    for id in ids {
        messages.push(tool_result(id, "f", "done", false).into());
    }
    let body = body(
        &Context::from_messages(messages),
        "m",
        &StreamOptions::default(),
    );
    let calls: Vec<&str> = body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = body["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(calls, results);
    assert!(calls.iter().all(|id| is_valid_tool_id(id)), "{calls:?}");
    let distinct: std::collections::BTreeSet<&&str> = calls.iter().collect();
    assert_eq!(distinct.len(), 4, "{calls:?}");
    assert_eq!(calls[3], "call_1", "valid ids are kept");
    assert_ne!(calls[1], calls[2], "call.1 and call:1 must not collide");
}

#[test]
fn unpaired_tool_calls_are_refused() {
    let context = Context::from_messages([
        user("hi").into(),
        assistant([tool_call("c1", "f", json!({}))], StopReason::ToolUse).into(),
    ]);
    let error = request_body(&AnthropicMessages::default(), "m", &context).unwrap_err();
    assert_eq!(error.diagnostics[0].code, "unanswered-tool-call");
}

#[test]
fn the_config_prepares_url_headers_and_body() {
    let config = AnthropicConfig::new("claude-x")
        .with_base_url("http://127.0.0.1:9/?beta=1")
        .with_api_key("sk-ant")
        .with_defaults(StreamOptions::default().with_max_tokens(77));
    let request = config
        .prepare(&Context::from_messages([user("hi").into()]))
        .unwrap();
    assert_eq!(request.url, "http://127.0.0.1:9/v1/messages?beta=1");
    assert_eq!(request.header("x-api-key"), Some("sk-ant"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["max_tokens"], 77);
    assert!(!format!("{request:?}").contains("sk-ant"));
}

fn sse(payloads: &[Value]) -> String {
    payloads
        .iter()
        .map(|p| format!("event: {}\ndata: {p}\n\n", p["type"].as_str().unwrap()))
        .collect()
}

fn text_stream(deltas: &[&str]) -> String {
    let mut payloads = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 4}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for delta in deltas {
        payloads.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": delta}}));
    }
    payloads.push(json!({"type": "content_block_stop", "index": 0}));
    payloads.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}));
    payloads.push(json!({"type": "message_stop"}));
    sse(&payloads)
}

fn decode(body: &[u8], piece: usize) -> Vec<ModelEvent> {
    let mut stream = AnthropicStream::new("claude-x", "anthropic", None).with_timestamp(1234);
    let mut events: Vec<ModelEvent> = Vec::new();
    for chunk in body.chunks(piece.max(1)) {
        events.extend(stream.feed(chunk));
    }
    events.extend(stream.finish_input());
    assert!(
        validate_events(&events).is_empty(),
        "{:?}",
        validate_events(&events)
    );
    events
}

#[test]
fn surrogate_halves_split_across_deltas_are_joined() {
    // JavaScript cut 😀 (U+1F600) between its halves: the JSON carries
    // `\ud83d` in one delta and `\ude00` in the next.
    let body = text_stream(&["a", "b", "c"])
        .replace("\"text\":\"a\"", r#""text":"x\ud83d""#)
        .replace("\"text\":\"b\"", r#""text":"\ude00y""#)
        .replace("\"text\":\"c\"", r#""text":"\ud83d""#);
    for piece in [1, 5, 64, 4096] {
        let events = decode(body.as_bytes(), piece);
        let message = last_message(&events);
        assert_stopped(message);
        assert_eq!(message.text(), "x😀y\u{fffd}");
        assert_eq!(message.timestamp, 1234);
    }
}

#[test]
fn an_error_status_names_the_anthropic_error_type() {
    let mut stream = AnthropicStream::new("claude-x", "anthropic", None);
    let body = br#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
    let events: Vec<ModelEvent> = stream.http_error(429, body, Some("12")).collect();
    let message = events[0].terminal_message().unwrap();
    assert_eq!(
        message.error_message.as_deref(),
        Some("HTTP 429 Too Many Requests: Number of request tokens has exceeded your per-minute rate limit (code: rate_limit_error); retry after 12")
    );
    assert!(stream.is_finished());
}

#[test]
fn a_body_that_is_not_an_event_stream_is_quoted() {
    let events = decode(
        br#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#,
        7,
    );
    let message = last_message(&events);
    assert_eq!(
        message.error_message.as_deref(),
        Some("the response is not an event stream: boom (code: api_error)")
    );
}

#[test]
fn fields_of_unexpected_types_are_tolerated_as_absent() {
    // Built payload by payload: serde_json's key order depends on its
    // `preserve_order` feature, so text replacement would be fragile.
    let body = sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 4}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "b"}}),
        json!({"type": "content_block_stop", "index": "zero", "delta": "odd"}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ]);
    let events = decode(body.as_bytes(), 3);
    let message = last_message(&events);
    assert_stopped(message);
    assert_eq!(message.text(), "b");
}
