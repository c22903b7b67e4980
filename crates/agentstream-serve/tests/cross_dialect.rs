//! Cross-dialect replay: exchanges recorded against the Anthropic API
//! answer OpenAI Chat Completions, Responses, Gemini and Bedrock clients
//! with the same message, less what cannot cross (see `cassette::cross`),
//! and a Bedrock recording (event-stream frames) answers the others.

use std::path::PathBuf;

use agentstream::message::{
    assistant, user, AssistantMessage, ContentBlock, Context, StopReason, ToolCall,
};
use agentstream::model::{Model, ScriptedTurn, StreamOptions};
use agentstream_serve::Server;
use agentstream_tokio::{
    AnthropicModel, BedrockModel, GeminiModel, OpenAiCompatModel, ResponsesModel,
};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::bedrock::BedrockConfig;
use agentstream_wire::gemini::GeminiConfig;
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::responses::ResponsesConfig;
use serde_json::{json, Value};

mod support;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn question() -> Context {
    Context::from_messages([user("What is the weather in Paris?").into()])
}

/// What crosses: the text and the tool calls' names and arguments (ids
/// too when `ids`: a Responses client's `CALL|ITEM` by its call part),
/// and the stop reason.
fn crossing(message: &AssistantMessage, ids: bool) -> Value {
    let content: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(json!({"text": t.text})),
            ContentBlock::ToolCall(c) => Some(json!({
                "id": if ids { c.id.split('|').next() } else { None },
                "name": c.name,
                "arguments": c.arguments,
            })),
            _ => None,
        })
        .collect();
    json!({"content": content, "stopReason": message.stop_reason})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_recording_answers_the_other_apis() {
    let call = ToolCall {
        id: "toolu_01".into(),
        name: "get_weather".into(),
        arguments: serde_json::from_value(json!({"city": "Paris"})).unwrap(),
        ..ToolCall::default()
    };
    let mut turn = assistant(
        [
            ContentBlock::Text(agentstream::message::TextContent {
                text: "Let me check.".into(),
                ..Default::default()
            }),
            ContentBlock::ToolCall(call),
        ],
        StopReason::ToolUse,
    );
    turn.usage.input = 12;
    turn.usage.output = 5;
    let upstream = Server::builder(agentstream::model::ScriptedModel::new([
        ScriptedTurn::message(turn),
    ]))
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let dir = temp_dir("cross-dialect");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let anthropic = |url: &str| {
        AnthropicModel::new(
            AnthropicConfig::new("claude-test")
                .with_api_key("k")
                .with_base_url(url.trim_end_matches("/v1")),
        )
        .unwrap()
    };
    let recorded = anthropic(&proxy.url())
        .stream(&question(), StreamOptions::default())
        .result()
        .await;
    assert_eq!(recorded.stop_reason, StopReason::ToolUse, "{recorded:?}");
    proxy.shutdown().await;
    upstream.shutdown().await;

    let replay = support::replay(&dir).await;
    let url = replay.url();
    let openai = OpenAiCompatModel::new(OpenAiConfig::new(url.clone(), "gpt-test")).unwrap();
    let responses = ResponsesModel::new(ResponsesConfig::new(url.clone(), "gpt-5")).unwrap();
    let gemini = GeminiModel::new(
        GeminiConfig::new("gemini-2.5-flash")
            .with_base_url(url.trim_end_matches("/v1"))
            .with_api_key("k"),
    )
    .unwrap();
    let bedrock = BedrockModel::new(
        BedrockConfig::new("anthropic.claude-test-v1:0", "us-east-1").with_base_url(url.clone()),
    )
    .unwrap();
    let want = crossing(&recorded, true);
    for (name, model, ids) in [
        ("bedrock", &bedrock as &dyn Model, true),
        ("openai", &openai as &dyn Model, true),
        ("responses", &responses as &dyn Model, true),
        // Gemini's calls carry no id: its client names them.
        ("gemini", &gemini as &dyn Model, false),
        // Its own API still matches first.
        ("anthropic", &anthropic(&url) as &dyn Model, true),
    ] {
        let got = model
            .stream(&question(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(got.error_message, None, "{name}");
        let want = if ids {
            want.clone()
        } else {
            crossing(&recorded, false)
        };
        assert_eq!(crossing(&got, ids), want, "{name}");
    }
    // A question no cassette of any API holds still gets the mismatch.
    let other = openai
        .stream(
            &Context::from_messages([user("And in Lyon?").into()]),
            StreamOptions::default(),
        )
        .result()
        .await;
    let error = other.error_message.unwrap_or_default();
    assert!(error.contains("no cassette"), "{error}");
    replay.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bedrock_recording_answers_the_other_apis() {
    let upstream = Server::builder(agentstream::model::ScriptedModel::new([
        ScriptedTurn::message(assistant(
            [ContentBlock::Text(agentstream::message::TextContent {
                text: "Sunny in Paris.".into(),
                ..Default::default()
            })],
            StopReason::Stop,
        )),
    ]))
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let dir = temp_dir("cross-dialect-bedrock");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let bedrock = |url: String| {
        BedrockModel::new(
            BedrockConfig::new("anthropic.claude-test-v1:0", "us-east-1").with_base_url(url),
        )
        .unwrap()
    };
    let recorded = bedrock(proxy.url())
        .stream(&question(), StreamOptions::default())
        .result()
        .await;
    assert_eq!(recorded.error_message, None, "{recorded:?}");
    assert_eq!(recorded.text(), "Sunny in Paris.");
    proxy.shutdown().await;
    upstream.shutdown().await;

    let replay = support::replay(&dir).await;
    let url = replay.url();
    let openai = OpenAiCompatModel::new(OpenAiConfig::new(url.clone(), "gpt-test")).unwrap();
    let anthropic = AnthropicModel::new(
        AnthropicConfig::new("claude-test")
            .with_api_key("k")
            .with_base_url(url.trim_end_matches("/v1")),
    )
    .unwrap();
    for (name, model) in [
        ("openai", &openai as &dyn Model),
        ("anthropic", &anthropic as &dyn Model),
        // Its own API still matches first.
        ("bedrock", &bedrock(url.clone()) as &dyn Model),
    ] {
        let got = model
            .stream(&question(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(got.error_message, None, "{name}");
        assert_eq!(crossing(&got, true), crossing(&recorded, true), "{name}");
    }
    replay.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
