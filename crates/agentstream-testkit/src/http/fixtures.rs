//! The recorded OpenAI Responses and Gemini streams the mock server
//! plays: the fixtures of `agentstream-wire` (see their READMEs for the
//! sources), compiled in, as SSE bodies; and what the scenarios that play
//! them share (a scripted server, a call played to its end, the provider's
//! code of a cause, a fast retry policy).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentstream::message::{user, Context, StopReason};
use agentstream::model::{ErrorCause, Model, RetryPolicy};
use agentstream_wire::config::{EndpointConfig, Protocol};
use agentstream_wire::sse::{encode_event, SseEvent};
use serde_json::json;

use crate::http::assert_stopped;
use crate::http::{BodyEnd, MockServer, Reply};

/// The folder of the wire crate's fixtures.
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!("../../../agentstream-wire/tests/fixtures/", $path))
    };
}

/// A Responses stream: reasoning with encrypted content, then the call
/// `get_weather` (`{"city":"Paris","country":"France","unit":"C"}`).
pub const RESPONSES_REASONING_TOOLS: &str =
    fixture!("openai-responses-sse/genai-reasoning-tools.sse");
/// A Responses stream: reasoning, then text in 31 deltas.
pub const RESPONSES_REASONING_TEXT: &str =
    fixture!("openai-responses-sse/genai-reasoning-text.sse");
/// A Responses stream: an `error` event (`insufficient_quota`) after
/// HTTP 200, then `response.failed` (one payload a line).
pub const RESPONSES_ERROR: &str = fixture!("openai-responses-sse/openai-error.chunks.jsonl");
/// A Responses stream whose item ids rotate (one payload a line).
pub const RESPONSES_ID_ROTATION: &str =
    fixture!("openai-responses-sse/copilot-id-rotation.chunks.jsonl");
/// A Gemini stream: thinking, text, then `get_weather` with a
/// `thoughtSignature` and the id `u959pftr`.
pub const GOOGLE_TOOL: &str = fixture!("google-sse/genai-tool.sse");
/// A Gemini stream: `thought: true` parts, then the answer.
pub const GOOGLE_THINKING: &str = fixture!("google-sse/genai-thinking.sse");
/// A Gemini stream: text in 3 payloads, with a signature on a text part
/// (one payload a line).
pub const GOOGLE_TEXT: &str = fixture!("google-sse/google-text.chunks.jsonl");
/// Gemini 3's streamed calls with `partialArgs` (one payload a line).
pub const GOOGLE_NO_ARGS_TOOL_CALL: &str =
    fixture!("google-sse/google-no-args-tool-call.chunks.jsonl");

/// The SSE body of one payload a line: `event: TYPE` (the payload's `type`)
/// with the line as `data`, as the Responses API sends them.
pub fn responses_sse(lines: &str) -> Vec<u8> {
    let mut out = String::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let kind = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["type"].as_str().map(String::from))
            .unwrap_or_else(|| "message".into());
        let event = SseEvent::message(line).with_event(kind);
        encode_event(&event, &mut out).expect("one-line payloads are valid SSE data");
    }
    out.into_bytes()
}

/// The SSE body of one payload a line, `data:` only, as Gemini sends them.
pub fn google_sse(lines: &str) -> Vec<u8> {
    let payloads: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    crate::http::sse_body(&payloads)
}

/// Streams one call of `model` on `context` to its end and checks the
/// events; returns them, the final message and the typed cause.
pub async fn play<M: Model>(
    model: &M,
    context: &agentstream::message::Context,
) -> (
    Vec<agentstream::model::ModelEvent>,
    agentstream::message::AssistantMessage,
    Option<agentstream::model::ErrorCause>,
) {
    use futures_util::StreamExt;
    let mut stream = model.stream(context, agentstream::model::StreamOptions::default());
    let events: Vec<_> = stream.by_ref().collect().await;
    let findings = agentstream::model::validate_events(&events);
    assert!(findings.is_empty(), "protocol findings: {findings:?}");
    let message = stream.result().await;
    let last = events
        .last()
        .and_then(agentstream::model::ModelEvent::terminal_message);
    assert_eq!(
        last,
        Some(&message),
        "the result is the terminal event's message"
    );
    (events, message, stream.error_cause())
}

/// A server answering its requests in turn with `replies`, the last one
/// again once they run out.
///
/// # Panics
/// When `replies` is empty or no port can be bound.
pub fn scripted(replies: Vec<Reply>) -> MockServer {
    let next = AtomicUsize::new(0);
    MockServer::start(move |_| {
        let i = next.fetch_add(1, Ordering::SeqCst);
        replies[i.min(replies.len() - 1)].clone()
    })
    .expect("server")
}

/// The provider's code of an [`ErrorCause::Provider`].
///
/// # Panics
/// When `cause` is another cause.
pub fn provider_code(cause: Option<ErrorCause>) -> Option<String> {
    match cause {
        Some(ErrorCause::Provider(failure)) => failure.code,
        other => panic!("expected a provider cause, got {other:?}"),
    }
}

/// Three retries with backoffs of 1 to 4 ms.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(3)
        .with_initial_backoff(Duration::from_millis(1))
        .with_max_backoff(Duration::from_millis(4))
}

/// 429, then 503, then `answer`: the retry wrapper around the model of
/// `config(base)` tries three times and the consumer sees the answer only.
pub async fn retries_429_and_503_then<P: Protocol, R: Model>(
    answer: Vec<u8>,
    config: impl Fn(&MockServer) -> EndpointConfig<P>,
    make: impl Fn(EndpointConfig<P>, RetryPolicy) -> R,
) {
    let busy = |status| Reply::json(status, &[], &json!({"error": {"message": "busy"}}));
    let server = scripted(vec![busy(429), busy(503), Reply::sse(vec![answer])]);
    let model = make(config(&server), fast_retries());
    let context = Context::from_messages([user("hi").into()]);
    let (_, message, cause) = play(&model, &context).await;
    assert_stopped(&message);
    assert!(cause.is_none());
    assert_eq!(server.requests().len(), 3);
}

/// A body that goes silent after `head`: the idle timeout of the model of
/// `config(base)` ends the call with `error(aborted)` naming it.
pub async fn idle_timeout_after<P: Protocol, M: Model>(
    head: Vec<u8>,
    config: impl Fn(&MockServer) -> EndpointConfig<P>,
    make: impl Fn(EndpointConfig<P>) -> M,
) {
    let server = MockServer::start(move |_| Reply::sse(vec![head.clone()]).with_end(BodyEnd::Hang))
        .expect("server");
    let model = make(config(&server).with_idle_timeout(Duration::from_millis(150)));
    let context = Context::from_messages([user("hi").into()]);
    let (_, message, cause) = play(&model, &context).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(
        message.error_message.as_deref(),
        Some("idle timeout: nothing received for 150ms")
    );
    assert!(matches!(cause, Some(ErrorCause::Timeout(..))), "{cause:?}");
}
