//! `agentstream agent` as a child process: the demo, the root confinement
//! of `read` and `ls` on a real temporary tree (with symlinks out of it),
//! cut files, escaped output, and a run against the mock server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agentstream_testkit::http::{answer_payloads, sse_body, MockServer, Reply};
use serde_json::{json, Value};

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

/// Runs `agentstream agent FLAGS --root ROOT SCRIPT PROMPT` to its end.
fn agent(root: &Path, flags: &[&str], script: &Path, prompt: &str) -> Output {
    agentstream()
        .arg("agent")
        .args(flags)
        .arg("--root")
        .arg(root)
        .arg(script)
        .arg(prompt)
        .output()
        .unwrap()
}

/// A fresh directory under the target's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "agent", name]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A root with a README, a subdirectory, a large file, a file with escape
/// sequences, and symlinks: one inside the root, two pointing out of it.
/// Next to the root (outside it) lies `secret.txt`.
fn tree(name: &str) -> PathBuf {
    let base = scratch(name);
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(
        root.join("README.md"),
        "# Demo project\n\nIt has a README.\n",
    )
    .unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inside").unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(200_000)).unwrap();
    std::fs::write(root.join("ansi.txt"), "\x1b]0;pwned\x07\x1b[2Jdone").unwrap();
    std::fs::write(base.join("secret.txt"), "TOP SECRET").unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(&base, root.join("up")).unwrap();
    std::os::unix::fs::symlink("sub/inner.txt", root.join("inner-link")).unwrap();
    root
}

/// A script whose first turn calls `calls` (id, tool, arguments) and whose
/// second answers "done".
fn script(dir: &Path, calls: &[(&str, &str, Value)]) -> PathBuf {
    use agentstream::message::{assistant, text, tool_call, StopReason};
    let first = assistant(
        calls
            .iter()
            .map(|(id, name, args)| tool_call(*id, *name, args.clone())),
        StopReason::ToolUse,
    );
    let turns = json!([first, assistant([text("done")], StopReason::Stop)]);
    let path = dir.join("script.json");
    std::fs::write(&path, turns.to_string()).unwrap();
    path
}

