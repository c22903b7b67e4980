//! Per-call request options and the configurations' escape hatches, for
//! both request builders.

use agentstream::message::{user, Context};
use agentstream::model::{ReasoningEffort, ResponseFormat, StreamOptions, ToolChoice};
use agentstream_wire::anthropic::{self, AnthropicConfig};
use agentstream_wire::openai::{self, OpenAiConfig};
use agentstream_wire::options::HeaderErrorKind;
use serde_json::{json, Value};

mod body_support;
use body_support::{request_body, request_body_with};

fn context() -> Context {
    Context::from_messages([user("hi").into()])
}

fn body_of(request: &agentstream_wire::endpoint::PreparedRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn format() -> ResponseFormat {
    ResponseFormat::json_schema("answer", json!({"type": "object"})).with_description("The answer.")
}

#[test]
fn openai_sends_every_option() {
    let call = StreamOptions::default()
        .with_max_tokens(10)
        .with_temperature(0.1)
        .with_top_p(0.5)
        .with_stop(["a", "b"])
        .with_reasoning_effort(ReasoningEffort::Minimal)
        .with_thinking_budget(999)
        .with_response_format(format());
    let body = request_body_with(&openai::OpenAiChat::default(), "m", &context(), &call).unwrap();
    assert_eq!(body["max_tokens"], 10);
    assert_eq!(body["temperature"], 0.1);
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["stop"], json!(["a", "b"]));
    assert_eq!(body["reasoning_effort"], "minimal");
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "answer", "description": "The answer.", "schema": {"type": "object"}, "strict": false}})
    );
    // No thinking-budget field in Chat Completions.
    assert!(!body.to_string().contains("999"));
    // Nothing set, nothing sent.
    let body = request_body(&openai::OpenAiChat::default(), "m", &context()).unwrap();
    for key in [
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "tool_choice",
        "reasoning_effort",
        "response_format",
    ] {
        assert!(body.get(key).is_none(), "{key}");
    }
}

#[test]
fn openai_tool_choices() {
    for (choice, expected) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
        (
            ToolChoice::Tool("ls".into()),
            json!({"type": "function", "function": {"name": "ls"}}),
        ),
    ] {
        let call = StreamOptions::default().with_tool_choice(choice);
        let body =
            request_body_with(&openai::OpenAiChat::default(), "m", &context(), &call).unwrap();
        assert_eq!(body["tool_choice"], expected);
    }
}

#[test]
fn the_call_overrides_the_configuration_and_keeps_the_rest() {
    let config = OpenAiConfig::new("http://h/v1", "m")
        .with_defaults(
            StreamOptions::default()
                .with_max_tokens(500)
                .with_temperature(0.7),
        )
        .with_compat(openai::Compat::default().with_max_completion_tokens(true));
    let call = StreamOptions::default().with_max_tokens(20);
    let body = body_of(&config.prepare_call(&context(), &call).unwrap());
    assert_eq!(body["max_completion_tokens"], 20);
    assert_eq!(body["temperature"], 0.7);
    let body = body_of(&config.prepare(&context()).unwrap());
    assert_eq!(body["max_completion_tokens"], 500);

    let config = AnthropicConfig::new("claude").with_defaults(
        StreamOptions::default()
            .with_max_tokens(300)
            .with_thinking_budget(5000)
            .with_tool_choice(ToolChoice::Required),
    );
    let body = body_of(&config.prepare(&context()).unwrap());
    assert_eq!(body["thinking"]["budget_tokens"], 5000);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    let call = StreamOptions::default()
        .with_reasoning_effort(ReasoningEffort::Low)
        .with_tool_choice(ToolChoice::Tool("ls".into()));
    let body = body_of(&config.prepare_call(&context(), &call).unwrap());
    assert_eq!(body["thinking"]["budget_tokens"], 2048);
    // Raised above the budget, as the API requires.
    assert_eq!(body["max_tokens"], 2048 + 300);
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "ls"}));
}

