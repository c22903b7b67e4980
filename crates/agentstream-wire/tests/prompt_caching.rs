//! Prompt caching as pi-ai 0.73.1 places it, per protocol: what a cache
//! retention and a session id add to the request, and that a call without
//! a retention caches as `Short`, Pi's default (`None` sends no marker, no
//! key, no header).
//! The whole bodies are compared with pi-ai's in
//! `crates/agentstream-cli/tests/pi_payloads.rs`.

use agentstream::message::Context;
use agentstream::model::{CacheRetention, StreamOptions};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::config::{EndpointConfig, Protocol};
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::gemini::GeminiConfig;
use agentstream_wire::openai::{Compat, OpenAiConfig};
use agentstream_wire::responses::ResponsesConfig;
use serde_json::{json, Value};

/// A system prompt, a tool, and a user message of plain text.
fn context() -> Context {
    Context::from_value(json!({
        "systemPrompt": "Be brief.",
        "messages": [{"role": "user", "content": "Hello", "timestamp": 1}],
        "tools": [
            {"name": "a", "description": "first", "parameters": {"type": "object"}},
            {"name": "b", "description": "second", "parameters": {"type": "object"}}
        ]
    }))
    .unwrap()
}

fn options(retention: Option<CacheRetention>) -> StreamOptions {
    let mut options = StreamOptions::default().with_session_id("s-1");
    options.cache_retention = retention;
    options
}

fn prepare<P: Protocol>(
    config: &EndpointConfig<P>,
    retention: Option<CacheRetention>,
) -> PreparedRequest {
    config
        .prepare_call(&context(), &options(retention))
        .unwrap()
}

fn body(request: &PreparedRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn header<'r>(request: &'r PreparedRequest, name: &str) -> Option<&'r str> {
    request
        .headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn anthropic_marks_the_system_prompt_the_last_tool_and_the_last_user_block() {
    let config = AnthropicConfig::new("claude-sonnet-4-5");
    let short = body(&prepare(&config, Some(CacheRetention::Short)));
    // Unset is Pi's default, `Short`.
    assert_eq!(body(&prepare(&config, None)), short);
    let marker = json!({"type": "ephemeral"});
    assert_eq!(
        short["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": marker}])
    );
    assert_eq!(short["tools"][1]["cache_control"], marker);
    assert!(short["tools"][0].get("cache_control").is_none());
    assert_eq!(
        short["messages"][0]["content"],
        json!([{"type": "text", "text": "Hello", "cache_control": marker}])
    );

    let long = body(&prepare(&config, Some(CacheRetention::Long)));
    let marker = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(long["system"][0]["cache_control"], marker);
    assert_eq!(long["tools"][1]["cache_control"], marker);
    assert_eq!(long["messages"][0]["content"][0]["cache_control"], marker);

    // `None`: pi-ai's block-shaped system prompt, but no marker.
    let none = body(&prepare(&config, Some(CacheRetention::None)));
    assert_eq!(
        none["system"],
        json!([{"type": "text", "text": "Be brief."}])
    );
    assert!(!none.to_string().contains("cache_control"));
    assert_eq!(none["messages"][0]["content"], "Hello");
}

#[test]
fn chat_completions_sends_the_cache_key_under_pi_ai_s_conditions() {
    let config = OpenAiConfig::new("https://example.com/v1", "m");
    let fields = |b: &Value| {
        (
            b.get("prompt_cache_key").cloned(),
            b.get("prompt_cache_retention").cloned(),
        )
    };
    assert_eq!(fields(&body(&prepare(&config, None))), (None, None));
    // Elsewhere than api.openai.com, only the long retention sends the key.
    assert_eq!(
        fields(&body(&prepare(&config, Some(CacheRetention::Short)))),
        (None, None)
    );
    assert_eq!(
        fields(&body(&prepare(&config, Some(CacheRetention::Long)))),
        (Some(json!("s-1")), Some(json!("24h")))
    );
    let openai = config
        .clone()
        .with_compat(Compat::default().with_detected_caching(
            "openai",
            "https://api.openai.com/v1",
            "gpt-4o",
        ));
    assert_eq!(
        fields(&body(&prepare(&openai, Some(CacheRetention::Short)))),
        (Some(json!("s-1")), None)
    );
    assert_eq!(
        fields(&body(&prepare(&openai, Some(CacheRetention::None)))),
        (None, None)
    );
    // Cloudflare has no long retention: neither field.
    let cloudflare = config
        .clone()
        .with_compat(Compat::default().with_detected_caching(
            "cloudflare-workers-ai",
            "https://api.cloudflare.com/client/v4",
            "@cf/x",
        ));
    assert_eq!(
        fields(&body(&prepare(&cloudflare, Some(CacheRetention::Long)))),
        (None, None)
    );
}

