//! The typed error causes, end to end: every kind of
//! [`ErrorCause`] produced by a real HTTP model against the mock server,
//! written once and run by each adapter (like [`scenarios`](crate::http::scenarios)).
//!
//! Each check reads the cause from
//! [`ModelStream::error_cause`](agentstream::model::ModelStream::error_cause)
//! and the result handle, and also checks that the `errorMessage` is what
//! it was before causes existed.

use std::time::Duration;

use agentstream::message::{assistant, tool_call, user, AssistantMessage, Context, StopReason};
use agentstream::model::{
    validate_events, AbortController, ErrorCause, Model, ModelEvent, ModelStream, RetryAfter,
    StreamOptions, TimeoutKind, ABORTED_MESSAGE, RETRY_AFTER_MAX,
};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::cause::limit_of;
use agentstream_wire::http::TransportError;
use agentstream_wire::limits::{Limit, Limits};
use agentstream_wire::openai::OpenAiConfig;
use futures_util::StreamExt;
use serde_json::json;

use crate::http::scenarios::TEST_KEY;
use crate::http::{answer_payloads, named_sse_body, sse_body, BodyEnd, MockServer, Reply};
use crate::http::{refused_port, unanswered_tls};

fn context() -> Context {
    Context::from_messages([user("Say hello").into()])
}

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(server.base_url(), "test-model").with_api_key(TEST_KEY)
}

/// Plays `stream` to its end; returns the final message and the cause
/// (the stream's and the result handle's, which must agree).
async fn outcome(mut stream: ModelStream) -> (AssistantMessage, Option<ErrorCause>) {
    let handle = stream.result_handle();
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "protocol findings: {findings:?}");
    let message = stream.result().await;
    let cause = stream.error_cause();
    assert_eq!(
        format!("{cause:?}"),
        format!("{:?}", handle.error_cause()),
        "the handle sees the stream's cause"
    );
    if message.stop_reason == StopReason::Stop {
        assert!(cause.is_none(), "a done call has no cause: {cause:?}");
    }
    (message, cause)
}

async fn call_once<M: Model>(model: &M) -> (AssistantMessage, Option<ErrorCause>) {
    outcome(model.stream(&context(), StreamOptions::default())).await
}

/// A reply, then the status, code, `Retry-After` and `errorMessage`
/// expected.
type HttpCase = (
    Reply,
    u16,
    Option<&'static str>,
    Option<RetryAfter>,
    &'static str,
);

/// A success has no cause; HTTP statuses give [`ErrorCause::Http`] with
/// the provider's code and `Retry-After` (seconds, HTTP date, saturated,
/// invalid), and the unchanged `errorMessage`.
pub async fn http_causes<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&[], &["fine"]));
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let (message, cause) = call_once(&make(config(&server))).await;
    assert_eq!(message.text(), "fine");
    assert!(cause.is_none());

    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    let cases: Vec<HttpCase> = vec![
        (
            Reply::json(
                429,
                &[("retry-after", "7")],
                &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
            ),
            429,
            Some("rate_limit_exceeded"),
            Some(RetryAfter::Delay(Duration::from_secs(7))),
            "HTTP 429 Too Many Requests: Rate limit reached (code: rate_limit_exceeded); retry after 7",
        ),
        (
            Reply::json(
                401,
                &[],
                &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ),
            401,
            Some("invalid_api_key"),
            None,
            "HTTP 401 Unauthorized: Incorrect API key provided (code: invalid_api_key)",
        ),
        (
            Reply::json(
                503,
                &[("retry-after", date)],
                &json!({"error": {"message": "busy", "type": "server_error", "code": null}}),
            ),
            503,
            Some("server_error"),
            Some(RetryAfter::At {
                unix_seconds: 1_445_412_480,
            }),
            "HTTP 503 Service Unavailable: busy (code: server_error); retry after Wed, 21 Oct 2015 07:28:00 GMT",
        ),
        (
            Reply::json(
                429,
                &[("retry-after", "184467440737095516160")],
                &json!({"message": "slow"}),
            ),
            429,
            None,
            Some(RetryAfter::Delay(RETRY_AFTER_MAX)),
            "HTTP 429 Too Many Requests: slow; retry after 184467440737095516160",
        ),
        (
            Reply::Fixed {
                status: 502,
                headers: vec![("Retry-After".into(), "soon-ish".into())],
                content_type: "text/plain".into(),
                body: b"bad gateway".to_vec(),
            },
            502,
            None,
            None,
            "HTTP 502 Bad Gateway: bad gateway; retry after soon-ish",
        ),
    ];
    for (reply, status, code, retry_after, text) in cases {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let (message, cause) = call_once(&make(config(&server))).await;
        assert_eq!(message.error_message.as_deref(), Some(text));
        let Some(ErrorCause::Http(http)) = &cause else {
            panic!("{status}: {cause:?}");
        };
        assert_eq!(http.status, status);
        assert_eq!(http.code.as_deref(), code);
        assert_eq!(http.retry_after, retry_after);
        let shown = cause.as_ref().map(ToString::to_string).unwrap_or_default();
        match code {
            Some(code) => assert_eq!(shown, format!("HTTP {status} ({code})")),
            None => assert_eq!(shown, format!("HTTP {status}")),
        }
        assert_eq!(
            cause.as_ref().map(ErrorCause::is_retryable),
            Some(status != 401)
        );
    }
}

