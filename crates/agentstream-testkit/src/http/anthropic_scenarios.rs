//! The end-to-end scenarios of the Anthropic Messages model, written once
//! against [`Model`] and run by every HTTP adapter (tokio, smol,
//! async-std), like [`scenarios`](crate::http::scenarios) for OpenAI.
//!
//! The server answers with Anthropic-shaped bodies (`event:` + `data:`
//! SSE). None of the checks depends on wall-clock timing: pauses only slow
//! the server down, and the abort and timeout scenarios hold the body open
//! forever, so they can only end through the mechanism under test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::{AbortController, Model, ModelEvent, StreamOptions, ABORTED_MESSAGE};
use agentstream_wire::anthropic::AnthropicConfig;
use futures_util::StreamExt;
use serde_json::{json, Value};

use crate::http::scenarios::{call, TEST_KEY};
use crate::http::{named_sse_body, split_randomly, BodyEnd, MockServer, Reply, Rng};

fn config(server: &MockServer) -> AnthropicConfig {
    AnthropicConfig::new("claude-test")
        .with_base_url(server.origin())
        .with_api_key(TEST_KEY)
}

const TEXT: [&str; 5] = ["Hel", "lo, ", "wörld", " — ", "👋"];
const THINKING: [&str; 2] = ["The user ", "greets me."];

/// A full answer: thinking with a signature, text, a `ping`, and a tool
/// call whose arguments come in pieces (the first one `""`), then
/// `tool_use` with cumulative usage.
pub fn answer_payloads() -> Vec<Value> {
    let mut p = vec![
        json!({"type": "message_start", "message": {"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 12, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 2, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    ];
    for piece in THINKING {
        p.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": piece}}));
    }
    p.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-abc"}}));
    p.push(json!({"type": "content_block_stop", "index": 0}));
    p.push(json!({"type": "ping"}));
    p.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}));
    for piece in TEXT {
        p.push(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": piece}}));
    }
    p.push(json!({"type": "content_block_stop", "index": 1}));
    p.push(json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "wave", "input": {}}}));
    for piece in ["", "{\"to\":", " \"you\"}"] {
        p.push(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    p.push(json!({"type": "content_block_stop", "index": 2}));
    p.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}));
    p.push(json!({"type": "message_stop"}));
    p
}

fn check_answer(message: &agentstream::message::AssistantMessage) {
    assert_eq!(
        message.stop_reason,
        StopReason::ToolUse,
        "{:?}",
        message.error_message
    );
    assert_eq!(message.text(), TEXT.concat());
    assert_eq!(message.api, "anthropic-messages");
    assert_eq!(message.provider, "anthropic");
    assert_eq!(message.model, "claude-test");
    match &message.content[0] {
        ContentBlock::Thinking(t) => {
            assert_eq!(t.thinking, THINKING.concat());
            assert_eq!(t.thinking_signature.as_deref(), Some("sig-abc"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    let call = message.tool_calls().next().expect("a tool call");
    assert_eq!((call.id.as_str(), call.name.as_str()), ("toolu_1", "wave"));
    assert_eq!(Value::Object(call.arguments.clone()), json!({"to": "you"}));
    let usage = &message.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write
        ),
        (12, 30, 3, 2)
    );
    assert_eq!(usage.total_tokens, Some(47));
    assert_eq!(
        message.extra.get("responseId").and_then(Value::as_str),
        Some("msg_test")
    );
}

/// The answer in random pieces (1 to 64 bytes, boundaries inside UTF-8
/// characters and lines) over many calls: always the same message. Also
/// checks the request: path, `x-api-key`, `anthropic-version`, body.
pub async fn random_chunk_boundaries<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let body = named_sse_body(&answer_payloads());
    let counter = AtomicU64::new(7);
    let server = MockServer::start(move |_| {
        let seed = counter.fetch_add(1, Ordering::SeqCst);
        Reply::sse(split_randomly(&body, &mut Rng::new(seed), 64))
    })
    .expect("server");
    let model = make(config(&server).with_defaults(StreamOptions::default().with_max_tokens(321)));
    for _ in 0..12 {
        let (events, message) = call(&model, StreamOptions::default()).await;
        check_answer(&message);
        assert!(events.iter().any(|e| e.type_name() == "thinking_delta"));
        assert!(events.iter().any(|e| e.type_name() == "toolcall_end"));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 12);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 321);
    assert_eq!(body["stream"], true);
    // Pi's default cache retention, `short`, marks the last user block.
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

/// One byte per HTTP chunk, with a pause after each.
pub async fn slow_drip<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let body = named_sse_body(&answer_payloads());
    let server = MockServer::start(move |_| {
        Reply::sse(body.iter().map(|b| vec![*b]).collect()).with_delay(Duration::from_micros(100))
    })
    .expect("server");
    let model = make(config(&server));
    let (events, message) = call(&model, StreamOptions::default()).await;
    check_answer(&message);
    assert!(
        events
            .iter()
            .filter(|e| e.type_name() == "text_delta")
            .count()
            >= TEXT.len()
    );
}

