//! The CLI on hostile input: out-of-range arguments, endless files,
//! terminal escape sequences from a server, and the two `decode` modes
//! agreeing. Each case is the exact input an adversarial pass found.

use std::path::PathBuf;
use std::process::{Command, Output};

use agentstream_testkit::http::{MockServer, Reply};
use serde_json::json;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn scratch(name: &str, contents: &[u8]) -> String {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "hostile"].iter().collect();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write");
    path.display().to_string()
}

#[test]
fn out_of_range_arguments_are_usage_errors_not_panics() {
    let chat = [
        "chat",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ];
    for (flag, value) in [
        ("--idle-timeout", "1e300"),
        ("--connect-timeout", "1e20"),
        ("--idle-timeout", "1e-10"),
        ("--connect-timeout", "0"),
        ("--idle-timeout", "NaN"),
        ("--idle-timeout", "-1"),
    ] {
        let mut args = chat.to_vec();
        let argument = format!("{flag}={value}");
        args.extend([argument.as_str(), "hi"]);
        let output = run(&args);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{stderr}");
    }
    for calls in ["18446744073709551615", "100000000", "0"] {
        let output = run(&["play", "--calls", calls]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{calls}: {stderr}");
        assert!(stderr.contains("--calls"), "{stderr}");
    }
    // The largest count plays, one context at a time.
    let output = run(&["play", "--calls", "3"]);
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn an_endless_file_is_refused_at_its_first_line() {
    for (args, message) in [
        (&["validate"][..], "/dev/zero:1: error: the line is longer than 64 MiB"),
        (&["normalize"][..], "/dev/zero:1: error: the line is longer than 64 MiB"),
        (
            &["decode"][..],
            "/dev/zero:1: error: response limit exceeded: an SSE line is longer than max_line_bytes (8388608)",
        ),
        (
            &["decode", "--chunks"][..],
            "/dev/zero:1: error: response limit exceeded: an SSE event carries more data than max_event_data_bytes (8388608)",
        ),
        (&["play"][..], "/dev/zero:1: error: the file is larger than 256 MiB"),
    ] {
        let mut args = args.to_vec();
        args.push("/dev/zero");
        let output = run(&args);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end(), message, "{args:?}");
    }
}

#[test]
fn decode_chunks_agrees_with_sse_on_a_bom_and_payloads_after_done() {
    let payloads = [
        json!({"choices": [{"index": 0, "delta": {"content": "hi"}}]}).to_string(),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string(),
        "[DONE]".to_string(),
        json!({"choices": [{"index": 0, "delta": {"content": "late"}}]}).to_string(),
    ];
    let mut chunks = b"\xEF\xBB\xBF".to_vec();
    let mut sse = b"\xEF\xBB\xBF".to_vec();
    for payload in &payloads {
        chunks.extend_from_slice(format!("{payload}\n").as_bytes());
        sse.extend_from_slice(format!("data: {payload}\n\n").as_bytes());
    }
    let chunks = run(&["decode", "--chunks", &scratch("bom.chunks", &chunks)]);
    let sse = run(&["decode", &scratch("bom.sse", &sse)]);
    assert_eq!(chunks.status.code(), Some(0), "{:?}", text(&chunks));
    assert_eq!(sse.status.code(), Some(0), "{:?}", text(&sse));
    assert_eq!(text(&chunks), text(&sse));
    let (stdout, _) = text(&sse);
    assert!(
        stdout.contains(" → done\nhi\nstopReason: stop\n"),
        "{stdout}"
    );
}

#[test]
fn escape_sequences_in_a_provider_error_are_printed_escaped() {
    let hostile = "bad\x1b]0;title\x07\x1b[2J";
    let body = json!({"error": {"message": hostile}});
    let server = MockServer::start(move |_| Reply::json(500, &[], &body)).expect("server");
    let output = run(&[
        "chat",
        "--base-url",
        &server.base_url(),
        "--model",
        "m",
        "--api-key-env",
        "AGENTSTREAM_TEST_UNSET_KEY",
        "hi",
    ]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        !stderr.contains('\x1b') && !stdout.contains('\x1b'),
        "{stderr:?}"
    );
    assert!(
        stderr.contains("bad\\u{1b}]0;title\\u{7}\\u{1b}[2J"),
        "{stderr:?}"
    );
}

#[test]
fn escape_sequences_in_a_scripted_error_message_are_printed_escaped() {
    let script = json!([{"stopReason": "error", "errorMessage": "x\x1b[2Jy\nz"}]).to_string();
    let output = run(&["play", &scratch("escape.json", script.as_bytes())]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout.contains("errorMessage: x\\u{1b}[2Jy\\nz\n"),
        "{stdout:?}"
    );
}

#[test]
fn a_lone_surrogate_in_a_pi_log_is_a_diagnostic_and_the_rest_is_checked() {
    // What JavaScript's JSON.stringify writes for half an emoji, then a
    // whole one, then a line with an unrelated finding.
    let log = concat!(
        r#"{"type":"session","id":"s"}"#,
        "\n",
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"half \ud83d"}],"timestamp":1}}"#,
        "\n",
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"whole \ud83d\ude00"}],"timestamp":2}}"#,
        "\n",
        r#"{"type":"message","message":{"role":"toolResult","toolCallId":"c9","toolName":"ls","content":[],"isError":false,"timestamp":3}}"#,
        "\n",
    );
    let output = run(&["validate", &scratch("surrogate.jsonl", log.as_bytes())]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].ends_with(
            "surrogate.jsonl:2: lone-surrogate a lone UTF-16 surrogate in the string at $.message.content[0].text was replaced by U+FFFD"
        ),
        "{stdout}"
    );
    assert!(lines[1].contains(":4: orphan-tool-result"), "{stdout}");
    assert_eq!(
        lines[2],
        "summary: 3 messages, 2 diagnostics, 0 round-trip mismatches, 0 errors"
    );
    // normalize writes the replacement character.
    let output = run(&["normalize", &scratch("surrogate2.jsonl", log.as_bytes())]);
    let (stdout, _) = text(&output);
    assert!(stdout.contains("half \u{fffd}"), "{stdout}");
    assert!(stdout.contains("whole 😀"), "{stdout}");
}
