//! The `ConverseStream` request body against pi-ai 0.73.1's: the context
//! and options of `fixtures/bedrock/pi-ai/request.context.json` through
//! `BedrockConfig`, compared with the body (and path) pi-ai's AWS SDK
//! sent for them (`request.pi.json`, written by
//! `oracle/pi-ai/bedrock-goldens.mjs`).

use agentstream::message::{user, Context};
use agentstream::model::{CacheRetention, ReasoningEffort, StreamOptions, ToolChoice};
use agentstream_wire::bedrock::auth::{resolve_region, AuthOptions};
use agentstream_wire::bedrock::BedrockConfig;
use serde_json::{json, Value};

fn read(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/bedrock/pi-ai/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

fn body(config: &BedrockConfig, context: &Context, options: &StreamOptions) -> Value {
    let request = config.prepare_call(context, options).unwrap();
    serde_json::from_slice(&request.body).unwrap()
}

#[test]
fn the_body_is_pi_ais() {
    let input = read("request.context.json");
    let context: Context = serde_json::from_value(input["context"].clone()).unwrap();
    let options = StreamOptions::default()
        .with_max_tokens(1000)
        .with_temperature(0.5)
        .with_reasoning_effort(ReasoningEffort::Medium)
        .with_tool_choice(ToolChoice::Auto);
    let config = BedrockConfig::new(MODEL, "us-east-1").with_base_url("http://127.0.0.1:1");
    let request = config.prepare_call(&context, &options).unwrap();
    let pi = read("request.pi.json");
    assert_eq!(
        request.url,
        format!("http://127.0.0.1:1{}", pi["url"].as_str().unwrap())
    );
    let ours: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(ours, pi["body"]);
    assert!(request
        .headers
        .contains(&("accept", "application/vnd.amazon.eventstream".into())));
    assert!(!request
        .headers
        .iter()
        .any(|(name, _)| *name == "authorization"));
}

#[test]
fn a_key_is_sent_as_bearer_and_the_region_names_the_host() {
    let config = BedrockConfig::new("m", "eu-west-1").with_api_key("bedrock-key");
    let request = config
        .prepare_call(
            &Context::from_messages([user("hi").into()]),
            &StreamOptions::default(),
        )
        .unwrap();
    assert_eq!(
        request.url,
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse-stream"
    );
    assert!(request
        .headers
        .contains(&("authorization", "Bearer bedrock-key".into())));
    let region = |option: Option<&str>, env: &[(&str, &str)]| {
        let options = AuthOptions {
            region: option,
            ..AuthOptions::default()
        };
        let lookup = |name: &str| {
            env.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        };
        resolve_region(&options, "", lookup).region
    };
    let both = [("AWS_REGION", ""), ("AWS_DEFAULT_REGION", "ap-south-1")];
    assert_eq!(region(None, &both).as_deref(), Some("ap-south-1"));
    let env = [("AWS_REGION", "us-west-2")];
    assert_eq!(
        region(Some("eu-west-3"), &env).as_deref(),
        Some("eu-west-3")
    );
    assert_eq!(region(None, &[]).as_deref(), Some("us-east-1"));
}

#[test]
fn models_get_pi_ais_thinking_caching_and_signatures() {
    let mut context = Context::from_messages([user("hi").into()]);
    context.system_prompt = Some("S".into());
    let thinking = StreamOptions::default().with_reasoning_effort(ReasoningEffort::Low);
    // Adaptive thinking for Sonnet 4.6, no beta header.
    let adaptive = body(
        &BedrockConfig::new("anthropic.claude-sonnet-4-6", "us-east-1"),
        &context,
        &thinking,
    );
    assert_eq!(
        adaptive["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "low"}})
    );
    // A non-Claude model: no thinking field, no cache points.
    let nova = body(
        &BedrockConfig::new("amazon.nova-pro-v1:0", "us-east-1"),
        &context,
        &thinking,
    );
    assert!(nova.get("additionalModelRequestFields").is_none());
    assert_eq!(nova["system"], json!([{"text": "S"}]));
    // The long retention's one-hour cache points; none with `none`.
    let claude = BedrockConfig::new("anthropic.claude-opus-4-1", "us-east-1");
    let long = body(
        &claude,
        &context,
        &StreamOptions::default().with_cache_retention(CacheRetention::Long),
    );
    assert_eq!(
        long["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    assert_eq!(
        long["messages"][0]["content"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    let none = body(
        &claude,
        &context,
        &StreamOptions::default().with_cache_retention(CacheRetention::None),
    );
    assert_eq!(none["system"], json!([{"text": "S"}]));
    assert_eq!(none["inferenceConfig"], json!({}));
}
