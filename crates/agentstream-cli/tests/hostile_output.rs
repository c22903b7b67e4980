//! What the CLI prints from hostile input (issue 26): `--jsonl=compact`
//! stays linear, the API key never reaches the output, `decode --chunks`
//! treats invalid UTF-8 as SSE mode does, and `chat --timeout` ends a
//! stream that pings forever.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use agentstream_testkit::http::{answer_payloads, sse_body, BodyEnd, MockServer, Reply};
use serde_json::{json, Value};

const KEY_VAR: &str = "AGENTSTREAM_TEST_HOSTILE_KEY";
const KEY: &str = "sk-hostile-test-secret-0123";

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

fn file(name: &str, contents: &[u8]) -> String {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "hostile-output"]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("scratch file");
    path.display().to_string()
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// An Anthropic body of `blocks` short text blocks.
fn many_blocks(blocks: usize) -> String {
    let mut body = String::new();
    let mut event = |payload: Value| {
        body.push_str(&format!("data: {payload}\n\n"));
    };
    event(json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}));
    for i in 0..blocks {
        event(
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
        );
        event(
            json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": format!("b{i}")}}),
        );
        event(json!({"type": "content_block_stop", "index": i}));
    }
    event(
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
    );
    event(json!({"type": "message_stop"}));
    body
}