#[test]
fn anthropic_maps_every_option() {
    for (effort, budget) in [
        (ReasoningEffort::Minimal, 1024),
        (ReasoningEffort::Low, 2048),
        (ReasoningEffort::Medium, 8192),
        (ReasoningEffort::High, 16384),
    ] {
        assert_eq!(anthropic::effort_budget(effort), budget);
    }
    // An explicit budget wins over the effort.
    let call = StreamOptions::default()
        .with_reasoning_effort(ReasoningEffort::High)
        .with_thinking_budget(3000)
        .with_top_p(0.8)
        .with_stop(["STOP"])
        .with_tool_choice(ToolChoice::Required)
        .with_response_format(format().with_strict(true));
    let messages = anthropic::AnthropicMessages::default();
    let body = request_body_with(&messages, "claude", &context(), &call).unwrap();
    assert_eq!(body["thinking"]["budget_tokens"], 3000);
    assert_eq!(body["top_p"], 0.8);
    assert_eq!(body["stop_sequences"], json!(["STOP"]));
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": {"type": "object"}}})
    );
    for (choice, expected) in [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::None, json!({"type": "none"})),
    ] {
        let call = StreamOptions::default().with_tool_choice(choice);
        let body = request_body_with(&messages, "claude", &context(), &call).unwrap();
        assert_eq!(body["tool_choice"], expected);
    }
}

#[test]
fn extra_body_is_merged_and_wins() {
    let config = AnthropicConfig::new("claude")
        .with_extra_body(json!({"max_tokens": 7, "metadata": {"user_id": "u"}}));
    let body = body_of(&config.prepare(&context()).unwrap());
    assert_eq!(body["max_tokens"], 7);
    assert_eq!(body["metadata"]["user_id"], "u");
    // Not an object: ignored.
    let config = OpenAiConfig::new("http://h/v1", "m").with_extra_body(json!("oops"));
    let body = body_of(&config.prepare(&context()).unwrap());
    assert_eq!(body["model"], "m");
}

#[test]
fn extra_headers_replace_defaults_and_bad_ones_are_config_errors() {
    let config = OpenAiConfig::new("http://h/v1", "m")
        .with_api_key("sk-default")
        .with_header("api-key", "azure-secret")
        .unwrap()
        .with_header("Authorization", "Bearer replaced")
        .unwrap();
    let request = config.prepare(&context()).unwrap();
    assert_eq!(request.header("api-key"), Some("azure-secret"));
    assert_eq!(request.header("authorization"), Some("Bearer replaced"));
    assert!(!request.headers.iter().any(|(n, _)| *n == "authorization"));
    let printed = format!("{config:?} {request:?}");
    for secret in ["sk-default", "azure-secret", "Bearer replaced"] {
        assert!(!printed.contains(secret), "{printed}");
    }
    for (name, value, kind) in [
        ("x-bad", "a\r\nInjected: 1", HeaderErrorKind::InvalidValue),
        ("bad name", "v", HeaderErrorKind::InvalidName),
        ("", "v", HeaderErrorKind::InvalidName),
        ("Content-Length", "1", HeaderErrorKind::Reserved),
    ] {
        let error = AnthropicConfig::new("c")
            .with_header(name, value)
            .unwrap_err();
        assert_eq!(error.kind, kind, "{name:?}");
        assert!(!error.to_string().contains("Injected"));
    }
    assert_eq!(
        OpenAiConfig::new("h", "m")
            .with_header("x y", "v")
            .unwrap_err()
            .to_string(),
        "invalid extra header name `x y`: it must be a non-empty HTTP token"
    );
}

#[test]
fn a_calls_own_api_key_wins_over_the_configured_one() {
    // pi-ai's `options.apiKey`, set by the agent loop's `api_key` hook
    // (Pi's `getApiKey`); an empty one counts as none.
    let openai = OpenAiConfig::new("http://h/v1", "m").with_api_key("sk-configured");
    let anthropic = AnthropicConfig::new("c").with_api_key("sk-configured");
    let fresh = StreamOptions::default().with_api_key("sk-fresh");
    let empty = StreamOptions::default().with_api_key("");
    let request = openai.prepare_call(&context(), &fresh).unwrap();
    assert_eq!(request.header("authorization"), Some("Bearer sk-fresh"));
    let request = openai.prepare_call(&context(), &empty).unwrap();
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-configured")
    );
    let request = anthropic.prepare_call(&context(), &fresh).unwrap();
    assert_eq!(request.header("x-api-key"), Some("sk-fresh"));
    assert!(!format!("{fresh:?}").contains("sk-fresh"));
}
