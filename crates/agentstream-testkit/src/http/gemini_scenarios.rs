//! The end-to-end scenarios of the Google Gemini model (the Gemini API and
//! Vertex AI), written once against [`Model`] and run by every HTTP
//! adapter, like [`responses_scenarios`](crate::http::responses_scenarios): the
//! recorded streams at random chunk boundaries, the `thoughtSignature`
//! round trip, the typed causes (HTTP statuses, an `error` payload and a
//! safety stop after 200, a cut stream), retry on 429 and 503, the idle
//! timeout and the base URL forms. No check depends on wall-clock timing.

use agentstream::message::{tool_result, user, ContentBlock, Context, StopReason};
use agentstream::model::{ErrorCause, Model, RetryPolicy};
use agentstream_wire::gemini::GeminiConfig;
use serde_json::{json, Value};

use crate::http::assert_stopped;
use crate::http::fixtures::{
    google_sse, idle_timeout_after, play, provider_code, retries_429_and_503_then, scripted,
    GOOGLE_NO_ARGS_TOOL_CALL, GOOGLE_TEXT, GOOGLE_THINKING, GOOGLE_TOOL,
};
use crate::http::scenarios::TEST_KEY;
use crate::http::{split_randomly, sse_body, BodyEnd, MockServer, Reply, Rng};

/// The model id every scenario asks for.
const MODEL: &str = "gemini-test";

/// The path of a call to [`MODEL`] on the Gemini API.
const STREAM_PATH: &str = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";

fn config(origin: String) -> GeminiConfig {
    GeminiConfig::new(MODEL)
        .with_base_url(origin)
        .with_api_key(TEST_KEY)
}

fn context() -> Context {
    Context::from_messages([user("Weather in the African city?").into()])
}

/// Each recorded stream, in random pieces: thinking, text, whole and
/// streamed (`partialArgs`) calls and signatures arrive as recorded, and
/// the request goes to `models/{model}:streamGenerateContent?alt=sse` with
/// `x-goog-api-key`.
pub async fn recorded_streams<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    let mut rng = Rng::new(24);
    for seed in 0..3 {
        let tool = split_randomly(GOOGLE_TOOL.as_bytes(), &mut rng, 40 + seed);
        let thinking = split_randomly(GOOGLE_THINKING.as_bytes(), &mut rng, 40 + seed);
        let text = split_randomly(&google_sse(GOOGLE_TEXT), &mut rng, 64);
        let calls = split_randomly(&google_sse(GOOGLE_NO_ARGS_TOOL_CALL), &mut rng, 64);
        let replies = [tool, thinking, text, calls].map(Reply::sse).to_vec();
        let server = scripted(replies);
        let model = make(config(server.origin()));

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
            ("google-generative-ai", MODEL)
        );
        let call = message.tool_calls().next().expect("a call");
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("u959pftr", "get_weather")
        );
        assert!(!call.thought_signature.as_deref().unwrap_or("").is_empty());
        assert_eq!(
            (message.usage.input, message.usage.output),
            (135, 136 + 226)
        );

        let (_, message, _) = play(&model, &context()).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        let Some(ContentBlock::Thinking(thinking)) = message.content.first() else {
            panic!("{:?}", message.content);
        };
        assert_eq!(thinking.thinking.chars().count(), 1604);

        let (_, message, _) = play(&model, &context()).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(
            message.text().starts_with("There are **3**"),
            "{}",
            message.text()
        );

        let (_, message, _) = play(&model, &context()).await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{:?}",
            message.error_message
        );
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 4);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.len()),
            ("read_theme", 0)
        );
        assert!(calls[1..]
            .iter()
            .all(|c| c.name == "read_screen" && c.arguments.contains_key("id")));

        let requests = server.requests();
        assert_eq!(requests.len(), 4);
        for request in requests {
            assert_eq!(
                (request.method.as_str(), request.path.as_str()),
                ("POST", STREAM_PATH)
            );
            assert_eq!(request.header("x-goog-api-key"), Some(TEST_KEY));
            assert!(request.json()["contents"].is_array());
        }
    }
}

/// A call's `thoughtSignature` goes back on that call's part in the next
/// request to the same model, followed by the `functionResponse` matched
/// by name.
pub async fn signature_round_trip<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    let server = scripted(vec![
        Reply::sse(vec![GOOGLE_TOOL.as_bytes().to_vec()]),
        Reply::sse(vec![GOOGLE_THINKING.as_bytes().to_vec()]),
    ]);
    let model = make(config(server.origin()));
    let (_, first, _) = play(&model, &context()).await;
    let call = first.tool_calls().next().expect("a call").clone();
    let signature = call.thought_signature.clone().expect("a signature");
    let mut next = context();
    next.messages.push(first.into());
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
    let contents = sent["contents"].as_array().expect("contents");
    assert_eq!(contents[1]["role"], "model");
    let parts = contents[1]["parts"].as_array().expect("parts");
    let call_part = parts
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .expect("the call goes back");
    assert_eq!(call_part["functionCall"]["name"], "get_weather");
    assert_eq!(
        call_part["thoughtSignature"].as_str(),
        Some(signature.as_str())
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"],
        json!({"name": "get_weather", "response": {"output": "31°C"}})
    );
}