/// The `tool_execution_end` events of a `--jsonl` run, by call id:
/// (is_error, text).
fn ends(stdout: &str) -> Vec<(String, bool, String)> {
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|event| event["type"] == "tool_execution_end")
        .map(|event| {
            (
                event["toolCallId"].as_str().unwrap().to_owned(),
                event["isError"].as_bool().unwrap(),
                event["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_demo_reads_the_readme_from_the_root_and_answers_from_it() {
    let root = tree("demo");
    let output = agentstream()
        .args([
            "agent",
            "--root",
            root.to_str().unwrap(),
            "What is in the README?",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        concat!(
            "turn 1\n",
            "  user: What is in the README?\n",
            "  assistant: Let me read README.md.\n",
            "  tool call: read {\"path\":\"README.md\"}\n",
            "  tool result: # Demo project\\n\\nIt has a README.\\n\n",
            "\n",
            "turn 2\n",
            "  assistant: README.md has 3 lines. Its title is \"Demo project\", and it begins: It has a README.\n",
            "\n",
            "done: the run completed after 2 turns and 1 tool call; the last turn's text is the answer\n",
        )
    );
}

#[test]
fn the_demo_prints_pi_shaped_agent_events_with_jsonl() {
    let root = tree("demo-jsonl");
    let output = agentstream()
        .args(["agent", "--jsonl", "--root", root.to_str().unwrap(), "go"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let types: Vec<String> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("agent_start"));
    assert_eq!(types.last().map(String::as_str), Some("agent_end"));
    assert_eq!(types.iter().filter(|t| *t == "turn_end").count(), 2);
    assert_eq!(
        ends(&stdout),
        [(
            "call_0_1".into(),
            false,
            "# Demo project\n\nIt has a README.\n".into()
        )]
    );
}

#[test]
fn paths_that_leave_the_root_are_refused_and_never_followed() {
    let root = tree("escapes");
    let script = script(
        root.parent().unwrap(),
        &[
            ("dotdot", "read", json!({"path": "../secret.txt"})),
            ("sneaky", "read", json!({"path": "sub/../../secret.txt"})),
            (
                "absolute",
                "read",
                json!({"path": root.parent().unwrap().join("secret.txt")}),
            ),
            ("symlink", "read", json!({"path": "escape"})),
            ("symlinked-dir", "ls", json!({"path": "up"})),
            ("inside-link", "read", json!({"path": "inner-link"})),
            ("listing", "ls", json!({})),
            ("missing", "read", json!({"path": "nope.txt"})),
        ],
    );
    let output = agent(&root, &["--jsonl"], &script, "try to escape");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stdout.contains("TOP SECRET"),
        "nothing outside the root is read"
    );
    let ends = ends(&stdout);
    let by_id = |id: &str| ends.iter().find(|e| e.0 == id).cloned().unwrap();
    for id in ["dotdot", "sneaky"] {
        let (_, is_error, text) = by_id(id);
        assert!(
            is_error && text.contains("\"..\" leaves the root"),
            "{id}: {text}"
        );
    }
    let (_, is_error, text) = by_id("absolute");
    assert!(
        is_error && text.contains("absolute paths are not allowed"),
        "{text}"
    );
    for id in ["symlink", "symlinked-dir"] {
        let (_, is_error, text) = by_id(id);
        assert!(
            is_error && text.contains("resolves outside the root"),
            "{id}: {text}"
        );
    }
    assert_eq!(
        by_id("inside-link"),
        ("inside-link".into(), false, "inside".into())
    );
    let (_, is_error, listing) = by_id("listing");
    assert!(!is_error);
    assert_eq!(
        listing.lines().collect::<Vec<_>>(),
        [
            "README.md",
            "ansi.txt",
            "big.txt",
            "escape@",
            "inner-link@",
            "sub/",
            "up@"
        ]
    );
    let (_, is_error, text) = by_id("missing");
    assert!(is_error && text.starts_with("nope.txt: "), "{text}");
}

#[test]
fn large_files_are_cut_with_a_note_and_escapes_are_shown_not_obeyed() {
    let root = tree("cut");
    let script = script(
        root.parent().unwrap(),
        &[
            ("big", "read", json!({"path": "big.txt"})),
            ("ansi", "read", json!({"path": "ansi.txt"})),
        ],
    );
    let jsonl = agent(&root, &["--jsonl"], &script, "read");
    let (stdout, _) = text(&jsonl);
    let (_, is_error, big) = ends(&stdout).into_iter().find(|e| e.0 == "big").unwrap();
    assert!(!is_error);
    assert!(
        big.ends_with("\n[cut: showing the first 65536 of 200000 bytes]"),
        "{}",
        &big[big.len() - 60..]
    );
    assert_eq!(
        big.len(),
        65536 + "\n[cut: showing the first 65536 of 200000 bytes]".len()
    );

    let summary = agent(&root, &[], &script, "read");
    let (stdout, stderr) = text(&summary);
    assert!(summary.status.success(), "{stderr}");
    assert!(
        !stdout.contains('\x1b') && !stdout.contains('\x07'),
        "{stdout:?}"
    );
    assert!(
        stdout.contains(r"  tool result: \u{1b}]0;pwned\u{7}\u{1b}[2Jdone"),
        "{stdout}"
    );
    assert!(
        stdout.contains("more characters)"),
        "the big result is abbreviated"
    );
    assert!(
        stdout.ends_with("  assistant: done\n\ndone: the run completed after 2 turns and 2 tool calls; the last turn's text is the answer\n"),
        "{stdout}"
    );
}

#[test]
fn a_bad_script_or_root_exits_2_with_a_message() {
    let dir = scratch("bad");
    let script = dir.join("bad.json");
    let mut turn = serde_json::to_value(agentstream::message::assistant(
        [],
        agentstream::message::StopReason::Stop,
    ))
    .unwrap();
    turn["stopReason"] = json!("sideways");
    std::fs::write(&script, json!([turn]).to_string()).unwrap();
    let output = agentstream()
        .args(["agent"])
        .arg(&script)
        .arg("hi")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).1.contains("stopReason"),
        "{}",
        text(&output).1
    );
    let output = agentstream()
        .args([
            "agent",
            "--root",
            dir.join("missing").to_str().unwrap(),
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("--root"));
}

/// The chunk payloads of a streamed call of `read("README.md")`.
fn tool_call_payloads() -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-tool",
            "object": "chat.completion.chunk",
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
        .to_string()
    };
    vec![
        chunk(json!({"role": "assistant"}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                "function": {"name": "read", "arguments": "{\"path\": \"README.md\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "[DONE]".to_owned(),
    ]
}

#[test]
fn base_url_runs_the_same_loop_against_an_openai_compatible_endpoint() {
    let root = tree("endpoint");
    let server = MockServer::start(|request| {
        let body = request.json();
        let has_result = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        if has_result {
            Reply::sse(vec![sse_body(&answer_payloads(
                &[],
                &["It is a demo project."],
            ))])
        } else {
            Reply::sse(vec![sse_body(&tool_call_payloads())])
        }
    })
    .expect("server");
    let output = agentstream()
        .args(["agent", "--root", root.to_str().unwrap()])
        .args(["--base-url", &server.base_url(), "--model", "test-model"])
        .args(["--api-key-env", "AGENTSTREAM_TEST_AGENT_NO_KEY"])
        .arg("What is in the README?")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        concat!(
            "turn 1\n",
            "  user: What is in the README?\n",
            "  tool call: read {\"path\":\"README.md\"}\n",
            "  tool result: # Demo project\\n\\nIt has a README.\\n\n",
            "\n",
            "turn 2\n",
            "  assistant: It is a demo project.\n",
            "\n",
            "done: the run completed after 2 turns and 1 tool call; the last turn's text is the answer\n",
        )
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "ls"]);
    let second = requests[1].json();
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_abc");
    assert!(tool_message["content"]
        .to_string()
        .contains("# Demo project"));
}

/// `--thinking` goes out on every call and into the session; a run that
/// resumes the session without the flag sends the level its branch last
/// set (Pi restores it), and a run without a session sends none.
#[test]
fn the_thinking_level_is_sent_recorded_and_restored_from_the_session() {
    let root = tree("thinking");
    let session = root.parent().unwrap().join("thinking.jsonl");
    let server =
        MockServer::start(|_| Reply::sse(vec![sse_body(&answer_payloads(&[], &["Fine."]))]))
            .expect("server");
    let run = |flags: &[&str]| {
        let output = agentstream()
            .args(["agent", "--root", root.to_str().unwrap()])
            .args(["--base-url", &server.base_url(), "--model", "test-model"])
            .args(["--api-key-env", "AGENTSTREAM_TEST_AGENT_NO_KEY"])
            .args(flags)
            .arg("Hello?")
            .output()
            .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stdout}\n{stderr}");
    };
    let levels = |session: &Path| -> Vec<String> {
        std::fs::read_to_string(session)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|entry| entry["type"] == "thinking_level_change")
            .map(|entry| entry["thinkingLevel"].as_str().unwrap().to_owned())
            .collect()
    };
    let on = ["--session", session.to_str().unwrap()];
    run(&[&on[..], &["--thinking", "high"]].concat());
    run(&on);
    run(&[&on[..], &["--thinking", "low"]].concat());
    run(&[]);
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .map(|request| request.json()["reasoning_effort"].clone())
        .collect();
    assert_eq!(
        sent,
        [json!("high"), json!("high"), json!("low"), Value::Null]
    );
    assert_eq!(levels(&session), ["high", "low"]);
}

