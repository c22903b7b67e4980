//! Script turns in their short forms, through each subcommand that reads
//! scripts: `{"role": "assistant", "content": [...], "stopReason": ...}`
//! without `api`, `provider`, `model`, `usage` or `timestamp`, and a plain
//! string for a text turn, in `play`, `agent SCRIPT` and `serve`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use agentstream::message::{user, Context, StopReason};
use agentstream::model::{Model, StreamOptions};
use agentstream_tokio::OpenAiCompatModel;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::Value;

/// A tool call of `read("README.md")`, then a plain-string answer.
const SCRIPT: &str = r#"[
  {"role": "assistant",
   "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}}],
   "stopReason": "toolUse"},
  "It is a demo."
]"#;

/// A fresh directory under the target's scratch space, holding the script
/// and a README.
fn scratch(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "short-scripts", name]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("script.json"), SCRIPT).unwrap();
    std::fs::write(dir.join("README.md"), "# Demo\n").unwrap();
    dir
}

fn run(args: &[&str], dir: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn play_reads_the_short_forms() {
    let dir = scratch("play");
    let output = run(&["play", "script.json", "--jsonl"], &dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let done: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "done")
        .collect();
    assert_eq!(done.len(), 2, "{}", text(&output.stdout));
    for event in &done {
        let message = &event["message"];
        assert_eq!(message["api"], "scripted");
        assert_eq!(message["provider"], "scripted");
        assert_eq!(message["model"], "scripted");
        assert_eq!(message["timestamp"], 0);
        assert_eq!(message["usage"]["totalTokens"], 0);
    }
    assert_eq!(done[0]["reason"], "toolUse");
    assert_eq!(done[1]["reason"], "stop");
    assert_eq!(done[1]["message"]["content"][0]["text"], "It is a demo.");
}

#[test]
fn agent_reads_the_short_forms() {
    let dir = scratch("agent");
    let output = run(&["agent", "script.json", "What is in the README?"], &dir);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(
        stdout.contains("  tool call: read {\"path\":\"README.md\"}\n  tool result: # Demo\\n\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  assistant: It is a demo.\n"), "{stdout}");
}

/// Kills the server when the test ends, however it ends.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "current_thread")]
async fn serve_reads_the_short_forms() {
    let dir = scratch("serve");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(["serve", "script.json"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let stdout = child.stdout.take().unwrap();
    let _served = Served(child);
    let mut url = String::new();
    BufReader::new(stdout).read_line(&mut url).unwrap();
    let model = OpenAiCompatModel::new(OpenAiConfig::new(url.trim_end(), "gpt-test")).unwrap();
    let context = Context::from_messages([user("hi").into()]);
    let first = model
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{first:?}");
    let call = first.tool_calls().next().expect("a tool call");
    assert_eq!(
        (call.name.as_str(), call.arguments["path"].as_str()),
        ("read", Some("README.md"))
    );
    let second = model
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(second.stop_reason, StopReason::Stop, "{second:?}");
    assert_eq!(second.text(), "It is a demo.");
}
