//! Round-trip tests over hand-written fixtures that contain every tricky case
//! the Pi logs have: leftover keys, missing `totalTokens`, absent and `null`
//! fields, exact float costs, integral costs, unknown roles, block types and
//! stop reasons.

use agentstream::message::{
    json_diff, AssistantMessage, ContentBlock, Context, Message, StopReason, UserContent,
};
use serde_json::{json, Value};

const TRICKY: &str = include_str!("fixtures/tricky-messages.jsonl");

fn lines() -> impl Iterator<Item = (usize, &'static str)> {
    TRICKY.lines().enumerate().map(|(i, l)| (i + 1, l))
}

fn round_trip_text(line: &str) -> (Message, String) {
    let msg: Message = serde_json::from_str(line).expect("fixture parses");
    (
        msg.clone(),
        serde_json::to_string(&msg).expect("serializes"),
    )
}

#[test]
fn every_fixture_line_round_trips_under_js_semantics() {
    for (n, line) in lines() {
        let original: Value = serde_json::from_str(line).unwrap();
        let (_, written) = round_trip_text(line);
        let reparsed: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(json_diff(&original, &reparsed), None, "line {n}: {written}");
    }
}

#[test]
fn serialization_is_idempotent_byte_for_byte() {
    for (n, line) in lines() {
        let (_, first) = round_trip_text(line);
        let (_, second) = round_trip_text(&first);
        assert_eq!(first, second, "line {n}");
    }
}

#[test]
fn costs_come_back_bit_identical() {
    for (_, line) in lines() {
        let original: Value = serde_json::from_str(line).unwrap();
        let (msg, written) = round_trip_text(line);
        let Message::Assistant(a) = msg else { continue };
        let reparsed: Value = serde_json::from_str(&written).unwrap();
        for key in ["input", "output", "cacheRead", "cacheWrite", "total"] {
            let before = original["usage"]["cost"][key].as_f64().unwrap();
            let after = reparsed["usage"]["cost"][key].as_f64().unwrap();
            assert_eq!(before.to_bits(), after.to_bits(), "{key}");
        }
        assert!(a.usage.cost.total.is_finite());
    }
}

#[test]
fn integral_costs_are_written_as_integers() {
    let line = lines().nth(6).unwrap().1;
    let (_, written) = round_trip_text(line);
    assert!(
        written.contains(r#""cost":{"input":0,"output":0,"cacheRead":3,"cacheWrite":3,"total":6}"#),
        "{written}"
    );
}

#[test]
fn leftovers_and_optional_fields_survive() {
    let msgs: Vec<Message> = lines()
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .collect();

    // partialJson on a tool call is kept as an unknown field.
    let Message::Assistant(a) = &msgs[2] else {
        panic!("line 3 is an assistant message")
    };
    let ContentBlock::ToolCall(call) = &a.content[2] else {
        panic!("block 2 is a tool call")
    };
    assert!(call.extra.contains_key("partialJson"));
    assert_eq!(call.arguments["range"], json!([1, 20.5]));
    assert_eq!(a.usage.total_tokens, None);
    assert_eq!(a.stop_reason, StopReason::ToolUse);

    // details: absent, object, null.
    let details: Vec<Option<Value>> = msgs[3..6]
        .iter()
        .map(|m| match m {
            Message::ToolResult(r) => r.details.clone(),
            _ => panic!("tool result expected"),
        })
        .collect();
    assert_eq!(details[0], None);
    assert!(details[1].as_ref().is_some_and(Value::is_object));
    assert_eq!(details[2], Some(Value::Null));

    // Unknown stop reasons and newer assistant fields.
    let Message::Assistant(a) = &msgs[8] else {
        panic!()
    };
    assert_eq!(a.stop_reason, StopReason::Other("pending".into()));
    assert_eq!(a.error_message, None);
    assert_eq!(a.extra.get("errorMessage"), Some(&Value::Null));
    assert_eq!(a.extra["responseId"], "resp_123");

    // Unknown blocks and roles are kept.
    let Message::Assistant(a) = &msgs[9] else {
        panic!()
    };
    assert_eq!(a.content[2].block_type(), "audio");
    assert!(matches!(&a.content[2], ContentBlock::Unknown(_)));
    assert_eq!(msgs[10].role(), "system");
    assert!(
        matches!(&msgs[0], Message::User(u) if u.content == UserContent::Text("plain string content".into()))
    );
    assert_eq!(msgs[11].timestamp(), Some(9_007_199_254_740_993));
}

#[test]
fn typed_field_wins_over_a_null_leftover() {
    let line = lines().nth(8).unwrap().1;
    let mut msg: AssistantMessage = serde_json::from_str(line).unwrap();
    msg.error_message = Some("now set".into());
    let written = serde_json::to_string(&msg).unwrap();
    assert_eq!(written.matches("errorMessage").count(), 1, "{written}");
    let back: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(back["errorMessage"], "now set");
}

#[test]
fn context_round_trips() {
    let value = json!({
        "systemPrompt": "be brief",
        "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
        "tools": [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
        "extraKey": 1.5
    });
    let ctx = Context::from_value(value.clone()).unwrap();
    assert_eq!(ctx.tools.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        json_diff(&value, &serde_json::to_value(&ctx).unwrap()),
        None
    );

    let bare = json!({"messages": []});
    let ctx = Context::from_value(bare.clone()).unwrap();
    assert_eq!(ctx.system_prompt, None);
    assert_eq!(serde_json::to_value(&ctx).unwrap(), bare);
}
