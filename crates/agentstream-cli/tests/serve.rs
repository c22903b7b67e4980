//! `agentstream serve` as a child process: the URL on the first line,
//! turns in order, a scripted HTTP error, the exhausted script's answer,
//! `--requests` appending JSON lines to an existing file, and bad scripts.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use agentstream::message::{user, Context, StopReason};
use agentstream::model::{Model, StreamOptions, EXHAUSTED_MESSAGE};
use agentstream_tokio::{AnthropicModel, OpenAiCompatModel};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::{json, Value};
use support::{serve, Served};

#[path = "support/run.rs"]
mod run_support;

/// Writes `contents` to a fresh file under the target directory.
fn file(name: &str, contents: &str) -> PathBuf {
    run_support::file("serve", name, contents)
}

fn message(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
           "api": "scripted", "provider": "scripted", "model": "scripted-cli",
           "usage": {"input": 3, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "stop", "timestamp": 0})
}

#[tokio::test(flavor = "current_thread")]
async fn serves_the_script_in_order_and_appends_the_requests() {
    let script = json!([
        message("one"),
        {"httpError": {"status": 429, "message": "Rate limit reached", "retryAfter": 1}},
        message("two"),
    ]);
    let script = file("script.json", &script.to_string());
    let requests = file("requests.jsonl", "{\"earlier\":true}\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("serve")
        .arg(&script)
        .args(["--chunks", "2", "--requests"])
        .arg(&requests)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let stdout = child.stdout.take().unwrap();
    let served = Served(child);
    let mut url = String::new();
    BufReader::new(stdout).read_line(&mut url).unwrap();
    let url = url.trim_end().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{url}"
    );

    let openai = OpenAiCompatModel::new(OpenAiConfig::new(url.clone(), "gpt-test")).unwrap();
    let anthropic = AnthropicModel::new(
        AnthropicConfig::new("claude-test").with_base_url(url.trim_end_matches("/v1")),
    )
    .unwrap();
    let context = Context::from_messages([user("hi").into()]);
    let first = openai
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(
        (first.text(), first.stop_reason),
        ("one".into(), StopReason::Stop)
    );
    assert_eq!((first.usage.input, first.usage.output), (3, 2));

    let limited = anthropic
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    let error = limited.error_message.unwrap_or_default();
    assert!(
        error.contains("429") && error.contains("Rate limit reached"),
        "{error}"
    );

    let second = anthropic
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(second.text(), "two");

    // The script is used up: HTTP 400 (a status the SDKs do not retry,
    // #37) with the documented message.
    let exhausted = openai
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(exhausted.stop_reason, StopReason::Error);
    let error = exhausted.error_message.unwrap_or_default();
    assert!(
        error.contains("400") && error.contains(EXHAUSTED_MESSAGE),
        "{error}"
    );

    // Each request is written before it is answered: the file is complete.
    drop(served);
    let lines: Vec<Value> = std::fs::read_to_string(&requests)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(
        lines[0],
        json!({"earlier": true}),
        "appended, not truncated"
    );
    let calls: Vec<(u64, &str)> = lines[1..]
        .iter()
        .map(|l| (l["call"].as_u64().unwrap(), l["api"].as_str().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            (0, "openai-completions"),
            (1, "anthropic-messages"),
            (2, "anthropic-messages"),
            (3, "openai-completions")
        ]
    );
    assert_eq!(lines[1]["context"]["messages"][0]["content"], "hi");
}

/// Runs `agentstream serve SCRIPT`, which must refuse the script (exit
/// status 2); its stderr as text and its stdout.
fn refused(script: &std::path::Path) -> (String, Vec<u8>) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("serve")
        .arg(script)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    (String::from_utf8(output.stderr).unwrap(), output.stdout)
}

#[test]
fn a_bad_script_exits_2_naming_the_path() {
    let script = file("bad.json", r#"[{"httpError": {"status": 200}}]"#);
    let (stderr, stdout) = refused(&script);
    assert!(stderr.contains("$[0].httpError.status"), "{stderr}");
    assert!(stdout.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn records_through_a_proxy_and_replays_from_the_cassettes() {
    let script = file(
        "proxied.json",
        &json!([message("from upstream")]).to_string(),
    );
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve", "cassettes"]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let ask = |url: String| async move {
        let model = OpenAiCompatModel::new(
            OpenAiConfig::new(url, "gpt-test").with_api_key("sk-cli-secret"),
        )
        .unwrap();
        model
            .stream(
                &Context::from_messages([user("hi").into()]),
                StreamOptions::default(),
            )
            .result()
            .await
    };
    let (upstream, upstream_url) = serve(&[script.as_os_str()]);
    let (proxy, proxy_url) = serve(&[
        "--upstream".as_ref(),
        upstream_url.as_ref(),
        "--record".as_ref(),
        dir.as_os_str(),
    ]);
    let live = ask(proxy_url).await;
    assert_eq!(live.text(), "from upstream", "{live:?}");
    drop((proxy, upstream));
    let request = std::fs::read_to_string(dir.join("0000/request.json")).unwrap();
    assert!(!request.contains("sk-cli-secret"), "{request}");
    assert!(request.contains("[redacted]"), "{request}");

    let (_replay, replay_url) = serve(&[
        "--replay".as_ref(),
        dir.as_os_str(),
        "--match".as_ref(),
        "order".as_ref(),
    ]);
    let again = ask(replay_url.clone()).await;
    assert_eq!(again.text(), "from upstream", "{again:?}");
    // The one cassette was used: strict order has none for a second call.
    let past = ask(replay_url).await;
    assert_eq!(past.stop_reason, StopReason::Error);
    assert!(past
        .error_message
        .unwrap_or_default()
        .contains("past the last of 1 cassettes"));
}

/// `serve --replay` says at startup, one line each, which entries of the
/// directory it did not load and why.
#[test]
fn replay_says_which_entries_it_did_not_load() {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve", "skipping"]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("0000")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a cassette").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("serve")
        .arg("--replay")
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    assert!(url.starts_with("http://"), "{url}");
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not loaded"))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].ends_with("0000: no request.json in it"),
        "{stderr}"
    );
    assert!(lines[1].ends_with("notes.txt: not a directory"), "{stderr}");
}