/// The typed causes: an HTTP status, an `error` payload and a `SAFETY`
/// stop after HTTP 200 (the reason named), and a cut stream.
pub async fn error_causes<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    let error = json!({"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}});
    let safety = json!({"candidates": [{"content": {"parts": [{"text": "partial"}], "role": "model"}, "finishReason": "SAFETY"}]});
    let cut = GOOGLE_THINKING.as_bytes()[..GOOGLE_THINKING.len() / 2].to_vec();
    let server = scripted(vec![
        Reply::json(
            429,
            &[],
            &json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}),
        ),
        Reply::sse(vec![sse_body(&[error.to_string()])]),
        Reply::sse(vec![sse_body(&[safety.to_string()])]),
        Reply::sse(vec![cut]).with_end(BodyEnd::Disconnect),
    ]);
    let model = make(config(server.origin()));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message
        .error_message
        .as_deref()
        .unwrap_or("")
        .contains("Resource exhausted"));
    assert!(
        matches!(&cause, Some(ErrorCause::Http(h)) if h.status == 429),
        "{cause:?}"
    );

    let (_, message, cause) = play(&model, &context()).await;
    assert!(message
        .error_message
        .as_deref()
        .unwrap_or("")
        .contains("Internal error"));
    assert_eq!(provider_code(cause).as_deref(), Some("500"));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "partial");
    assert!(message
        .error_message
        .as_deref()
        .unwrap_or("")
        .contains("SAFETY"));
    assert_eq!(provider_code(cause).as_deref(), Some("SAFETY"));

    let (_, message, cause) = play(&model, &context()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(
        matches!(cause, Some(ErrorCause::Protocol | ErrorCause::Transport(_))),
        "{cause:?}"
    );
}

/// 429, then 503, then the answer: three attempts, the answer only.
pub async fn retries_429_and_503<R: Model>(make: impl Fn(GeminiConfig, RetryPolicy) -> R) {
    let answer = GOOGLE_THINKING.as_bytes().to_vec();
    retries_429_and_503_then(answer, |server| config(server.origin()), make).await;
}

/// A body that goes silent after its first events: the idle timeout ends
/// the call with `error(aborted)` naming it.
pub async fn idle_timeout<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    let head = GOOGLE_THINKING.as_bytes()[..GOOGLE_THINKING.len() / 3].to_vec();
    idle_timeout_after(head, |server| config(server.origin()), make).await;
}

/// `http://host:port` and `…/v1beta`, with or without a trailing slash,
/// reach `/v1beta/models/{model}:streamGenerateContent?alt=sse`; Vertex
/// AI's base reaches its publisher path with a bearer token.
pub async fn base_url_forms<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    const VERTEX: &str = "/v1/projects/p/locations/l/publishers/google";
    let body = GOOGLE_THINKING.as_bytes().to_vec();
    let server = MockServer::start(move |request| {
        let vertex = format!("{VERTEX}/models/{MODEL}:streamGenerateContent?alt=sse");
        if request.path == STREAM_PATH || request.path == vertex {
            Reply::sse(vec![body.clone()])
        } else {
            Reply::json(404, &[], &json!({"error": {"message": "no such route"}}))
        }
    })
    .expect("server");
    let origin = server.origin();
    for base in [
        origin.clone(),
        format!("{origin}/"),
        format!("{origin}/v1beta"),
        format!("{origin}/v1beta/"),
    ] {
        let (_, message, _) = play(&make(config(base.clone())), &context()).await;
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{base}: {:?}",
            message.error_message
        );
    }
    let vertex = GeminiConfig::vertex("p", "l", MODEL)
        .with_base_url(format!("{origin}{VERTEX}"))
        .with_api_key("ya29.test-token");
    let (_, message, _) = play(&make(vertex), &context()).await;
    assert_stopped(&message);
    assert_eq!(message.provider, "google-vertex");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let last: &Value = &requests[4].json();
    assert!(last["contents"].is_array());
    assert_eq!(
        requests[4].header("authorization"),
        Some("Bearer ya29.test-token")
    );
    assert_eq!(requests[4].header("x-goog-api-key"), None);
}
