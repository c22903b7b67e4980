//! The end-to-end scenarios every HTTP adapter runs, written once against
//! [`Model`] so that each runtime is held to the same behaviour.
//!
//! Each scenario starts its own [`MockServer`], builds a model with the
//! adapter's `make` function from an [`OpenAiConfig`] pointing at it, runs
//! calls, checks every event sequence with [`validate_events`] and panics
//! on any mismatch. None depends on wall-clock timing: pauses only slow the
//! server down, and the abort and timeout scenarios hold the server open
//! forever, so they can only end through the mechanism under test.

use std::time::Duration;

use agentstream::message::{user, AssistantMessage, ContentBlock, Context, StopReason};
use agentstream::model::{
    validate_events, AbortController, Model, ModelEvent, StreamOptions, ABORTED_MESSAGE,
};
use agentstream_wire::limits::Limits;
use agentstream_wire::openai::OpenAiConfig;
use futures_util::StreamExt;
use serde_json::json;

use crate::http::{answer_payloads, split_randomly, sse_body, BodyEnd, MockServer, Reply, Rng};
use crate::http::{assert_stopped, refused_port, unanswered_tls};

/// The API key the scenarios configure.
pub const TEST_KEY: &str = "sk-test-not-a-secret";

fn context() -> Context {
    Context::from_messages([user("Say hello").into()])
}

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(server.base_url(), "test-model").with_api_key(TEST_KEY)
}

/// Runs one call to its end, checks the sequence and returns it with the
/// final message.
pub async fn call<M: Model>(
    model: &M,
    options: StreamOptions,
) -> (Vec<ModelEvent>, AssistantMessage) {
    let mut stream = model.stream(&context(), options);
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let message = stream.result().await;
    check(&events, &message);
    (events, message)
}

fn check(events: &[ModelEvent], message: &AssistantMessage) {
    let findings = validate_events(events);
    assert!(findings.is_empty(), "protocol findings: {findings:?}");
    let last = events.last().and_then(ModelEvent::terminal_message);
    assert_eq!(
        last,
        Some(message),
        "the result is the terminal event's message"
    );
}

fn thinking(message: &AssistantMessage) -> String {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(t) => Some(t.thinking.as_str()),
            _ => None,
        })
        .collect()
}

const TEXT: [&str; 6] = ["Hel", "lo, ", "wörld", " — ", "ça va", "? 👋"];
const REASONING: [&str; 3] = ["The user ", "wants a ", "greeting."];

/// The same answer served in random pieces (1 to 64 bytes, boundaries
/// inside UTF-8 characters included) over many calls: always the same
/// message. Also checks the request the server saw.
pub async fn random_chunk_boundaries<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&REASONING, &TEXT));
    let counter = std::sync::atomic::AtomicU64::new(100);
    let server = MockServer::start(move |_| {
        let seed = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Reply::sse(split_randomly(&body, &mut Rng::new(seed), 64))
    })
    .expect("server");
    let model = make(config(&server));
    for _ in 0..12 {
        let (events, message) = call(&model, StreamOptions::default()).await;
        assert_stopped(&message);
        assert_eq!(message.text(), TEXT.concat());
        assert_eq!(thinking(&message), REASONING.concat());
        assert_eq!(message.usage.input, 11);
        assert_eq!(message.usage.total_tokens, Some(18));
        assert_eq!(message.model, "test-model");
        assert!(events.iter().any(|e| e.type_name() == "thinking_delta"));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 12);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    let bearer = format!("Bearer {TEST_KEY}");
    assert_eq!(request.header("authorization"), Some(bearer.as_str()));
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": "Say hello"})
    );
}

/// Different random splits per call: the server picks a new seed for each
/// connection.
pub async fn many_random_splits<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&[], &TEXT));
    let counter = std::sync::atomic::AtomicU64::new(1);
    let server = MockServer::start(move |_| {
        let seed = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9));
        let max = 1 + rng.below(48);
        Reply::sse(split_randomly(&body, &mut rng, max))
    })
    .expect("server");
    let model = make(config(&server));
    for _ in 0..24 {
        let (_, message) = call(&model, StreamOptions::default()).await;
        assert_eq!(message.text(), TEXT.concat());
        assert_eq!(message.stop_reason, StopReason::Stop);
    }
}

