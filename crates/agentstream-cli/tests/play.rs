//! `agentstream play`: the demo, exhaustion, pre-cancellation, JSON output,
//! contexts, and one clear error per bad script.

use std::path::PathBuf;

use serde_json::Value;

#[path = "support/run.rs"]
mod run_support;
use run_support::{run, text, TOOL_TURN_THEN_ANSWER};

/// Writes `contents` to a fresh file under the target directory.
fn file(name: &str, contents: &str) -> String {
    run_support::file("play", name, contents)
        .display()
        .to_string()
}

const DEMO_TRACE: &str = "start → text_delta → toolcall_delta → toolcall_end → done
Let me read the README first.
start → text_delta → done
The README describes agentstream: an event stream, a message IR and a scripted model.
";

#[test]
fn the_builtin_demo_and_the_example_script_give_the_same_trace() {
    let demo = run(&["play"]);
    assert_eq!(demo.status.code(), Some(0), "{}", text(&demo.stderr));
    assert_eq!(text(&demo.stdout), DEMO_TRACE);
    let example: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "examples",
        "two-turns.json",
    ]
    .iter()
    .collect();
    let scripted = run(&["play", &example.display().to_string()]);
    assert_eq!(text(&scripted.stdout), DEMO_TRACE);
}

#[test]
fn more_calls_than_turns_shows_exhaustion_and_abort_call_shows_pre_cancellation() {
    let o = run(&["play", "--calls", "3"]);
    let out = text(&o.stdout);
    assert!(
        out.ends_with("error\n\nerrorMessage: ScriptedModel has no more responses\n"),
        "{out}"
    );
    let o = run(&["play", "--abort-call", "2"]);
    let out = text(&o.stdout);
    assert!(out.starts_with("start → text_delta → toolcall_delta → toolcall_end → done\n"));
    assert!(
        out.ends_with("error\n\nerrorMessage: Request was aborted\n"),
        "{out}"
    );
}

#[test]
fn jsonl_prints_every_event_in_pi_shape() {
    let o = run(&["play", "--jsonl"]);
    let events: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, TOOL_TURN_THEN_ANSWER);
    // The default (short) trace shows a streaming call as chapter 04 does:
    // `arguments: {}` and the JSON text as `rawArguments`.
    let streaming = &events[2]["partial"]["content"][1];
    assert_eq!(streaming["arguments"], serde_json::json!({}));
    assert_eq!(streaming["rawArguments"], r#"{"path":"README.md"}"#);
    assert_eq!(events[3]["toolCall"]["arguments"]["path"], "README.md");
}

#[test]
fn contexts_make_one_call_each_and_failure_turns_keep_their_text() {
    let script = file(
        "failure.json",
        r#"[{"stopReason": "error", "errorMessage": "rate limited", "partialText": "Work"}]"#,
    );
    let contexts = file(
        "contexts.json",
        r#"[{"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
            {"systemPrompt": "be brief", "messages": []}]"#,
    );
    let o = run(&["play", &script, "--contexts", &contexts]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "start → text_delta → error\nWork\nerrorMessage: rate limited\n\
         error\n\nerrorMessage: ScriptedModel has no more responses\n"
    );
}

fn assert_bad_script(name: &str, script: &str, expected: &str) {
    let path = file(name, script);
    let o = run(&["play", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stdout), "");
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "one error line: {err}");
    assert!(
        err.starts_with(&format!("{path}:")),
        "names the file: {err}"
    );
    assert!(err.contains(expected), "{err} should contain {expected}");
}

#[test]
fn bad_scripts_get_one_clear_error_naming_file_line_and_path() {
    assert_bad_script(
        "not-a-turn.json",
        "[\n 42\n]",
        "2: error: $[0]: expected a turn",
    );
    assert_bad_script(
        "unknown-stop.json",
        r#"[{"stopReason": "pending", "errorMessage": "x"}]"#,
        "$[0].stopReason",
    );
    assert_bad_script(
        "stop-failure.json",
        r#"[{"stopReason": "stop", "errorMessage": "x"}]"#,
        "$[0].stopReason: a failure turn's stopReason must be \"error\" or \"aborted\"",
    );
    assert_bad_script(
        "no-id.json",
        r#"[{"role": "assistant", "content": [{"type": "toolCall", "name": "read", "arguments": {}}],
            "api": "a", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}]"#,
        "$[0].content[0]: missing field `id`",
    );
    assert_bad_script("truncated.json", "[{\"stopReason\": \"err", "invalid JSON");
    assert_bad_script("object.json", "{}", "$: expected a JSON array of turns");
    let o = run(&["play", "/nonexistent/script.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("/nonexistent/script.json:1: error: cannot read file"));
}