#[test]
fn openrouter_anthropic_models_get_anthropic_style_markers() {
    let compat = Compat::default().with_detected_caching(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "anthropic/claude-sonnet-4",
    );
    let config = OpenAiConfig::new("https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4")
        .with_compat(compat);
    let plain = body(&prepare(&config, Some(CacheRetention::None)));
    assert!(!plain.to_string().contains("cache_control"));
    let unset = body(&prepare(&config, None));
    assert_eq!(
        unset["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let long = body(&prepare(&config, Some(CacheRetention::Long)));
    let marker = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(
        long["messages"][0]["content"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": marker}])
    );
    assert_eq!(long["messages"][1]["content"][0]["cache_control"], marker);
    assert_eq!(long["tools"][1]["cache_control"], marker);
    assert!(long["tools"][0].get("cache_control").is_none());
}

#[test]
fn session_affinity_headers_follow_the_compat_flag() {
    let mut compat = Compat::default();
    let config = OpenAiConfig::new("https://example.com/v1", "m").with_compat(compat);
    assert_eq!(
        header(
            &prepare(&config, Some(CacheRetention::Short)),
            "x-session-affinity"
        ),
        None
    );
    compat.session_affinity_headers = true;
    let config = config.with_compat(compat);
    let request = prepare(&config, Some(CacheRetention::Short));
    for name in ["session_id", "x-client-request-id", "x-session-affinity"] {
        assert_eq!(header(&request, name), Some("s-1"), "{name}");
    }
    assert_eq!(
        header(&prepare(&config, Some(CacheRetention::None)), "session_id"),
        None
    );
}

#[test]
fn responses_sends_the_key_the_retention_and_the_session_headers() {
    let config = ResponsesConfig::new("https://api.openai.com/v1", "gpt-5");
    let plain = prepare(&config, Some(CacheRetention::None));
    assert!(body(&plain).get("prompt_cache_key").is_none());
    assert_eq!(header(&plain, "session_id"), None);
    let unset = prepare(&config, None);
    assert_eq!(body(&unset)["prompt_cache_key"], "s-1");
    assert_eq!(header(&unset, "session_id"), Some("s-1"));

    let short = prepare(&config, Some(CacheRetention::Short));
    assert_eq!(body(&short)["prompt_cache_key"], "s-1");
    assert!(body(&short).get("prompt_cache_retention").is_none());
    assert_eq!(header(&short, "session_id"), Some("s-1"));
    assert_eq!(header(&short, "x-client-request-id"), Some("s-1"));

    let long = prepare(&config, Some(CacheRetention::Long));
    assert_eq!(body(&long)["prompt_cache_retention"], "24h");

    let none = prepare(&config, Some(CacheRetention::None));
    assert!(body(&none).get("prompt_cache_key").is_none());
    assert_eq!(header(&none, "x-client-request-id"), None);
}

#[test]
fn gemini_sends_nothing_for_caching() {
    let config = GeminiConfig::new("gemini-2.5-flash");
    let plain = prepare(&config, None);
    let long = prepare(&config, Some(CacheRetention::Long));
    assert_eq!(body(&plain), body(&long));
    assert_eq!(plain.headers, long.headers);
}

#[test]
fn the_call_s_retention_and_session_id_win_over_the_defaults() {
    let defaults = StreamOptions::default()
        .with_cache_retention(CacheRetention::Long)
        .with_session_id("default");
    let config = ResponsesConfig::new("https://api.openai.com/v1", "gpt-5").with_defaults(defaults);
    let inherited = config
        .prepare_call(&context(), &StreamOptions::default())
        .unwrap();
    assert_eq!(body(&inherited)["prompt_cache_key"], "default");
    assert_eq!(body(&inherited)["prompt_cache_retention"], "24h");
    let call = StreamOptions::default()
        .with_cache_retention(CacheRetention::Short)
        .with_session_id("call");
    let own = config.prepare_call(&context(), &call).unwrap();
    assert_eq!(body(&own)["prompt_cache_key"], "call");
    assert!(body(&own).get("prompt_cache_retention").is_none());
}
