//! The end-to-end scenarios of the OpenAI Responses model, written once
//! against [`Model`] and run by every HTTP adapter, like
//! [`anthropic_scenarios`](crate::http::anthropic_scenarios): the recorded
//! streams at random chunk boundaries, the reasoning round trip, the
//! typed causes (HTTP statuses, `error` and `response.failed` after 200,
//! a cut stream), retry on 429 and 503, the idle timeout and the base URL
//! forms. No check depends on wall-clock timing.

use agentstream::message::{tool_result, user, ContentBlock, Context, StopReason};
use agentstream::model::{ErrorCause, Model, RetryPolicy};
use agentstream_wire::responses::ResponsesConfig;
use serde_json::{json, Value};

use crate::http::base_url_spellings;
use crate::http::fixtures::{
    idle_timeout_after, play, provider_code, responses_sse, retries_429_and_503_then, scripted,
    RESPONSES_ERROR, RESPONSES_ID_ROTATION, RESPONSES_REASONING_TEXT, RESPONSES_REASONING_TOOLS,
};
use crate::http::scenarios::TEST_KEY;
use crate::http::{split_randomly, BodyEnd, MockServer, Reply, Rng};

/// The model id every scenario asks for.
const MODEL: &str = "gpt-5-test";

fn config(base: String) -> ResponsesConfig {
    ResponsesConfig::new(base, MODEL).with_api_key(TEST_KEY)
}

fn context() -> Context {
    Context::from_messages([user("Weather in the African city?").into()])
}

/// Each recorded stream, in random pieces: the text, the call, the
/// reasoning signature and the usage arrive as recorded, and the request
/// is `POST /v1/responses` with the bearer key and `stream: true`.
pub async fn recorded_streams<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    let mut rng = Rng::new(24);
    for seed in 0..3 {
        let tools = split_randomly(RESPONSES_REASONING_TOOLS.as_bytes(), &mut rng, 40 + seed);
        let text = split_randomly(RESPONSES_REASONING_TEXT.as_bytes(), &mut rng, 40 + seed);
        let rotation = split_randomly(&responses_sse(RESPONSES_ID_ROTATION), &mut rng, 64);
        let server = scripted(vec![
            Reply::sse(tools),
            Reply::sse(text),
            Reply::sse(rotation),
        ]);
        let model = make(config(server.base_url()));

        let (_, message, cause) = play(&model, &context()).await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{:?}",
            message.error_message
        );
        assert!(cause.is_none());
        assert_eq!(
            (message.api.as_str(), message.model.as_str()),
            ("openai-responses", MODEL)
        );
        let call = message.tool_calls().next().expect("a call");
        assert_eq!(call.name, "get_weather");
        assert_eq!(
            Value::Object(call.arguments.clone()),
            json!({"city": "Paris", "country": "France", "unit": "C"})
        );
        assert_eq!((message.usage.input, message.usage.output), (106, 45));

        let (_, message, _) = play(&model, &context()).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(!message.text().is_empty());
        assert_eq!((message.usage.input, message.usage.output), (21, 45));

        let (_, message, _) = play(&model, &context()).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(
            message.text().ends_with("**3, 8, and 9**."),
            "{}",
            message.text()
        );

        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        for request in requests {
            assert_eq!(
                (request.method.as_str(), request.path.as_str()),
                ("POST", "/v1/responses")
            );
            let bearer = format!("Bearer {TEST_KEY}");
            assert_eq!(request.header("authorization"), Some(bearer.as_str()));
            let body = request.json();
            assert_eq!(
                (body["model"].as_str(), body["stream"].as_bool()),
                (Some(MODEL), Some(true))
            );
        }
    }
}