/// One byte per HTTP chunk, with a pause after each.
pub async fn slow_drip<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&["hmm"], &["drip", " drop"]));
    let server = MockServer::start(move |_| {
        Reply::sse(body.iter().map(|b| vec![*b]).collect()).with_delay(Duration::from_micros(300))
    })
    .expect("server");
    let model = make(config(&server));
    let (events, message) = call(&model, StreamOptions::default()).await;
    assert_stopped(&message);
    assert_eq!(message.text(), "drip drop");
    assert_eq!(thinking(&message), "hmm");
    assert!(
        events
            .iter()
            .filter(|e| e.type_name() == "text_delta")
            .count()
            >= 2
    );
}

/// The connection closes in the middle of the body: `error`, keeping the
/// text received so far, never a silent truncation.
pub async fn mid_stream_disconnect<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let payloads = answer_payloads(&[], &["first part", " second part"]);
    // The role chunk and the first text chunk only.
    let body = sse_body(&payloads[..2]);
    let server =
        MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Disconnect))
            .expect("server");
    let model = make(config(&server));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "first part");
    assert!(message.error_message.is_some());
}

/// The server closes cleanly, but before `[DONE]` or a `finish_reason`.
pub async fn truncated_body<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let payloads = answer_payloads(&[], &["cut"]);
    let body = sse_body(&payloads[..2]);
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let model = make(config(&server));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "cut");
    let error = message.error_message.unwrap_or_default();
    assert!(error.contains("truncated"), "{error}");
}

/// 401, 404, 429 with `Retry-After`, 500, 503 with a text body, and a 200
/// whose body is a JSON error, then an SSE `data:` error: each is one
/// `error` naming the status and the provider's message.
pub async fn error_statuses<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let cases: Vec<(Reply, Vec<&str>)> = vec![
        (
            Reply::json(
                401,
                &[],
                &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ),
            vec!["HTTP 401", "Unauthorized", "Incorrect API key provided"],
        ),
        (
            Reply::json(
                404,
                &[],
                &json!({"error": {"message": "The model `nope` does not exist"}}),
            ),
            vec!["HTTP 404", "The model `nope` does not exist"],
        ),
        (
            Reply::json(
                429,
                &[("retry-after", "7")],
                &json!({"error": {"message": "Rate limit reached"}}),
            ),
            vec!["HTTP 429", "Rate limit reached", "retry after 7"],
        ),
        (
            Reply::json(500, &[], &json!({"message": "internal failure"})),
            vec!["HTTP 500", "internal failure"],
        ),
        (
            Reply::Fixed {
                status: 503,
                headers: vec![],
                content_type: "text/plain".into(),
                body: b"upstream overloaded".to_vec(),
            },
            vec!["HTTP 503", "upstream overloaded"],
        ),
        (
            Reply::json(200, &[], &json!({"error": {"message": "model is loading"}})),
            vec!["model is loading"],
        ),
        (
            Reply::sse(vec![sse_body(&[
                answer_payloads(&[], &["partial"])[1].clone(),
                json!({"error": {"message": "the server had an error"}}).to_string(),
            ])]),
            vec!["the server had an error"],
        ),
    ];
    for (reply, expected) in cases {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let model = make(config(&server));
        let (events, message) = call(&model, StreamOptions::default()).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        let error = message.error_message.clone().unwrap_or_default();
        for needle in expected {
            assert!(error.contains(needle), "{error:?} lacks {needle:?}");
        }
        assert_eq!(events.last().map(ModelEvent::type_name), Some("error"));
    }
}

/// A body that never ends (keep-alive comments forever): the caller's
/// abort, fired when the first text arrives, ends the call with
/// `error(aborted)` and that text.
pub async fn abort_never_ending_body<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let payloads = answer_payloads(&[], &["so far"]);
    let body = sse_body(&payloads[..2]);
    let server = MockServer::start(move |_| {
        Reply::sse(vec![body.clone()]).with_end(BodyEnd::KeepAlive(Duration::from_millis(5)))
    })
    .expect("server");
    let model = make(config(&server));
    let controller = AbortController::new();
    let mut stream = model.stream(
        &context(),
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
    check(&events, &message);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(message.text(), "so far");
}

/// A body that goes silent forever: the idle timeout ends the call with
/// `error(aborted)` and the text so far.
pub async fn idle_timeout<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let payloads = answer_payloads(&[], &["before silence"]);
    let body = sse_body(&payloads[..2]);
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Hang))
        .expect("server");
    let model = make(config(&server).with_idle_timeout(Duration::from_millis(150)));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.text(), "before silence");
    // The message says which timeout, not "Request was aborted".
    assert_eq!(
        message.error_message.as_deref(),
        Some("idle timeout: nothing received for 150ms")
    );
}

