//! The Chat Completions request builder.

use agentstream::message::{
    assistant, image, text, thinking, tool_call, tool_result, user, user_blocks, Context, Message,
    StopReason, Tool,
};
use agentstream::model::StreamOptions;
use agentstream_wire::openai::{Compat, OpenAiChat};
use serde_json::json;

mod body_support;
use body_support::{request_body, request_body_with};

/// The message as if gpt-4o on OpenAI wrote it: its unsigned thinking is
/// not sent back (another model's would be sent as text).
fn gpt_4o(
    mut message: agentstream::message::AssistantMessage,
) -> agentstream::message::AssistantMessage {
    message.provider = "openai".into();
    message.api = "openai-completions".into();
    message.model = "gpt-4o".into();
    message
}

fn conversation() -> Context {
    let mut result = tool_result("c2", "shot", "taken", false);
    result.content.push(image("QUJD", "image/png"));
    Context {
        system_prompt: Some("You are terse.".into()),
        messages: vec![
            user("hi").into(),
            user_blocks([text("what is this?"), image("aGVsbG8=", "image/jpeg")]).into(),
            gpt_4o(assistant(
                [
                    thinking("private"),
                    text("Let me look. "),
                    text("Twice."),
                    tool_call("c1", "read", json!({"n": 2, "path": "a.txt"})),
                    tool_call("c2", "shot", json!({})),
                ],
                StopReason::ToolUse,
            ))
            .into(),
            tool_result("c1", "read", "contents", false).into(),
            result.into(),
            assistant([], StopReason::Aborted).into(),
        ],
        tools: Some(vec![Tool {
            name: "read".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            extra: Default::default(),
        }]),
        extra: Default::default(),
    }
}

#[test]
fn a_full_conversation_becomes_the_expected_body() {
    let body = request_body(&OpenAiChat::default(), "gpt-4o", &conversation()).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-4o",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "hi"},
                {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aGVsbG8="}},
                ]},
                {"role": "assistant", "content": "Let me look. Twice.", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"n\":2,\"path\":\"a.txt\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "shot", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "contents"},
                {"role": "tool", "tool_call_id": "c2", "content": "taken\n[image: image/png]"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read",
                "description": "Reads a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
        })
    );
    // Arguments are JSON strings that parse back to the call's arguments
    // (keys are given sorted so the text is the same with `preserve_order`).
    let arguments = body["messages"][3]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(arguments).unwrap(),
        json!({"path": "a.txt", "n": 2})
    );
}

#[test]
fn compat_switches_the_token_field_the_system_role_and_stream_options() {
    let context = conversation();
    let options = StreamOptions::default().with_max_tokens(512);
    let body = request_body_with(&OpenAiChat::default(), "o3", &context, &options).unwrap();
    assert_eq!(body["max_tokens"], 512);
    assert!(body.get("max_completion_tokens").is_none());

    let compat = Compat::default()
        .with_max_completion_tokens(true)
        .with_developer_role(true)
        .with_stream_options(false);
    let mut chat = OpenAiChat::default();
    chat.compat = compat;
    let body = request_body_with(&chat, "o3", &context, &options.with_temperature(0.5)).unwrap();
    assert_eq!(body["max_completion_tokens"], 512);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["messages"][0]["role"], "developer");
    assert!(body.get("stream_options").is_none());
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], 0.5);
}

#[test]
fn no_tools_and_no_system_prompt_leave_their_keys_out() {
    let context = Context::from_messages([user("hi").into()]);
    let body = request_body(&OpenAiChat::default(), "m", &context).unwrap();
    assert!(body.get("tools").is_none());
    assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
}

#[test]
fn broken_linkage_is_returned_as_diagnostics_never_sent() {
    let call = |id: &str| -> Message {
        assistant([tool_call(id, "read", json!({}))], StopReason::ToolUse).into()
    };
    // A call answered by nothing before the next user message gets an
    // error result (the portability transform), so the request builds.
    let context = Context::from_messages([call("c1"), user("never mind").into()]);
    let body = request_body(&OpenAiChat::default(), "m", &context).unwrap();
    assert_eq!(body["messages"][1]["content"], "No result provided");

    // A call still waiting at the end of the history.
    let context = Context::from_messages([user("go").into(), call("c1")]);
    let error = request_body(&OpenAiChat::default(), "m", &context).unwrap_err();
    assert_eq!(error.diagnostics[0].code, "unanswered-tool-call");
    assert_eq!(error.diagnostics[0].message_index, 1);
    assert!(error.to_string().contains("unanswered-tool-call"));

    // An orphan result.
    let context = Context::from_messages([
        user("go").into(),
        tool_result("zz", "read", "x", false).into(),
    ]);
    let error = request_body(&OpenAiChat::default(), "m", &context).unwrap_err();
    assert_eq!(error.diagnostics[0].code, "orphan-tool-result");

    // A mismatched tool name does not break the request.
    let context =
        Context::from_messages([call("c1"), tool_result("c1", "other", "x", false).into()]);
    assert!(request_body(&OpenAiChat::default(), "m", &context).is_ok());
}