#[test]
fn a_bad_cassette_directory_exits_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(["serve", "--replay", "/nonexistent/agentstream-cassettes"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("/nonexistent/agentstream-cassettes"),
        "{stderr}"
    );
    // --upstream needs --record, and a script goes alone.
    let output = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(["serve", "--upstream", "http://127.0.0.1:9/v1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// One HTTP/1.1 exchange with the server at `url` (its `/v1` base) on a
/// connection of its own: the status and the JSON body (read to its
/// `content-length`).
fn exchange(url: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://").trim_end_matches("/v1");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} /v1{path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse().unwrap());
            }
        }
    }
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body).unwrap();
        }
        // Chunked: each chunk's size in hex on its line, then the chunk.
        None => loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let size = usize::from_str_radix(line.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            body.extend_from_slice(&chunk[..size]);
        },
    }
    (status, serde_json::from_slice(&body).unwrap())
}

/// An OpenAI chat call whose user says `text`.
fn ask_openai(url: &str, text: &str) -> (u16, Value) {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": text}]});
    exchange(url, "POST", "/chat/completions", &body.to_string())
}

#[test]
fn strict_rules_name_the_nearest_rule_and_unused_lists_the_rest() {
    let script = json!({
        "rules": [
            {"name": "weather", "match": {"lastUserText": "weather"}, "reply": "sunny"},
            {"name": "never", "match": {"lastUserText": "zzz"}, "reply": "z"},
        ],
        "turns": [message("ordered")],
    });
    let script = file("rules.json", &script.to_string());
    let (_strict, url) = serve(&[script.as_os_str(), "--strict".as_ref()]);
    assert_eq!(
        ask_openai(&url, "the weather?").1["choices"][0]["message"]["content"],
        "sunny"
    );
    assert_eq!(
        ask_openai(&url, "hello").1["choices"][0]["message"]["content"],
        "ordered"
    );
    let (status, body) = ask_openai(&url, "hello");
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "script_unmatched");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message
            .contains(r#"rules[0] ("weather"): lastUserText "hello" does not contain "weather""#),
        "{message}"
    );
    let (status, unused) = exchange(&url, "GET", "/unused", "");
    assert_eq!(status, 200);
    assert_eq!(
        unused,
        json!({"rules": [{"index": 1, "name": "never"}], "turns": []})
    );

    // Without --strict, the same call gets the plain past-the-end answer.
    let (_plain, url) = serve(&[script.as_os_str()]);
    ask_openai(&url, "hello");
    let (status, body) = ask_openai(&url, "hello");
    assert_eq!(
        (status, &body["error"]["message"]),
        (400, &json!(EXHAUSTED_MESSAGE))
    );
}

#[test]
fn a_bad_rule_exits_2_naming_the_rule_and_the_key() {
    let script = file(
        "bad_rule.json",
        r#"{"rules": [{"reply": "x"}, {"match": {"lastUser": "x"}, "reply": "y"}]}"#,
    );
    let (stderr, _) = refused(&script);
    assert!(stderr.contains("$.rules[1].match.lastUser"), "{stderr}");
    assert!(stderr.contains("unknown match key"), "{stderr}");
}

/// Runs `serve` recording into `dir` from an upstream nobody listens on,
/// with the option `flag` set to `value`.
fn record_from_nowhere(dir: &str, flag: &str, value: &str) -> std::process::Output {
    run_support::run(&[
        "serve",
        "--upstream",
        "http://127.0.0.1:9",
        "--record",
        dir,
        flag,
        value,
    ])
}

#[test]
fn replay_speed_is_a_finite_number_0_or_more() {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve-speed"]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.display().to_string();
    for bad in ["-1", "abc", "inf", "NaN"] {
        let o = run_support::run(&["serve", "--replay", &dir, &format!("--replay-speed={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            run_support::text(&o.stderr).contains("is not a speed"),
            "{bad}: {}",
            run_support::text(&o.stderr)
        );
    }
    // Without --replay it is refused too.
    let o = record_from_nowhere(&dir, "--replay-speed", "1");
    assert_eq!(o.status.code(), Some(2));
    assert!(run_support::text(&o.stderr).contains("give --replay DIR"));
}

#[test]
fn a_redact_pattern_that_is_not_a_regex_is_refused() {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "serve-redact"]
        .iter()
        .collect();
    let dir = dir.display().to_string();
    let o = record_from_nowhere(&dir, "--redact", "(");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        run_support::text(&o.stderr).contains("--redact \"(\""),
        "{}",
        run_support::text(&o.stderr)
    );
    // Only a recording server redacts.
    let o = run_support::run(&["serve", "--replay", &dir, "--redact", "x"]);
    assert_eq!(o.status.code(), Some(2));
}
