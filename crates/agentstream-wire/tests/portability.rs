//! Context portability through both request builders: a conversation
//! survives an aborted turn, and thinking moves between models as the
//! transform rules say.

use agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, ContentBlock, Context, Message, StopReason,
    ThinkingContent,
};
use agentstream_wire::{anthropic, openai};
use serde_json::{json, Value};

mod body_support;
use body_support::request_body;

/// A turn that streamed one complete tool call, then was aborted before
/// its `done`.
fn aborted_after_tool_call(provider: &str, api: &str, model: &str) -> AssistantMessage {
    let mut m = assistant(
        [
            text("Let me look."),
            tool_call("call_1", "ls", json!({"path": "."})),
        ],
        StopReason::Aborted,
    );
    m.provider = provider.into();
    m.api = api.into();
    m.model = model.into();
    m.error_message = Some("Request was aborted".into());
    m
}

fn conversation(aborted: AssistantMessage) -> Context {
    Context::from_messages([
        user("list the files").into(),
        aborted.into(),
        user("never mind, just say hi").into(),
    ])
}

fn roles(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn openai_survives_an_abort_after_a_complete_tool_call() {
    let context = conversation(aborted_after_tool_call(
        "openai",
        "openai-completions",
        "gpt-4o",
    ));
    let chat = openai::OpenAiChat::default();
    let body = request_body(&chat, "gpt-4o", &context).expect("the request builds");
    assert_eq!(roles(&body), ["user", "user"]);
    let sent = body.to_string();
    assert!(!sent.contains("tool_calls"), "{sent}");
    assert!(!sent.contains("call_1"), "{sent}");
    // And it keeps building turn after turn.
    let mut context = context;
    context
        .messages
        .push(assistant([text("hi")], StopReason::Stop).into());
    context.messages.push(user("again").into());
    assert!(request_body(&chat, "gpt-4o", &context).is_ok());
}

#[test]
fn anthropic_survives_an_abort_after_a_complete_tool_call() {
    let context = conversation(aborted_after_tool_call(
        "anthropic",
        "anthropic-messages",
        "claude-sonnet-4-5",
    ));
    let messages = anthropic::AnthropicMessages::default();
    let body = request_body(&messages, "claude-sonnet-4-5", &context).expect("the request builds");
    assert_eq!(roles(&body), ["user", "user"]);
    let text = body.to_string();
    assert!(!text.contains("tool_use"), "{text}");
    assert!(
        !text.contains("\"text\":\"\""),
        "no empty text block: {text}"
    );
}

#[test]
fn a_tool_call_interrupted_by_the_user_gets_an_error_result_on_both_providers() {
    // The call's turn completed (toolUse) but the tool never ran.
    let mut call_turn = assistant([tool_call("call_1", "ls", json!({}))], StopReason::ToolUse);
    call_turn.provider = "openai".into();
    call_turn.api = "openai-completions".into();
    call_turn.model = "gpt-4o".into();
    let context = Context::from_messages([
        user("list").into(),
        call_turn.into(),
        user("stop, do something else").into(),
    ]);
    let body = request_body(&openai::OpenAiChat::default(), "gpt-4o", &context).unwrap();
    assert_eq!(roles(&body), ["user", "assistant", "tool", "user"]);
    assert_eq!(
        body["messages"][2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "No result provided"})
    );
    let body = request_body(&anthropic::AnthropicMessages::default(), "claude", &context).unwrap();
    assert_eq!(roles(&body), ["user", "assistant", "user", "user"]);
    assert_eq!(
        body["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call_1", "content": "No result provided", "is_error": true})
    );
}

fn thinking_turn(provider: &str, api: &str, model: &str, signature: &str) -> Message {
    let mut m = assistant(
        [
            ContentBlock::Thinking(ThinkingContent {
                thinking: "step by step".into(),
                thinking_signature: Some(signature.into()),
                ..ThinkingContent::default()
            }),
            ContentBlock::Thinking(ThinkingContent {
                thinking_signature: Some("opaque".into()),
                redacted: Some(true),
                ..ThinkingContent::default()
            }),
            text("42"),
        ],
        StopReason::Stop,
    );
    m.provider = provider.into();
    m.api = api.into();
    m.model = model.into();
    m.into()
}

#[test]
fn anthropic_thinking_from_another_model_becomes_text() {
    let same = Context::from_messages([
        user("q").into(),
        thinking_turn("anthropic", "anthropic-messages", "claude", "sig"),
        user("q2").into(),
    ]);
    let messages = anthropic::AnthropicMessages::default();
    let body = request_body(&messages, "claude", &same).unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "step by step", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "42"},
        ])
    );
    let other = Context::from_messages([
        user("q").into(),
        thinking_turn(
            "openai",
            "openai-completions",
            "gpt-4o",
            "reasoning_content",
        ),
        user("q2").into(),
    ]);
    let body = request_body(&messages, "claude", &other).unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "text", "text": "step by step"},
            {"type": "text", "text": "42"},
        ])
    );
}