/// The reasoning item of one answer (id and encrypted content) goes back
/// unchanged in the next request to the same model, before the call it
/// led to and that call's output.
pub async fn reasoning_round_trip<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    let server = scripted(vec![
        Reply::sse(vec![RESPONSES_REASONING_TOOLS.as_bytes().to_vec()]),
        Reply::sse(vec![RESPONSES_REASONING_TEXT.as_bytes().to_vec()]),
    ]);
    let model = make(config(server.origin()));
    let (_, first, _) = play(&model, &context()).await;
    let Some(ContentBlock::Thinking(thinking)) = first.content.first() else {
        panic!("{:?}", first.content);
    };
    let signature: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().expect("a signature"))
            .expect("the signature is the reasoning item");
    let call = first.tool_calls().next().expect("a call").clone();
    let mut next = context();
    next.messages.push(first.clone().into());
    next.messages
        .push(tool_result(&call.id, &call.name, "31°C", false).into());
    let (_, second, _) = play(&model, &next).await;
    assert_eq!(
        second.stop_reason,
        StopReason::Stop,
        "{:?}",
        second.error_message
    );

    let sent = server.requests()[1].json();
    let input = sent["input"].as_array().expect("input items");
    assert_eq!(
        input[1], signature,
        "the reasoning item goes back as it came"
    );
    assert!(!input[1]["encrypted_content"]
        .as_str()
        .unwrap_or("")
        .is_empty());
    let (call_id, item_id) = call.id.split_once('|').expect("Pi's CALL|ITEM id");
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(
        (input[2]["call_id"].as_str(), input[2]["id"].as_str()),
        (Some(call_id), Some(item_id))
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": call_id, "output": "31°C"})
    );
    assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]));
}

/// The typed causes: an HTTP status keeps its code, an `error` event and a
/// lone `response.failed` after HTTP 200 keep the provider's code (nested
/// under `response.error` for the latter), and a cut stream keeps the
/// text that arrived.
pub async fn error_causes<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    let failed = json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed",
        "error": {"code": "server_error", "message": "The model crashed"}}});
    let cut: Vec<u8> =
        RESPONSES_REASONING_TEXT.as_bytes()[..RESPONSES_REASONING_TEXT.len() / 2].to_vec();
    let server = scripted(vec![
        Reply::json(
            429,
            &[],
            &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
        ),
        Reply::sse(vec![responses_sse(RESPONSES_ERROR)]),
        Reply::sse(vec![responses_sse(&failed.to_string())]),
        Reply::sse(vec![cut]).with_end(BodyEnd::Disconnect),
    ]);
    let model = make(config(server.base_url()));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    match cause {
        Some(ErrorCause::Http(http)) => {
            assert_eq!(
                (http.status, http.code.as_deref()),
                (429, Some("rate_limit_exceeded"))
            );
        }
        other => panic!("{other:?}"),
    }
    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message
        .error_message
        .as_deref()
        .unwrap_or("")
        .contains("insufficient_quota"));
    assert_eq!(provider_code(cause).as_deref(), Some("insufficient_quota"));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(
        message.error_message.as_deref(),
        Some("server_error: The model crashed")
    );
    assert_eq!(provider_code(cause).as_deref(), Some("server_error"));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(
        matches!(cause, Some(ErrorCause::Protocol | ErrorCause::Transport(_))),
        "{cause:?}"
    );
}

/// 429, then 503, then the answer: three attempts, the answer only.
pub async fn retries_429_and_503<R: Model>(make: impl Fn(ResponsesConfig, RetryPolicy) -> R) {
    let answer = RESPONSES_REASONING_TEXT.as_bytes().to_vec();
    retries_429_and_503_then(answer, |server| config(server.base_url()), make).await;
}

/// A body that goes silent after its first events: the idle timeout ends
/// the call with `error(aborted)` naming it.
pub async fn idle_timeout<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    let head = RESPONSES_REASONING_TEXT.as_bytes()[..RESPONSES_REASONING_TEXT.len() / 3].to_vec();
    idle_timeout_after(head, |server| config(server.base_url()), make).await;
}

/// `http://host:port`, `…/v1`, with or without a trailing slash, all
/// reach `/v1/responses`; a proxy path is the root itself.
pub async fn base_url_forms<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    let body = RESPONSES_REASONING_TEXT.as_bytes().to_vec();
    let server = MockServer::start(move |request| match request.path.as_str() {
        "/v1/responses" | "/proxy/responses?api-version=1" => Reply::sse(vec![body.clone()]),
        _ => Reply::json(404, &[], &json!({"error": {"message": "no such route"}})),
    })
    .expect("server");
    let origin = server.origin();
    let proxy = format!("{origin}/proxy?api-version=1");
    for base in base_url_spellings(&origin).into_iter().chain([proxy]) {
        let (_, message, _) = play(&make(config(base.clone())), &context()).await;
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{base}: {:?}",
            message.error_message
        );
    }
    assert_eq!(server.requests().len(), 5);
}