/// An error chunk after 200 is [`ErrorCause::Provider`]; a body that is
/// not an event stream, data that is not JSON and a truncated stream are
/// [`ErrorCause::Protocol`]; a broken context is
/// [`ErrorCause::InvalidRequest`] and nothing is sent.
pub async fn stream_causes<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let partial = answer_payloads(&[], &["partial"]);
    let error_chunk = sse_body(&[
        partial[1].clone(),
        json!({"error": {"message": "the server had an error", "code": "server_error"}})
            .to_string(),
    ]);
    let server = MockServer::start(move |_| Reply::sse(vec![error_chunk.clone()])).expect("server");
    let (message, cause) = call_once(&make(config(&server))).await;
    assert_eq!(message.text(), "partial");
    match &cause {
        Some(ErrorCause::Provider(provider)) => {
            assert_eq!(provider.code.as_deref(), Some("server_error"));
        }
        other => panic!("{other:?}"),
    }

    let mut not_json = sse_body(&partial[..2]);
    not_json.extend_from_slice(b"data: {oops\n\n");
    let truncated = sse_body(&partial[..2]);
    let protocol = [
        Reply::json(200, &[], &json!({"error": {"message": "model is loading"}})),
        Reply::sse(vec![not_json]),
        Reply::sse(vec![truncated]),
    ];
    for reply in protocol {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let (message, cause) = call_once(&make(config(&server))).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert!(matches!(cause, Some(ErrorCause::Protocol)), "{cause:?}");
        assert_eq!(
            cause.map(|c| c.to_string()).as_deref(),
            Some("protocol violation")
        );
    }

    let server = MockServer::start(|_| Reply::sse(vec![])).expect("server");
    let broken = Context::from_messages([
        user("hi").into(),
        assistant([tool_call("c1", "f", json!({}))], StopReason::ToolUse).into(),
    ]);
    let model = make(config(&server));
    let (_, cause) = outcome(model.stream(&broken, StreamOptions::default())).await;
    assert!(
        matches!(cause, Some(ErrorCause::InvalidRequest)),
        "{cause:?}"
    );
    assert!(server.requests().is_empty());
}

/// The response limit, the SSE line limit and the tool-call limit each
/// give [`ErrorCause::LimitExceeded`] naming the [`Limit`].
pub async fn limit_causes<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let delta = sse_body(&[r#"{"choices":[{"index":0,"delta":{"content":"abcd"}}]}"#]);
    let calls: Vec<String> = (0..3)
        .map(|i| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]})
                .to_string()
        })
        .collect();
    let cases = [
        (
            Reply::sse(vec![b": start\n".to_vec()]).with_end(BodyEnd::Endless(delta.repeat(64))),
            Limits::default().with_max_response_bytes(64 << 10),
            Limit::ResponseBytes,
        ),
        (
            Reply::sse(vec![b"data: ".to_vec()]).with_end(BodyEnd::Endless(vec![b'x'; 4096])),
            Limits::default().with_max_line_bytes(32 << 10),
            Limit::LineBytes,
        ),
        (
            Reply::sse(vec![sse_body(&calls)]),
            Limits::default().with_max_tool_calls(2),
            Limit::ToolCalls,
        ),
    ];
    for (reply, limits, limit) in cases {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let (message, cause) = call_once(&make(config(&server).with_limits(limits))).await;
        let text = message.error_message.unwrap_or_default();
        assert!(text.starts_with("response limit exceeded: "), "{text}");
        let cause = cause.expect("a cause");
        assert_eq!(limit_of(&cause), Some(limit), "{cause:?}");
        assert_eq!(cause.to_string(), "limit exceeded");
        let source = std::error::Error::source(&cause).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some(text.as_str()));
    }
}

