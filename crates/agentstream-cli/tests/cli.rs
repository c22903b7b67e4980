//! Runs the built `agentstream` binary on small hand-written fixtures.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", name]
        .iter()
        .collect();
    path.display().to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn a_valid_session_passes() {
    let o = run(&["validate", &fixture("valid-session.jsonl")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "summary: 4 messages, 0 diagnostics, 0 round-trip mismatches, 0 errors\n"
    );
    assert_eq!(stderr(&o), "");
}

#[test]
fn every_linkage_diagnostic_is_reported_with_its_line() {
    let f = fixture("diagnostics.jsonl");
    let o = run(&["validate", &f]);
    assert_eq!(o.status.code(), Some(1));
    let expected = [
        format!("{f}:3: duplicate-tool-call-id tool call id \"a\" was already used by the call at message index 1, block 0"),
        format!("{f}:4: tool-name-mismatch tool result for call \"a\" names tool \"write\" but the call at message index 1 named \"read\""),
        format!("{f}:5: duplicate-tool-result second tool result for call \"a\"; the first is message index 2"),
        format!("{f}:6: orphan-tool-result tool result for call \"zzz\" (read) answers no earlier tool call"),
        format!("{f}:3: unanswered-tool-call tool call \"b\" (ls) has no result before message index 5"),
        format!("{f}:7: tool-use-without-call stopReason is toolUse but the message has no tool call"),
        "summary: 6 messages, 6 diagnostics, 0 round-trip mismatches, 0 errors".to_string(),
    ];
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), expected);
}

#[test]
fn a_json_array_of_messages_reports_element_lines() {
    let f = fixture("messages.json");
    let o = run(&["validate", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "{f}:3: unanswered-tool-call tool call \"c1\" (ls) has no result before message index 2\n\
             summary: 3 messages, 1 diagnostics, 0 round-trip mismatches, 0 errors\n"
        )
    );
}

#[test]
fn truncated_json_exits_2_with_the_line() {
    let f = fixture("truncated.jsonl");
    let o = run(&["validate", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "{f}:3: error: invalid JSON: EOF while parsing a string"
        )),
        "{err}"
    );
    assert!(stdout(&o)
        .ends_with("summary: 1 messages, 0 diagnostics, 0 round-trip mismatches, 1 errors\n"));
}

#[test]
fn a_wrong_type_exits_2_with_the_line_and_json_path() {
    let f = fixture("wrong-type.jsonl");
    let o = run(&["validate", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!("{f}:2: error: $.message.usage.input: expected a non-negative integer, found a string\n")
    );
}

#[test]
fn a_missing_file_exits_2_and_other_files_are_still_read() {
    let missing = fixture("no-such-file.jsonl");
    let o = run(&["validate", &missing, &fixture("valid-session.jsonl")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("{missing}:1: error: cannot open file: ")),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    assert!(stdout(&o)
        .contains("summary: 4 messages, 0 diagnostics, 0 round-trip mismatches, 1 errors"));
}

#[test]
fn json_output_parses() {
    let o = run(&[
        "validate",
        "--json",
        &fixture("diagnostics.jsonl"),
        &fixture("wrong-type.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let records: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "diagnostic").count(), 6);
    assert_eq!(kinds.last(), Some(&"summary"));
    let first = &records[0];
    assert_eq!(first["code"], "duplicate-tool-call-id");
    assert_eq!(
        (first["line"].as_u64(), first["messageIndex"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(first["contentIndex"], 1);
    let error = records.iter().find(|r| r["kind"] == "error").unwrap();
    assert_eq!(error["path"], "$.message.usage.input");
    assert_eq!(error["line"], 2);
    let summary = records.last().unwrap();
    assert_eq!(summary["messages"], 6);
    assert_eq!(summary["diagnostics"], 6);
    assert_eq!(summary["roundTripMismatches"], 0);
    assert_eq!(summary["errors"], 1);
}

#[test]
fn normalize_round_trips_and_revalidates() {
    let input = fixture("valid-session.jsonl");
    let o = run(&["normalize", &input]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let original: Vec<Value> = std::fs::read_to_string(&input)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let normalized: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(normalized.len(), original.len());
    for (a, b) in original.iter().zip(&normalized) {
        assert_eq!(agentstream::message::json_diff(a, b), None, "{b}");
    }
    // Integral costs come out as integers, and the leftover key survives.
    assert!(stdout(&o).contains(r#""cacheRead":0,"cacheWrite":0,"total":0.00014099999999999998}"#));
    assert!(stdout(&o).contains(r#""partialJson""#));

    let out = std::env::temp_dir().join(format!(
        "agentstream-normalized-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&out, &o.stdout).unwrap();
    let again = run(&["validate", out.to_str().unwrap()]);
    let second = run(&["normalize", out.to_str().unwrap()]);
    std::fs::remove_file(&out).unwrap();
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(second.stdout, o.stdout, "normalize is idempotent");
}

#[test]
fn normalize_turns_a_message_array_into_json_lines() {
    let o = run(&["normalize", &fixture("messages.json")]);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[1]["usage"]["cost"]["total"].as_f64(),
        Some(0.30000000000000004)
    );
}

#[test]
fn normalize_reports_bad_input_with_exit_2() {
    let f = fixture("wrong-type.jsonl");
    let o = run(&["normalize", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!("{f}:2: error: $.message.usage.input: expected a non-negative integer, found a string\n")
    );
    assert_eq!(stdout(&o), "{\"type\":\"session\",\"id\":\"s-4\"}\n");
}

#[test]
fn usage_errors_come_from_clap() {
    let o = run(&["validate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("FILE"));
}