/// A server that sends `data: ` and then bytes without a line break,
/// forever: the line limit ends the call in `error` naming it, with the
/// text received before, and the client stops reading.
pub async fn endless_line<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let payloads = answer_payloads(&[], &["before the flood"]);
    let mut start = sse_body(&payloads[..2]);
    start.extend_from_slice(b"data: ");
    let server = MockServer::start(move |_| {
        Reply::sse(vec![start.clone()]).with_end(BodyEnd::Endless(vec![b'x'; 16 * 1024]))
    })
    .expect("server");
    let limits = Limits::default().with_max_line_bytes(256 * 1024);
    let model = make(config(&server).with_limits(limits));
    let (events, message) = call(&model, StreamOptions::default()).await;
    check(&events, &message);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("response limit exceeded: an SSE line is longer than max_line_bytes (262144)")
    );
    assert_eq!(message.text(), "before the flood");
}

/// An endless stream of small text deltas: the response limit ends it.
pub async fn endless_deltas<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let delta = sse_body(&[r#"{"choices":[{"index":0,"delta":{"content":"abcd"}}]}"#]);
    let server = MockServer::start(move |_| {
        Reply::sse(vec![b": start\n".to_vec()]).with_end(BodyEnd::Endless(delta.repeat(64)))
    })
    .expect("server");
    let limits = Limits::default().with_max_response_bytes(256 << 10);
    let model = make(config(&server).with_limits(limits));
    let (events, message) = call(&model, StreamOptions::default()).await;
    check(&events, &message);
    assert_eq!(
        message.error_message.as_deref(),
        Some(
            "response limit exceeded: the response body is larger than max_response_bytes (262144)"
        )
    );
    assert!(message.text().len() > 4096, "{}", message.text().len());
    assert!(message.text().bytes().all(|b| b"abcd".contains(&b)));
}

/// A server that accepts TCP but never answers the TLS handshake: the
/// connect timeout ends the call with `error(aborted)`.
pub async fn connect_timeout<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    // Never accepted: the kernel completes the TCP handshake, nobody reads.
    let (listener, unanswered) = unanswered_tls();
    let model = make(unanswered);
    let (events, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(
        message.stop_reason,
        StopReason::Aborted,
        "{:?}",
        message.error_message
    );
    assert_eq!(events.len(), 1);
    let text = message.error_message.unwrap_or_default();
    assert!(
        text.starts_with("connect timeout: no connection within 150ms"),
        "{text}"
    );
    drop(listener);
}

/// Nobody listens on the port: a transport `error` (not an abort).
pub async fn connection_refused<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let port = refused_port();
    let model = make(OpenAiConfig::new(
        format!("http://127.0.0.1:{port}/v1"),
        "test-model",
    ));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message.error_message.is_some());
}

/// A context whose tool call has no result is never sent: `error` naming
/// the linkage finding, and the server sees no request.
pub async fn broken_context_is_not_sent<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    use agentstream::message::{assistant, tool_call};
    let server = MockServer::start(|_| Reply::sse(vec![])).expect("server");
    let model = make(config(&server));
    let context = Context::from_messages([
        user("hi").into(),
        assistant([tool_call("c1", "f", json!({}))], StopReason::ToolUse).into(),
    ]);
    let mut stream = model.stream(&context, StreamOptions::default());
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let message = stream.result().await;
    check(&events, &message);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.unwrap_or_default();
    assert!(error.contains("unanswered-tool-call"), "{error}");
    assert!(server.requests().is_empty());
}

/// A base URL with a query string, as Azure's `api-version`: the request
/// goes to the path with `/chat/completions` appended and the query after
/// it.
pub async fn base_url_with_query<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&[], &["routed"]));
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let base = format!("{}?api-version=2024-06-01", server.base_url());
    let model = make(OpenAiConfig::new(base, "test-model").with_api_key(TEST_KEY));
    let (_, message) = call(&model, StreamOptions::default()).await;
    assert_stopped(&message);
    assert_eq!(message.text(), "routed");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(
        requests[0].path,
        "/v1/chat/completions?api-version=2024-06-01"
    );
}

/// `http://` without a host: the call ends in one `error` event saying so,
/// and nothing is sent anywhere.
pub async fn url_without_host<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    for base in ["http://", "http:///v1", "https:///v1?api-version=1"] {
        let model = make(OpenAiConfig::new(base, "test-model").with_api_key(TEST_KEY));
        let (events, message) = call(&model, StreamOptions::default()).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{base}");
        assert_eq!(events.len(), 1, "{base}: {events:?}");
        let error = message.error_message.unwrap_or_default();
        assert!(
            error.contains("invalid endpoint URL") && error.contains("no host"),
            "{base}: {error}"
        );
    }
}
