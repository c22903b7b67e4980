//! End-to-end scenarios of the request side, run by every HTTP adapter for
//! both providers: the per-call [`StreamOptions`] over the configuration's
//! defaults, the configuration's extra body and extra headers as the
//! server receives them, the wall-clock timestamp the adapter stamps, and
//! the costs of a price table.

use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::model::{Model, ResponseFormat, StreamOptions, ToolChoice};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::pricing::Pricing;
use serde_json::{json, Value};

use crate::http::assert_stopped;
use crate::http::scenarios::{call, TEST_KEY};
use crate::http::{answer_payloads, named_sse_body, sse_body, MockServer, Reply};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn schema() -> ResponseFormat {
    ResponseFormat::json_schema(
        "greeting",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    )
    .with_strict(true)
}

fn call_options() -> StreamOptions {
    StreamOptions::default()
        .with_max_tokens(64)
        .with_top_p(0.9)
        .with_stop(["END"])
        .with_tool_choice(ToolChoice::None)
        .with_response_format(schema())
}

/// OpenAI: the body holds the call's options over the configuration's
/// (the call's `max_tokens` wins, the configuration's temperature stays),
/// the extra body merged in (recursively, winning), the extra headers
/// replacing the default of the same name; the message carries the
/// adapter's timestamp and the priced usage.
pub async fn openai_request_options<M: Model>(make: impl Fn(OpenAiConfig) -> M) {
    let body = sse_body(&answer_payloads(&[], &["hi"]));
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let config = OpenAiConfig::new(server.base_url(), "test-model")
        .with_api_key(TEST_KEY)
        .with_defaults(
            StreamOptions::default()
                .with_max_tokens(1000)
                .with_temperature(0.25),
        )
        .with_extra_body(json!({
            "stream_options": {"include_obfuscation": false},
            "provider": {"order": ["a", "b"]},
            "temperature": 0.5,
        }))
        .with_header("X-Title", "agentstream tests")
        .expect("a valid header")
        .with_header("Authorization", "Bearer other-key")
        .expect("a valid header")
        .with_pricing(Pricing::new(1.0, 2.0));
    let model = make(config);
    let before = now_ms();
    let (_, message) = call(&model, call_options()).await;
    let after = now_ms();
    assert_stopped(&message);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].json();
    assert_eq!(sent["max_tokens"], 64);
    // The extra body wins over the configuration's temperature.
    assert_eq!(sent["temperature"], 0.5);
    assert_eq!(sent["top_p"], 0.9);
    assert_eq!(sent["stop"], json!(["END"]));
    assert_eq!(sent["tool_choice"], "none");
    assert_eq!(
        sent["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "greeting", "schema": schema().schema, "strict": true}})
    );
    assert_eq!(
        sent["stream_options"],
        json!({"include_usage": true, "include_obfuscation": false})
    );
    assert_eq!(sent["provider"], json!({"order": ["a", "b"]}));
    assert_eq!(requests[0].header("x-title"), Some("agentstream tests"));
    let auth: Vec<&str> = requests[0]
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(
        auth,
        ["Bearer other-key"],
        "the extra header replaces the default"
    );
    assert!(
        (before..=after).contains(&message.timestamp),
        "{before} <= {} <= {after}",
        message.timestamp
    );
    // 11 prompt and 7 completion tokens at 1 and 2 per million.
    assert_eq!(message.usage.cost.input, 11.0 / 1e6);
    assert_eq!(message.usage.cost.output, 14.0 / 1e6);
    assert_eq!(message.usage.cost.total, 11.0 / 1e6 + 14.0 / 1e6);
}

fn anthropic_answer() -> Vec<u8> {
    named_sse_body(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-test-20250101", "usage": {"input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 100, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "{\"text\":\"hi\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ])
}

/// Anthropic: the same, with the call's tool choice and effort mapped
/// (`none`, a thinking budget), `stop_sequences`, the structured output as
/// `output_config.format`, and the served model as `responseModel`.
pub async fn anthropic_request_options<M: Model>(make: impl Fn(AnthropicConfig) -> M) {
    let body = anthropic_answer();
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let config = AnthropicConfig::new("claude-test")
        .with_base_url(server.origin())
        .with_api_key(TEST_KEY)
        .with_defaults(StreamOptions::default().with_temperature(1.0))
        .with_extra_body(json!({"metadata": {"user_id": "u-1"}}))
        .with_header("anthropic-beta", "some-beta-2025-01-01")
        .expect("a valid header")
        .with_header("anthropic-version", "2099-01-01")
        .expect("a valid header")
        .with_pricing(
            Pricing::new(3.0, 15.0)
                .with_cache_read(0.3)
                .with_cache_write(3.75),
        );
    let model = make(config);
    let before = now_ms();
    let options = call_options().with_thinking_budget(2048);
    let (_, message) = call(&model, options).await;
    let after = now_ms();
    assert_stopped(&message);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent: Value = requests[0].json();
    // max_tokens must exceed the budget: raised to budget + max_tokens.
    assert_eq!(sent["max_tokens"], 2048 + 64);
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(sent["temperature"], 1.0);
    assert_eq!(sent["top_p"], 0.9);
    assert_eq!(sent["stop_sequences"], json!(["END"]));
    assert_eq!(sent["tool_choice"], json!({"type": "none"}));
    assert_eq!(
        sent["output_config"],
        json!({"format": {"type": "json_schema", "schema": schema().schema}})
    );
    assert_eq!(sent["metadata"], json!({"user_id": "u-1"}));
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("some-beta-2025-01-01")
    );
    let versions: Vec<&str> = requests[0]
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("anthropic-version"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(versions, ["2099-01-01"]);
    assert!((before..=after).contains(&message.timestamp));
    assert_eq!(
        message.extra.get("responseModel"),
        Some(&json!("claude-test-20250101"))
    );
    let cost = &message.usage.cost;
    assert_eq!(cost.input, 10.0 * 3.0 / 1e6);
    assert_eq!(cost.output, 20.0 * 15.0 / 1e6);
    assert_eq!(cost.cache_read, 1000.0 * 0.3 / 1e6);
    assert_eq!(cost.cache_write, 100.0 * 3.75 / 1e6);
    assert_eq!(
        cost.total,
        cost.input + cost.output + cost.cache_read + cost.cache_write
    );
}
