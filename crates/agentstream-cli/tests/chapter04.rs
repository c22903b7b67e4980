//! Chapter 04's traces (`origin/ch04-scripted-model.zh.txt` in the shared
//! folder beside the repository; nothing here reads it) through the
//! binary, as a user meets them: `agentstream play` with the chapter's own
//! turns, its summary and its `--jsonl` events in Pi's JSON. The core's
//! `tests/chapter04.rs` checks the same sections through the Rust API.

use std::process::Command;

use serde_json::{json, Value};

#[path = "support/run.rs"]
mod run_support;
use run_support::TOOL_TURN_THEN_ANSWER;

/// Writes `script` to a fresh file and runs `agentstream play` on it with
/// `args`; its stdout (the run must succeed).
fn play(name: &str, script: &Value, args: &[&str]) -> String {
    let path = run_support::file("chapter04", name, script.to_string());
    let output = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("play")
        .arg(&path)
        .args(args)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// The `--jsonl` events of `script`.
fn events(name: &str, script: &Value, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--jsonl"];
    all.extend_from_slice(args);
    play(name, script, &all)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// The chapter's two turns: `text("先看")` with the `read` call `c1`, then
/// `text("第二轮")`.
fn two_turns() -> Value {
    json!([
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "先看"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}}
            ],
            "stopReason": "toolUse"
        },
        "第二轮"
    ])
}

/// "两次调用，各自拿到哪一轮", as the chapter prints it (with plain text
/// turns).
#[test]
fn two_calls_each_get_their_own_turn() {
    let out = play("two-calls.json", &json!(["先看", "第二轮"]), &[]);
    assert_eq!(
        out,
        "start → text_delta → done\n先看\nstart → text_delta → done\n第二轮\n"
    );
}

/// "纯文本消息怎样进入流".
#[test]
fn how_a_plain_text_message_enters_the_stream() {
    let events = events("plain.json", &json!(["先看"]), &[]);
    assert_eq!(types(&events), ["start", "text_delta", "done"]);
    assert_eq!(events[0]["partial"]["content"], json!([]));
    assert_eq!(events[0]["partial"]["stopReason"], "stop");
    assert_eq!(events[1]["contentIndex"], 0);
    assert_eq!(events[1]["delta"], "先看");
    assert_eq!(
        events[1]["partial"]["content"],
        json!([{"type": "text", "text": "先看"}])
    );
    assert_eq!(events[2]["reason"], "stop");
    assert_eq!(
        events[2]["message"]["content"],
        json!([{"type": "text", "text": "先看"}])
    );
}

/// "第一轮再加一个 tool call": the delta's partial holds the call with
/// `arguments: {}` and `rawArguments`; the end's holds the complete call.
#[test]
fn the_first_turn_gains_a_tool_call() {
    let events = events("tool-call.json", &two_turns(), &[]);
    assert_eq!(types(&events), TOOL_TURN_THEN_ANSWER);
    let delta = &events[2];
    assert_eq!(delta["contentIndex"], 1);
    assert_eq!(delta["delta"], r#"{"path":"README.md"}"#);
    assert_eq!(
        delta["partial"]["content"],
        json!([
            {"type": "text", "text": "先看"},
            {"type": "toolCall", "id": "c1", "name": "read",
             "arguments": {}, "rawArguments": r#"{"path":"README.md"}"#}
        ])
    );
    let end = &events[3];
    assert_eq!(end["contentIndex"], 1);
    assert_eq!(
        end["partial"]["content"],
        json!([
            {"type": "text", "text": "先看"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}}
        ])
    );
    assert_eq!(events[4]["reason"], "toolUse");
    assert_eq!(events[6]["delta"], "第二轮");
}

/// "三种失败仍然结束同一个流": an explicit error with partial text, one
/// without (`start → error`), the script running out and a pre-aborted
/// call (each a lone `error`).
#[test]
fn three_failures_still_end_the_same_stream() {
    let script = json!([
        {"stopReason": "error", "partialText": "正在", "errorMessage": "rate limited"},
        {"stopReason": "aborted", "errorMessage": "user cancelled"}
    ]);
    let out = play("failures.json", &script, &["--calls", "3"]);
    assert_eq!(
        out,
        "start → text_delta → error\n正在\nerrorMessage: rate limited\n\
         start → error\n\nerrorMessage: user cancelled\n\
         error\n\nerrorMessage: ScriptedModel has no more responses\n"
    );

    let events = events("failures.json", &script, &[]);
    assert_eq!(
        types(&events),
        ["start", "text_delta", "error", "start", "error"]
    );
    assert_eq!(events[2]["reason"], "error");
    assert_eq!(events[2]["error"]["errorMessage"], "rate limited");
    assert_eq!(events[4]["reason"], "aborted");
    assert_eq!(events[4]["error"]["content"], json!([]));
    assert_eq!(events[4]["error"]["stopReason"], "aborted");

    let out = play("pre-abort.json", &two_turns(), &["--abort-call", "1"]);
    assert_eq!(
        out,
        "error\n\nerrorMessage: Request was aborted\nerror\n\nerrorMessage: Request was aborted\n"
    );
}

/// With `--full`, the same turns in pi-ai's shape: the arguments parsed so
/// far and no `rawArguments`, and a lone `error` for a failure with
/// nothing streamed.
#[test]
fn full_sequence_shows_pis_shape_beside_the_chapters() {
    let events = events("full.json", &two_turns(), &["--full"]);
    let delta = events
        .iter()
        .find(|e| e["type"] == "toolcall_delta")
        .unwrap();
    assert_eq!(
        delta["partial"]["content"][1],
        json!({"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}})
    );
    let script = json!([{"stopReason": "aborted", "errorMessage": "user cancelled"}]);
    let out = play("full-failure.json", &script, &["--full"]);
    assert_eq!(out, "error\n\nerrorMessage: user cancelled\n");
}
