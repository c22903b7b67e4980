//! `agentstream serve` at run time: an empty script is valid, a script
//! posted to `/v1/script` (for the server or one test id) is played, and
//! a bad one is refused over HTTP with the text the CLI prints for the
//! same bad file.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};
use support::serve;

/// Writes `contents` to a fresh file under the target directory.
fn file(name: &str, contents: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve-control"]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// `POST {url}{path}` with `body` (and the test header when given), over
/// a plain HTTP/1.0 connection (the answer unchunked): the status and
/// the JSON body.
fn post(url: &str, path: &str, test: Option<&str>, body: &str) -> (u16, Value) {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    let mut stream = TcpStream::connect(&address).unwrap();
    let test = test.map_or(String::new(), |t| format!("x-agentstream-test: {t}\r\n"));
    write!(
        stream,
        "POST /v1{path} HTTP/1.0\r\nhost: {address}\r\ncontent-type: application/json\r\n{test}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A Chat Completions call: the status and the answer's text.
fn call(url: &str, test: Option<&str>) -> (u16, String) {
    let body = json!({"messages": [{"role": "user", "content": "hi"}]}).to_string();
    let (status, body) = post(url, "/chat/completions", test, &body);
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (status, text)
}

#[test]
fn an_empty_script_serves_what_is_posted_later() {
    let script = file("empty.json", "[]");
    let (_served, url) = serve(&[script.as_os_str(), "--max-test-ids".as_ref(), "4".as_ref()]);
    assert_eq!(call(&url, None).0, 400, "past the end of []");
    let (status, answer) = post(&url, "/script", Some("t1"), r#"["for t1"]"#);
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": "t1", "rules": 0, "turns": 1, "appended": false})
        )
    );
    assert_eq!(call(&url, Some("t1")), (200, "for t1".into()));
    assert_eq!(call(&url, Some("t2")).0, 400, "t2 plays the server's []");
    assert_eq!(call(&url, None).0, 400);
}

#[test]
fn a_bad_posted_script_gets_the_text_of_a_bad_file() {
    let script = file("ok.json", "[]");
    let (_served, url) = serve(&[script.as_os_str()]);
    for (name, bad) in [
        (
            "bad-element.json",
            "[\"ok\",\n {\"httpError\": {\"status\": 200}}]",
        ),
        ("bad-rule.json", r#"{"rules": [{"reply": "x", "time": 1}]}"#),
        ("bad-json.json", "[\"ok\",\n"),
        ("not-a-list.json", "7"),
    ] {
        let path = file(name, bad);
        let output = Command::new(env!("CARGO_BIN_EXE_agentstream"))
            .arg("serve")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        let printed = stderr
            .trim_end()
            .strip_prefix(&format!("{}:", path.display()))
            .unwrap_or_else(|| panic!("{stderr}"));
        let (status, body) = post(&url, "/script", None, bad);
        assert_eq!(status, 400, "{name}");
        assert_eq!(body["error"]["message"], printed, "{name}");
    }
}

#[test]
fn replay_with_upstream_records_what_it_misses() {
    let script = file("upstream.json", r#"["from upstream", "again"]"#);
    let (_upstream, upstream_url) = serve(&[script.as_os_str()]);
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve-control", "misses"]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_served, url) = serve(&[
        "--replay".as_ref(),
        dir.as_os_str(),
        "--upstream".as_ref(),
        upstream_url.as_ref(),
    ]);
    assert_eq!(call(&url, None), (200, "from upstream".into()));
    // Replayed: the upstream's next turn ("again") is not asked for.
    assert_eq!(call(&url, None), (200, "from upstream".into()));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}
