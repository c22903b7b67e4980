//! Credentials never follow a redirect to another origin, for every
//! protocol and every HTTP adapter: an endpoint that answers 307 (or 302,
//! 308) with a `Location` on another server must not get the key sent
//! there, whether the key is a header (`Authorization`, `x-api-key`,
//! `x-goog-api-key`, a custom secret header) or in the base URL's query
//! (Gemini's `?key=`, which a `Referer` would carry). The redirect's own
//! target carries no secret, so whatever secret the other server sees,
//! the client sent.

use agentstream::message::{user, Context, StopReason};
use agentstream::model::Model;
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::config::{EndpointConfig, Protocol};
use agentstream_wire::gemini::GeminiConfig;
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::responses::ResponsesConfig;
use serde_json::json;

use crate::http::fixtures::play;
use crate::http::{MockServer, Reply};

/// The secret of every scenario: the API key, a custom header's value and
/// a query parameter's.
const SECRET: &str = "sk-redirect-secret-0123456789";

/// The custom header that holds [`SECRET`] too.
const CUSTOM: &str = "x-custom-api-key";

/// The other origin, recording what it is sent (it answers 404), and an
/// endpoint that redirects every request there with `status`, to the same
/// path without its query.
fn servers(status: u16) -> (MockServer, MockServer) {
    let other = MockServer::start(|_| Reply::json(404, &[], &json!({"error": "not here"})))
        .expect("server");
    let target = other.origin();
    let redirecting = MockServer::start(move |request| {
        let path = request.path.split('?').next().unwrap_or("/");
        let location = format!("{target}{path}");
        Reply::json(status, &[("location", location.as_str())], &json!({}))
    })
    .expect("server");
    (other, redirecting)
}

/// Plays one call through a redirect of each kind and checks that no
/// request the other origin received holds the secret or a `Referer`, and
/// that the call did not succeed on the other origin's answer.
async fn check<P: Protocol, M: Model>(
    config: impl Fn(String) -> EndpointConfig<P>,
    make: impl Fn(EndpointConfig<P>) -> M,
) {
    for status in [302, 307, 308] {
        let (other, redirecting) = servers(status);
        let config = config(redirecting.origin())
            .with_api_key(SECRET)
            .with_header(CUSTOM, SECRET)
            .expect("header");
        let model = make(config);
        let context = Context::from_messages([user("Hi").into()]);
        let (_, message, _) = play(&model, &context).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{status}");
        // The endpoint it was configured for got the key.
        let sent = redirecting.requests();
        assert!(!sent.is_empty(), "{status}");
        for request in other.requests() {
            assert!(
                request.header("referer").is_none(),
                "{status}: a Referer went to the other origin: {request:?}"
            );
            assert!(
                !request.path.contains(SECRET),
                "{status}: the key went to the other origin in {}",
                request.path
            );
            for (name, value) in &request.headers {
                assert!(
                    !value.contains(SECRET),
                    "{status}: the key went to the other origin in {name}"
                );
            }
        }
    }
}

/// Chat Completions: `Authorization` and a custom secret header.
pub async fn openai_keys_stay_on_their_origin<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    check(|origin| OpenAiConfig::new(origin, "test-model"), make).await;
}

/// Anthropic Messages: `x-api-key` and a custom secret header.
pub async fn anthropic_keys_stay_on_their_origin<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    check(
        |origin| AnthropicConfig::new("claude-test").with_base_url(origin),
        make,
    )
    .await;
}

/// OpenAI Responses: `Authorization` and a custom secret header.
pub async fn responses_keys_stay_on_their_origin<M: Model>(make: impl Fn(ResponsesConfig) -> M) {
    check(|origin| ResponsesConfig::new(origin, "gpt-test"), make).await;
}

/// Gemini: `x-goog-api-key`, a custom secret header and `?key=` in the
/// base URL's query.
pub async fn gemini_keys_stay_on_their_origin<M: Model>(make: impl Fn(GeminiConfig) -> M) {
    check(
        |origin| GeminiConfig::new("gemini-test").with_base_url(format!("{origin}?key={SECRET}")),
        make,
    )
    .await;
}