#[test]
fn jsonl_compact_leaves_the_partial_out_but_keeps_the_final_message() {
    let path = file("blocks.sse", many_blocks(300).as_bytes());
    let decode = |shape: &str| {
        let output = agentstream()
            .args(["decode", "--api", "anthropic", shape, &path])
            .output()
            .expect("run");
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        stdout
    };
    let pi = decode("--jsonl");
    let compact = decode("--jsonl=compact");
    let (pi_events, compact_events) = (lines(&pi), lines(&compact));
    assert_eq!(pi_events.len(), compact_events.len());
    assert!(pi_events[1].get("partial").is_some());
    for (pi, compact) in pi_events.iter().zip(&compact_events) {
        assert!(compact.get("partial").is_none(), "{compact}");
        let mut without = pi.clone();
        if let Some(object) = without.as_object_mut() {
            object.remove("partial");
        }
        assert_eq!(&without, compact);
    }
    let last = compact_events.last().expect("a terminal event");
    assert_eq!(last["type"], "done");
    assert_eq!(
        last["message"]["content"].as_array().map(Vec::len),
        Some(300)
    );
    // Quadratic against linear: 300 blocks already differ a hundredfold.
    assert!(
        pi.len() > 50 * compact.len(),
        "{} {}",
        pi.len(),
        compact.len()
    );
    // `--jsonl` does not take the next word as its value.
    let output = agentstream()
        .args(["decode", "--api", "anthropic", "--jsonl", "compact"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn agent_and_play_take_jsonl_compact_too() {
    let output = agentstream()
        .args(["play", "--chunks", "40", "--jsonl=compact"])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let events = lines(&stdout);
    assert!(
        events.iter().all(|e| e.get("partial").is_none()),
        "{stdout}"
    );
    assert!(events.iter().any(|e| e["type"] == "done"), "{stdout}");

    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "hostile-output", "root"]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).expect("root");
    std::fs::write(dir.join("README.md"), "# Demo\n").expect("readme");
    let output = agentstream()
        .args([
            "agent",
            "--jsonl=compact",
            "--root",
            dir.to_str().unwrap_or("."),
        ])
        .arg("go")
        .output()
        .expect("run");
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let events = lines(&stdout);
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "message_update")
        .collect();
    assert!(!updates.is_empty(), "{stdout}");
    for update in updates {
        assert!(update.get("message").is_none(), "{update}");
        assert!(update["assistantMessageEvent"].get("partial").is_none());
    }
    let end = events
        .iter()
        .rfind(|e| e["type"] == "message_end")
        .expect("message_end");
    assert!(end["message"]["content"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
}

fn chat(server: &MockServer, extra: &[&str]) -> Output {
    agentstream()
        .args(["chat", "--base-url", &server.base_url(), "--model", "m"])
        .args(["--api-key-env", KEY_VAR])
        .args(extra)
        .env(KEY_VAR, KEY)
        .output()
        .expect("run")
}

#[test]
fn chat_never_prints_the_api_key_a_server_echoes() {
    // An error body echoing the request's headers.
    let server = MockServer::start(|request| {
        let headers = json!({
            "authorization": request.header("authorization").unwrap_or(""),
            "x-api-key": "other-secret-value",
        });
        Reply::json(
            400,
            &[],
            &json!({"error": {"message": format!("bad request; headers: {headers}")}}),
        )
    })
    .expect("server");
    let output = chat(&server, &["hi"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("bad request"), "{stderr}");
    assert!(!stderr.contains(KEY) && !stdout.contains(KEY), "{stderr}");
    assert!(!stderr.contains("other-secret-value"), "{stderr}");
    assert!(stderr.contains("[REDACTED]"), "{stderr}");

    // The key in the answer itself, cut between two deltas, live and as
    // JSON lines.
    let (head, tail) = KEY.split_at(9);
    let first = format!("your key is {head}");
    let second = format!("{tail}, right?");
    let body = sse_body(&answer_payloads(&[], &[&first, &second]));
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    for extra in [&[][..], &["--jsonl"][..], &["--jsonl=compact"][..]] {
        let mut args = extra.to_vec();
        args.push("hi");
        let output = chat(&server, &args);
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
        if extra.len() != 1 || extra[0] != "--jsonl=compact" {
            // Compact lines carry the key only in pieces and whole in the
            // final message.
            assert!(
                stdout.contains("your key is [REDACTED], right?"),
                "{stdout}"
            );
        }
        assert!(!stdout.contains(KEY), "{extra:?}: {stdout}");
    }
}

#[test]
fn decode_chunks_replaces_invalid_utf8_as_sse_mode_does() {
    // "é" cut after its first byte, inside a chunk's text.
    let payload = |text: &[u8]| {
        let mut line = b"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_vec();
        line.extend_from_slice(text);
        line.extend_from_slice(b"\"}}]}");
        line
    };
    let mut chunks = payload(b"caf\xC3");
    chunks.extend_from_slice(
        b"\n{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n[DONE]\n",
    );
    let mut sse = b"data: ".to_vec();
    sse.extend_from_slice(&payload(b"caf\xC3"));
    sse.extend_from_slice(b"\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let chunks = file("cut.chunks.jsonl", &chunks);
    let sse = file("cut.sse", &sse);
    let chunked = agentstream()
        .args(["decode", "--chunks", "--jsonl=compact", &chunks])
        .output()
        .expect("run");
    let streamed = agentstream()
        .args(["decode", "--jsonl=compact", &sse])
        .output()
        .expect("run");
    assert_eq!(chunked.status.code(), Some(0), "{:?}", text(&chunked));
    assert_eq!(chunked.stdout, streamed.stdout);
    assert!(
        text(&chunked).0.contains("caf\u{fffd}"),
        "{:?}",
        text(&chunked)
    );
}

#[test]
fn chat_timeout_ends_a_stream_that_pings_forever() {
    let payloads = answer_payloads(&[], &["so far"]);
    let body = sse_body(&payloads[..2]);
    let server = MockServer::start(move |_| {
        Reply::sse(vec![body.clone()]).with_end(BodyEnd::KeepAlive(Duration::from_millis(20)))
    })
    .expect("server");
    let output = chat(&server, &["--idle-timeout", "60", "--timeout", "0.5", "hi"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("so far"), "{stdout}");
    assert!(stdout.contains("stopReason: aborted"), "{stdout}");
    assert!(stderr.contains("longer than --timeout"), "{stderr}");
    let help = agentstream()
        .args(["chat", "--help"])
        .output()
        .expect("run");
    let help = text(&help).0;
    assert!(help.contains("`ping` events"), "{help}");
    assert!(help.contains("--timeout <SECONDS>"), "{help}");
}