/// A refused connection and a body cut off mid-stream are
/// [`ErrorCause::Transport`] with the [`TransportError`] as source.
pub async fn transport_causes<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let port = refused_port();
    let refused = make(OpenAiConfig::new(
        format!("http://127.0.0.1:{port}/v1"),
        "test-model",
    ));
    let body = sse_body(&answer_payloads(&[], &["first part", " second"])[..2]);
    let server =
        MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Disconnect))
            .expect("server");
    let cut = make(config(&server));
    for (message, cause) in [call_once(&refused).await, call_once(&cut).await] {
        assert_eq!(message.stop_reason, StopReason::Error);
        let Some(cause @ ErrorCause::Transport(_)) = &cause else {
            panic!("{cause:?}");
        };
        assert_eq!(cause.to_string(), "transport failed");
        assert!(cause.is_retryable());
        let source = std::error::Error::source(cause).expect("a source");
        assert!(
            source.downcast_ref::<TransportError>().is_some(),
            "{source:?}"
        );
    }
}

/// The connect and idle timeouts, the caller's abort, and a total timeout
/// (`stream_with_timeout`, passed as `with_timeout`) are told apart.
pub async fn timeout_and_abort_causes<M: Model>(
    make: impl Fn(OpenAiConfig) -> M,
    with_timeout: impl Fn(&M, &Context, StreamOptions, Duration) -> ModelStream,
) {
    let (listener, unanswered) = unanswered_tls();
    let model = make(unanswered);
    let (message, cause) = call_once(&model).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert!(
        matches!(cause, Some(ErrorCause::Timeout(TimeoutKind::Connect, Some(d))) if d == Duration::from_millis(150)),
        "{cause:?}"
    );
    assert_eq!(
        cause.map(|c| c.to_string()).as_deref(),
        Some("connect timeout after 150ms")
    );
    drop(listener);

    let body = sse_body(&answer_payloads(&[], &["before silence"])[..2]);
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()]).with_end(BodyEnd::Hang))
        .expect("server");
    let idle = make(config(&server).with_idle_timeout(Duration::from_millis(150)));
    let (message, cause) = call_once(&idle).await;
    assert_eq!(
        message.error_message.as_deref(),
        Some("idle timeout: nothing received for 150ms")
    );
    assert!(
        matches!(cause, Some(ErrorCause::Timeout(TimeoutKind::Idle, Some(_)))),
        "{cause:?}"
    );

    let hanging = make(config(&server));
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = hanging.stream(&context(), options);
    // Abort once the first text arrived.
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if event.type_name() == "text_delta" {
            controller.abort();
        }
        events.push(event);
    }
    assert!(validate_events(&events).is_empty());
    let message = stream.result().await;
    assert_eq!(message.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert!(matches!(stream.error_cause(), Some(ErrorCause::Aborted)));

    let stream = with_timeout(
        &hanging,
        &context(),
        StreamOptions::default(),
        Duration::from_millis(100),
    );
    let (message, cause) = outcome(stream).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert!(
        matches!(cause, Some(ErrorCause::Timeout(TimeoutKind::Total, None))),
        "{cause:?}"
    );
}

fn anthropic_config(server: &MockServer) -> AnthropicConfig {
    AnthropicConfig::new("claude-test")
        .with_base_url(server.origin())
        .with_api_key(TEST_KEY)
}

/// Anthropic: an `error` event after 200 is [`ErrorCause::Provider`] with
/// the error's `type`; an HTTP 529 is [`ErrorCause::Http`] with it; a
/// refusal stop reason is [`ErrorCause::Provider`] naming it.
pub async fn anthropic_causes<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}});
    let overloaded = named_sse_body(&[
        start.clone(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let refusal = named_sse_body(&[
        start,
        json!({"type": "message_delta", "delta": {"stop_reason": "refusal"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ]);
    let cases = [
        (
            Reply::sse(vec![overloaded]).with_end(BodyEnd::Disconnect),
            "overloaded_error",
            false,
        ),
        (
            Reply::json(
                529,
                &[("retry-after", "3")],
                &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            "overloaded_error",
            true,
        ),
        (Reply::sse(vec![refusal]), "refusal", false),
    ];
    for (reply, code, http) in cases {
        let server = MockServer::start(move |_| reply.clone()).expect("server");
        let (message, cause) = call_once(&make(anthropic_config(&server))).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        match &cause {
            Some(ErrorCause::Http(failure)) if http => {
                assert_eq!(failure.status, 529);
                assert_eq!(failure.code.as_deref(), Some(code));
                assert_eq!(
                    failure.retry_after,
                    Some(RetryAfter::Delay(Duration::from_secs(3)))
                );
            }
            Some(ErrorCause::Provider(provider)) if !http => {
                assert_eq!(provider.code.as_deref(), Some(code));
            }
            other => panic!("{code}: {other:?}"),
        }
    }
}
