//! The base URL means the same for every provider: `http://host:port` and
//! `http://host:port/v1`, with or without a trailing slash, reach
//! `/v1/chat/completions` and `/v1/messages` alike, and a wrong base (a
//! 404) or a closed port ends the call in an `error` that names the URL.

use std::net::TcpListener;

use agentstream::message::StopReason;
use agentstream::model::{Model, StreamOptions};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::json;

use crate::http::base_url_spellings;
use crate::http::scenarios::{call, TEST_KEY};
use crate::http::{
    answer_payloads, anthropic_scenarios, named_sse_body, sse_body, MockServer, Reply,
};

/// Both providers on the four forms of one base, then on a wrong base
/// and on a closed port.
pub async fn base_url_forms<A: Model, B: Model>(
    openai: impl Fn(OpenAiConfig) -> A,
    anthropic: impl Fn(AnthropicConfig) -> B,
) {
    let server = MockServer::start(|request| match request.path.as_str() {
        "/v1/chat/completions" => Reply::sse(vec![sse_body(&answer_payloads(&[], &["Hi"]))]),
        "/v1/messages" => Reply::sse(vec![
            named_sse_body(&anthropic_scenarios::answer_payloads()),
        ]),
        _ => Reply::json(404, &[], &json!({"error": {"message": "no such route"}})),
    })
    .expect("server");
    let origin = server.origin();
    for base in base_url_spellings(&origin) {
        let model = openai(OpenAiConfig::new(&base, "test-model").with_api_key(TEST_KEY));
        let (_, message) = call(&model, StreamOptions::default()).await;
        assert_eq!(
            message.text(),
            "Hi",
            "OpenAI at {base}: {:?}",
            message.error_message
        );
        let config = AnthropicConfig::new("claude-test").with_base_url(&base);
        let (_, message) = call(&anthropic(config), StreamOptions::default()).await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "Anthropic at {base}: {:?}",
            message.error_message
        );
    }
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths.len(), 8);
    assert!(paths
        .iter()
        .all(|p| p == "/v1/chat/completions" || p == "/v1/messages"));

    // A wrong base: the 404 names the URL that was tried.
    let model = openai(OpenAiConfig::new(format!("{origin}/api"), "test-model"));
    let (_, message) = call(&model, StreamOptions::default()).await;
    let error = message.error_message.unwrap_or_default();
    assert!(
        error.starts_with("HTTP 404 Not Found: no such route"),
        "{error}"
    );
    assert!(
        error.contains(&format!("{origin}/api/chat/completions")),
        "{error}"
    );
    let config = AnthropicConfig::new("claude-test").with_base_url(format!("{origin}/gateway"));
    let (_, message) = call(&anthropic(config), StreamOptions::default()).await;
    let error = message.error_message.unwrap_or_default();
    assert!(
        error.contains(&format!("{origin}/gateway/v1/messages")),
        "{error}"
    );

    // A closed port: the connection error names the URL too.
    let closed = {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        format!("http://{}", listener.local_addr().expect("addr"))
    };
    let config = AnthropicConfig::new("claude-test").with_base_url(&closed);
    let (_, message) = call(&anthropic(config), StreamOptions::default()).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.unwrap_or_default();
    assert!(error.contains(&format!("{closed}/v1/messages")), "{error}");
}
