//! Linkage validation: one test per diagnostic code, and valid conversations.

use agentstream::message::linkage::*;
use agentstream::message::{
    assistant, text, thinking, tool_call, tool_result, user, validate_linkage, Message, StopReason,
};
use serde_json::json;

fn codes(messages: &[Message]) -> Vec<(&'static str, usize, Option<usize>)> {
    validate_linkage(messages)
        .into_iter()
        .map(|d| (d.code, d.message_index, d.content_index))
        .collect()
}

fn call(id: &str, name: &str) -> agentstream::message::ContentBlock {
    tool_call(id, name, json!({"path": "README.md"}))
}

#[test]
fn a_valid_conversation_has_no_diagnostics() {
    let messages: Vec<Message> = vec![
        user("read two files").into(),
        assistant(
            [
                thinking("two reads"),
                call("c1", "read"),
                call("c2", "read"),
            ],
            StopReason::ToolUse,
        )
        .into(),
        tool_result("c2", "read", "b", false).into(),
        tool_result("c1", "read", "a", true).into(),
        assistant([text("done")], StopReason::Stop).into(),
        user("thanks").into(),
        assistant([text("bye")], StopReason::Stop).into(),
    ];
    assert_eq!(codes(&messages), []);
    assert_eq!(codes(&[]), []);
}

#[test]
fn orphan_tool_result() {
    let messages: Vec<Message> = vec![
        user("hi").into(),
        tool_result("c9", "read", "x", false).into(),
    ];
    assert_eq!(codes(&messages), [(ORPHAN_TOOL_RESULT, 1, None)]);
}

#[test]
fn a_result_before_its_call_is_an_orphan() {
    let messages: Vec<Message> = vec![
        tool_result("c1", "read", "x", false).into(),
        assistant([call("c1", "read")], StopReason::ToolUse).into(),
    ];
    assert_eq!(codes(&messages), [(ORPHAN_TOOL_RESULT, 0, None)]);
}

#[test]
fn tool_name_mismatch() {
    let messages: Vec<Message> = vec![
        assistant([call("c1", "read")], StopReason::ToolUse).into(),
        tool_result("c1", "write", "x", false).into(),
    ];
    assert_eq!(codes(&messages), [(TOOL_NAME_MISMATCH, 1, None)]);
}

#[test]
fn duplicate_tool_call_id_within_and_across_messages() {
    let messages: Vec<Message> = vec![
        assistant(
            [call("c1", "read"), call("c1", "read")],
            StopReason::ToolUse,
        )
        .into(),
        tool_result("c1", "read", "x", false).into(),
        assistant([text("again"), call("c1", "ls")], StopReason::ToolUse).into(),
        tool_result("c1", "ls", "x", false).into(),
    ];
    assert_eq!(
        codes(&messages),
        [
            (DUPLICATE_TOOL_CALL_ID, 0, Some(1)),
            (DUPLICATE_TOOL_CALL_ID, 2, Some(1))
        ]
    );
}

#[test]
fn duplicate_tool_result() {
    let messages: Vec<Message> = vec![
        assistant([call("c1", "read")], StopReason::ToolUse).into(),
        tool_result("c1", "read", "x", false).into(),
        tool_result("c1", "other", "x", false).into(),
    ];
    assert_eq!(codes(&messages), [(DUPLICATE_TOOL_RESULT, 2, None)]);
}

#[test]
fn unanswered_tool_call_when_a_user_or_assistant_follows() {
    let messages: Vec<Message> = vec![
        assistant(
            [text("x"), call("c1", "read"), call("c2", "read")],
            StopReason::ToolUse,
        )
        .into(),
        tool_result("c1", "read", "x", false).into(),
        user("stop").into(),
        assistant([call("c3", "read")], StopReason::Aborted).into(),
        assistant([text("y")], StopReason::Stop).into(),
    ];
    assert_eq!(
        codes(&messages),
        [
            (UNANSWERED_TOOL_CALL, 0, Some(2)),
            (UNANSWERED_TOOL_CALL, 3, Some(0))
        ]
    );
    let sentence = validate_linkage(&messages)[0].to_string();
    assert_eq!(
        sentence,
        "unanswered-tool-call tool call \"c2\" (read) has no result before message index 2"
    );
}

#[test]
fn calls_pending_at_the_end_are_not_reported_and_late_results_still_count() {
    let pending: Vec<Message> = vec![assistant([call("c1", "read")], StopReason::ToolUse).into()];
    assert_eq!(codes(&pending), []);

    let late: Vec<Message> = vec![
        assistant([call("c1", "read")], StopReason::ToolUse).into(),
        user("interrupt").into(),
        tool_result("c1", "read", "x", false).into(),
    ];
    assert_eq!(codes(&late), [(UNANSWERED_TOOL_CALL, 0, Some(0))]);
}

#[test]
fn tool_use_without_call() {
    let messages: Vec<Message> = vec![assistant([text("I will call")], StopReason::ToolUse).into()];
    assert_eq!(codes(&messages), [(TOOL_USE_WITHOUT_CALL, 0, None)]);
}

#[test]
fn unknown_roles_are_ignored_and_the_checker_is_incremental() {
    let system = Message::from_value(json!({"role": "system", "content": "x"})).unwrap();
    let mut checker = LinkageChecker::new();
    assert!(checker
        .check(&assistant([call("c1", "read")], StopReason::ToolUse).into())
        .is_empty());
    assert!(checker.check(&system).is_empty());
    assert!(checker
        .check(&tool_result("c1", "read", "x", false).into())
        .is_empty());
    assert_eq!(checker.messages_checked(), 3);
}