#[test]
fn a_fifo_or_device_in_the_root_is_an_error_result_not_a_hang() {
    let root = tree("fifo");
    let made = Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let script = script(
        root.parent().unwrap(),
        &[
            ("pipe", "read", json!({"path": "pipe"})),
            ("pipe-ls", "ls", json!({"path": "pipe"})),
            ("readme", "read", json!({"path": "README.md"})),
        ],
    );
    // A hang guard, not a timing: the run takes milliseconds; were the
    // open to block, the process would never end by itself.
    let mut child = agentstream()
        .args(["agent", "--jsonl", "--tool-timeout", "30"])
        .args(["--root", root.to_str().unwrap()])
        .arg(&script)
        .arg("read the pipe")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("agent blocked on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    // The calls of a batch run in parallel and end in the order they
    // finish, which depends on the machine: compare them by call id.
    let mut ends = ends(&stdout);
    ends.sort();
    assert_eq!(
        ends,
        [
            ("pipe".into(), true, "pipe: not a file (a FIFO)".into()),
            (
                "pipe-ls".into(),
                true,
                "pipe: Not a directory (os error 20)".into()
            ),
            (
                "readme".into(),
                false,
                "# Demo project\n\nIt has a README.\n".into()
            ),
        ]
    );
}

#[test]
fn the_tool_time_limit_is_a_number_of_seconds_in_range() {
    for value in ["0", "-1", "NaN", "1e300", "soon"] {
        let output = agentstream()
            .args(["agent", &format!("--tool-timeout={value}"), "hi"])
            .output()
            .unwrap();
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{value}: {stderr}");
        assert!(stderr.contains("--tool-timeout"), "{stderr}");
    }
}

#[test]
fn a_failed_call_is_shown_with_its_error_and_how_the_run_stopped() {
    let dir = scratch("failed-call");
    let script = dir.join("fail.json");
    std::fs::write(
        &script,
        r#"[{"stopReason": "error", "errorMessage": "overloaded", "partialText": "Half"}]"#,
    )
    .unwrap();
    let output = agentstream()
        .args(["agent", "--root", dir.to_str().unwrap()])
        .arg(&script)
        .arg("hi")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stdout,
        concat!(
            "turn 1\n",
            "  user: hi\n",
            "  assistant: Half\n",
            "  error: overloaded\n",
            "\n",
            "stopped: the model call failed after 1 turn and 0 tool calls\n",
        )
    );
}