/// The connection closes in the middle of the text: `error`, keeping the
/// thinking and the text received so far.
pub async fn mid_stream_disconnect<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let payloads = answer_payloads();
    // Up to the first text delta.
    let body = named_sse_body(&payloads[..9]);
    let server =
        MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Disconnect))
            .expect("server");
    let model = make(config(&server));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), TEXT[0]);
    assert!(message.error_message.is_some());
}

/// An `error` event after HTTP 200 (`overloaded_error`), then the server
/// closes the connection: one `error` naming the type and the message,
/// with the text so far.
pub async fn error_event_after_200<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let mut payloads = answer_payloads()[..9].to_vec();
    payloads.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let body = named_sse_body(&payloads);
    let server =
        MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Disconnect))
            .expect("server");
    let model = make(config(&server));
    let (events, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("overloaded_error: Overloaded")
    );
    assert_eq!(message.text(), TEXT[0]);
    assert_eq!(events.last().map(ModelEvent::type_name), Some("error"));
}

/// `max_tokens` cuts the stream inside a `tool_use` block: no
/// `content_block_stop`, a `message_delta` with `max_tokens`, and the body
/// ends without `message_stop`. The call ends in `error` (truncated) and
/// the half-written tool call is left out.
pub async fn cut_off_in_tool_use<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let mut payloads: Vec<Value> = answer_payloads()[..14].to_vec();
    payloads.push(json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "write", "input": {}}}));
    payloads.push(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"text\": \"a very long"}}));
    payloads.push(json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 50}}));
    let body = named_sse_body(&payloads);
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let model = make(config(&server));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.clone().unwrap_or_default();
    assert!(error.contains("truncated"), "{error}");
    assert_eq!(message.text(), TEXT.concat());
    assert_eq!(message.tool_calls().count(), 0);
    assert_eq!(message.usage.output, 50);
}

/// 401, 429 with `Retry-After`, 500, 529 (overloaded) with `Retry-After`,
/// and a plain-text 503: each one `error` naming the status, Anthropic's
/// error type and message, and the retry delay.
pub async fn error_statuses<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let error = |kind: &str, message: &str| json!({"type": "error", "error": {"type": kind, "message": message}});
    let cases: Vec<(Reply, Vec<&str>)> = vec![
        (
            Reply::json(
                401,
                &[],
                &error("authentication_error", "invalid x-api-key"),
            ),
            vec![
                "HTTP 401 Unauthorized",
                "invalid x-api-key (code: authentication_error)",
            ],
        ),
        (
            Reply::json(
                429,
                &[("retry-after", "17")],
                &error("rate_limit_error", "Rate limited"),
            ),
            vec![
                "HTTP 429",
                "Rate limited (code: rate_limit_error)",
                "retry after 17",
            ],
        ),
        (
            Reply::json(500, &[], &error("api_error", "Internal server error")),
            vec!["HTTP 500", "Internal server error (code: api_error)"],
        ),
        (
            Reply::json(
                529,
                &[("retry-after", "5")],
                &error("overloaded_error", "Overloaded"),
            ),
            vec![
                "HTTP 529 Overloaded",
                "Overloaded (code: overloaded_error)",
                "retry after 5",
            ],
        ),
        (
            Reply::Fixed {
                status: 503,
                headers: vec![],
                content_type: "text/plain".into(),
                body: b"upstream connect error".to_vec(),
            },
            vec!["HTTP 503", "upstream connect error"],
        ),
    ];
    for (reply, expected) in cases {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let model = make(config(&server));
        let (events, message) = call(&model, StreamOptions::default()).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(events.len(), 1, "{events:?}");
        let error = message.error_message.clone().unwrap_or_default();
        for needle in expected {
            assert!(error.contains(needle), "{error:?} lacks {needle:?}");
        }
    }
}

/// A body that never ends: the caller's abort, fired at the first text
/// delta, ends the call in `error(aborted)` with that text.
pub async fn abort_never_ending_body<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let body = named_sse_body(&answer_payloads()[..9]);
    let server = MockServer::start(move |_| {
        Reply::sse(vec![body.clone()]).with_end(BodyEnd::KeepAlive(Duration::from_millis(5)))
    })
    .expect("server");
    let model = make(config(&server));
    let controller = AbortController::new();
    let context =
        agentstream::message::Context::from_messages([agentstream::message::user("hi").into()]);
    let mut stream = model.stream(
        &context,
        StreamOptions::default().with_signal(controller.signal()),
    );
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if event.type_name() == "text_delta" {
            controller.abort();
        }
        events.push(event);
    }
    let message = stream.result().await;
    assert!(agentstream::model::validate_events(&events).is_empty());
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(message.text(), TEXT[0]);
}

/// A body that goes silent: the idle timeout ends the call in
/// `error(aborted)` naming it.
pub async fn idle_timeout<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let body = named_sse_body(&answer_payloads()[..9]);
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Hang))
        .expect("server");
    let model = make(config(&server).with_idle_timeout(Duration::from_millis(150)));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(
        message.error_message.as_deref(),
        Some("idle timeout: nothing received for 150ms")
    );
    assert_eq!(message.text(), TEXT[0]);
}
