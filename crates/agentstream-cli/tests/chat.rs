//! `agentstream chat` against the mock server on 127.0.0.1, run as a child
//! process.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use agentstream_testkit::http::{answer_payloads, sse_body, BodyEnd, MockServer, Reply};
use serde_json::json;

const KEY_VAR: &str = "AGENTSTREAM_TEST_CHAT_KEY";
const KEY: &str = "sk-chat-test-secret";

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

fn chat(server: &MockServer, extra: &[&str]) -> Command {
    let mut command = agentstream();
    command
        .args([
            "chat",
            "--base-url",
            &server.base_url(),
            "--model",
            "test-model",
        ])
        .args(["--api-key-env", KEY_VAR])
        .args(extra)
        .env(KEY_VAR, KEY);
    command
}

fn scratch(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "chat"].iter().collect();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn streams_text_and_usage_and_records_a_replayable_turn() {
    let body = sse_body(&answer_payloads(
        &["Thinking it over."],
        &["Hello", ", world!"],
    ));
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let record = scratch("recorded.json");
    let output = chat(
        &server,
        &["--record", record.to_str().unwrap(), "Say hello"],
    )
    .output()
    .expect("run");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Thinking it over.\nHello, world!\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("usage: input=11 output=7 cacheRead=0 totalTokens=18"),
        "{stdout}"
    );
    assert!(stdout.contains("stopReason: stop"), "{stdout}");
    // Not a terminal: no colours. The key is never printed.
    assert!(!stdout.contains('\x1b'));
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let bearer = format!("Bearer {KEY}");
    assert_eq!(requests[0].header("authorization"), Some(bearer.as_str()));
    assert_eq!(
        requests[0].json()["messages"][0],
        json!({"role": "user", "content": "Say hello"})
    );

    // The recording is a one-element script that `play` replays.
    let script: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).expect("recorded")).expect("json");
    assert_eq!(script.as_array().map(Vec::len), Some(1));
    let played = agentstream()
        .arg("play")
        .arg(&record)
        .output()
        .expect("play");
    let (played_out, played_err) = text(&played);
    assert!(played.status.success(), "{played_err}");
    assert!(played_out.contains("Hello, world!"), "{played_out}");
}

#[test]
fn an_http_error_is_reported_and_fails() {
    let server = MockServer::start(|_| {
        Reply::json(
            429,
            &[("retry-after", "3")],
            &json!({"error": {"message": "Slow down"}}),
        )
    })
    .expect("server");
    let output = chat(&server, &["hi"]).output().expect("run");
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("HTTP 429 Too Many Requests: Slow down; retry after 3"),
        "{stderr}"
    );
    assert!(stdout.contains("stopReason: error"), "{stdout}");
}

#[test]
fn ctrl_c_aborts_cleanly() {
    let payloads = answer_payloads(&[], &["partial answer"]);
    let body = sse_body(&payloads[..2]);
    let server = MockServer::start(move |_| {
        Reply::sse(vec![body.clone()]).with_end(BodyEnd::KeepAlive(Duration::from_millis(10)))
    })
    .expect("server");
    let mut child = chat(&server, &["hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("partial answer") {
        let n = stdout.read(&mut buf).expect("read");
        assert!(
            n > 0,
            "chat ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    stdout.read_to_end(&mut seen).expect("read");
    let exit = child.wait().expect("wait");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let stdout = String::from_utf8_lossy(&seen);
    assert_eq!(exit.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("stopReason: aborted"), "{stdout}");
    assert!(stderr.contains("Request was aborted"), "{stderr}");
}
