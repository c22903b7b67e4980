//! `agentstream chat --api anthropic` against the mock server, and
//! `decode --api anthropic` on generated bodies, run as child processes.

use std::path::PathBuf;
use std::process::{Command, Output};

use agentstream_testkit::http::anthropic_scenarios::answer_payloads;
use agentstream_testkit::http::{named_sse_body, MockServer, Reply};
use serde_json::json;

const KEY: &str = "sk-ant-chat-test-secret";

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "anthropic"].iter().collect();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

#[test]
fn chat_streams_from_the_messages_api_with_the_key_from_its_variable() {
    let body = named_sse_body(&answer_payloads());
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let output = agentstream()
        .args(["chat", "--api", "anthropic", "--base-url", &server.origin()])
        .args(["--model", "claude-test", "--max-tokens", "99", "Say hello"])
        .env("ANTHROPIC_API_KEY", KEY)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("The user greets me.\nHello, wörld — 👋\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"toolCall: toolu_1 wave {"to":"you"}"#),
        "{stdout}"
    );
    assert!(
        stdout.contains("usage: input=12 output=30 cacheRead=3 cacheWrite=2 totalTokens=47"),
        "{stdout}"
    );
    assert!(stdout.contains("stopReason: toolUse"), "{stdout}");
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    let body = requests[0].json();
    assert_eq!(body["max_tokens"], 99);
    // Pi's default cache retention, `short`, marks the last user block.
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

#[test]
fn chat_with_openai_needs_a_base_url() {
    let output = agentstream()
        .args(["chat", "--model", "m", "hi"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("--base-url is required"));
}

#[test]
fn decode_reads_anthropic_sse_and_payload_lines() {
    let payloads = answer_payloads();
    let sse = scratch("answer.sse");
    std::fs::write(&sse, named_sse_body(&payloads)).expect("write");
    let lines = scratch("answer.chunks.jsonl");
    let jsonl: String = payloads.iter().map(|p| format!("{p}  \n\n")).collect();
    std::fs::write(&lines, jsonl).expect("write");
    for args in [
        vec!["decode", "--api", "anthropic", sse.to_str().unwrap()],
        vec![
            "decode",
            "--api",
            "anthropic",
            "--chunks",
            lines.to_str().unwrap(),
        ],
    ] {
        let output = agentstream().args(&args).output().expect("run");
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{args:?}: {stdout}\n{stderr}");
        assert!(stdout.starts_with("start → thinking_start → "), "{stdout}");
        assert!(
            stdout.contains("thinking: 19 chars, signature 7 bytes"),
            "{stdout}"
        );
        assert!(stdout.contains("stopReason: toolUse"), "{stdout}");
    }
    // A line that is not JSON is an input error at its line.
    let bad = scratch("bad.chunks.jsonl");
    std::fs::write(&bad, "{\"type\":\"ping\"}\nnot json\n").expect("write");
    let output = agentstream()
        .args([
            "decode",
            "--api",
            "anthropic",
            "--chunks",
            bad.to_str().unwrap(),
        ])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output)
            .1
            .contains(":2: error: not a JSON chunk payload"),
        "{:?}",
        text(&output)
    );
}
