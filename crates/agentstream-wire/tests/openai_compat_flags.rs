//! The Chat Completions compat flags pi-ai applies from its catalogue
//! (`supportsStore`, `supportsStrictMode`, `requiresToolResultName`,
//! `requiresReasoningContentOnAssistantMessages`): each off by default,
//! each adding exactly its field when on.

use agentstream::message::Context;
use agentstream_wire::openai::{Compat, OpenAiConfig};
use serde_json::{json, Value};

fn context() -> Context {
    Context::from_value(json!({
        "messages": [
            {"role": "user", "content": "list", "timestamp": 1},
            {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}],
             "api": "openai-completions", "provider": "openai", "model": "m",
             "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "stopReason": "toolUse", "timestamp": 2},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "ls", "content": [{"type": "text", "text": "a"}],
             "isError": false, "timestamp": 3}
        ],
        "tools": [{"name": "ls", "description": "lists", "parameters": {"type": "object"}}]
    }))
    .unwrap()
}

fn body(compat: Compat) -> Value {
    let config = OpenAiConfig::new("https://example.com/v1", "m").with_compat(compat);
    serde_json::from_slice(&config.prepare(&context()).unwrap().body).unwrap()
}

#[test]
fn each_flag_adds_its_field_and_only_when_on() {
    let plain = body(Compat::default());
    assert!(plain.get("store").is_none());
    assert!(plain["tools"][0]["function"].get("strict").is_none());
    assert!(plain["messages"][2].get("name").is_none());
    assert!(plain["messages"][1].get("reasoning_content").is_none());

    let mut compat = Compat::default();
    compat.store = true;
    compat.strict_tools = true;
    compat.tool_result_name = true;
    compat.reasoning_content_on_assistant = true;
    let flagged = body(compat);
    assert_eq!(flagged["store"], false);
    assert_eq!(flagged["tools"][0]["function"]["strict"], false);
    assert_eq!(flagged["messages"][2]["role"], "tool");
    assert_eq!(flagged["messages"][2]["name"], "ls");
    assert_eq!(flagged["messages"][1]["reasoning_content"], "");
    // Nothing else changes.
    let mut stripped = flagged.clone();
    stripped.as_object_mut().unwrap().remove("store");
    stripped["tools"][0]["function"]
        .as_object_mut()
        .unwrap()
        .remove("strict");
    stripped["messages"][2]
        .as_object_mut()
        .unwrap()
        .remove("name");
    stripped["messages"][1]
        .as_object_mut()
        .unwrap()
        .remove("reasoning_content");
    assert_eq!(stripped, plain);
}
