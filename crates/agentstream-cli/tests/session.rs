//! `agentstream session context|tree` on the core's session corpus, whose
//! `.pi.json` goldens are what the real Pi printed.

use std::path::PathBuf;
use std::process::{Command, Output};

use agentstream::message::json_diff;
use serde_json::Value;

fn corpus(name: &str) -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "agentstream",
        "tests",
        "fixtures",
        "pi-sessions",
        name,
    ]
    .iter()
    .collect()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn golden(file: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file.with_extension("pi.json")).unwrap()).unwrap()
}

#[test]
fn context_prints_pis_context_for_the_default_leaf_and_any_leaf() {
    for name in [
        "corpus/v3-compaction.jsonl",
        "corpus/v3-branch-summary.jsonl",
        "corpus/v3-app-roles.jsonl",
    ] {
        let file = corpus(name);
        let path = file.to_str().unwrap();
        let golden = golden(&file);
        for record in golden["contexts"].as_array().unwrap() {
            let mut args = vec!["session", "context", path];
            if let Some(leaf) = record["leaf"].as_str() {
                args.extend(["--leaf", leaf]);
            }
            let o = run(&args);
            assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
            let ours: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                json_diff(&record["context"], &ours),
                None,
                "{name} {}",
                record["leaf"]
            );
            args.push("--llm");
            let o = run(&args);
            let ours: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                json_diff(&record["llm"], &ours),
                None,
                "{name} {} --llm",
                record["leaf"]
            );
        }
    }
}

#[test]
fn an_unknown_leaf_or_a_file_without_header_is_an_error() {
    let file = corpus("corpus/v3-linear.jsonl");
    let o = run(&[
        "session",
        "context",
        file.to_str().unwrap(),
        "--leaf",
        "nope\u{1b}[2J",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("no entry has the id `nope\\u{1b}[2J`"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("agentstream-session-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("no-header.jsonl");
    std::fs::write(&bad, "{\"type\":\"message\"}\n").unwrap();
    let o = run(&["session", "tree", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not a session header"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tree_draws_branches_labels_and_escapes_controls() {
    let o = run(&[
        "session",
        "tree",
        corpus("corpus/v3-branches-labels.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(out.contains("├─ ") && out.contains("└─ "), "{out}");
    assert!(out.contains("assistant: Plan A [checkpoint]"), "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .ends_with("name: branchy  <- leaf"),
        "{out}"
    );

    let dir = std::env::temp_dir().join(format!("agentstream-session-tree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("controls.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"s\u001b]0;x\u0007","timestamp":"t","cwd":"/"}"#, "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"red \u001b[31m\nnext\u202e","timestamp":1}}"#, "\n",
        ),
    )
    .unwrap();
    let o = run(&["session", "tree", file.to_str().unwrap()]);
    let out = text(&o.stdout);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert_eq!(out.lines().count(), 2, "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn agent_session_starts_then_resumes_and_continue_finds_the_newest() {
    let dir =
        std::env::temp_dir().join(format!("agentstream-agent-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("README.md"), "# Title\n\nSome prose.\n").unwrap();
    let file = dir.join("s.jsonl");
    let agent = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentstream"));
        cmd.current_dir(&dir)
            .env("PI_CODING_AGENT_DIR", dir.join("agent-home"))
            .arg("agent")
            .args(extra)
            .arg("What is in the README?");
        cmd.output().unwrap()
    };
    let o = agent(&["--session", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The demo: the prompt, a read call, its result, the answer.
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 5);
    let o = agent(&["--session", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&["session", "context", file.to_str().unwrap(), "--llm"]);
    let messages: Value = serde_json::from_slice(&o.stdout).unwrap();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "assistant"].repeat(2)
    );

    // --continue: no session yet, so one is started under the agent dir;
    // the second run continues it.
    for _ in 0..2 {
        let o = agent(&["--continue"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let cwd = dir.canonicalize().unwrap().display().to_string();
    let safe = cwd.trim_start_matches('/').replace(['/', '\\', ':'], "-");
    let sessions = dir
        .join("agent-home")
        .join("sessions")
        .join(format!("--{safe}--"));
    let files: Vec<_> = std::fs::read_dir(&sessions).unwrap().collect();
    assert_eq!(files.len(), 1, "{sessions:?}");
    let path = files[0].as_ref().unwrap().path();
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 9);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With serde_json's `preserve_order` (on in the CLI's build), tool-call
/// arguments keep Pi's key order, so the serialized conversation of every
/// corpus file is Pi's byte for byte.
#[test]
fn serialized_conversations_equal_pis_byte_for_byte_with_key_order() {
    use agentstream::session::{
        build_session_context, convert_to_llm, parse_session, serialize_conversation, Leaf,
    };
    let golden: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus("compaction.pi.json")).unwrap())
            .unwrap();
    let mut compared = 0;
    for (name, want) in golden["serialized"].as_object().unwrap() {
        let dir = if name.starts_with("large") {
            "real"
        } else {
            "corpus"
        };
        let text = std::fs::read_to_string(corpus(&format!("{dir}/{name}"))).unwrap();
        let session = parse_session(&text).unwrap();
        let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
        let ours = serialize_conversation(&convert_to_llm(&ctx.messages));
        assert!(want["conversation"].as_str().unwrap() == ours, "{name}");
        compared += 1;
    }
    assert!(compared >= 11);
}

/// `agent --auto-retry`: a turn failing with a transient error (Pi's
/// patterns: overloaded) is retried and the run completes; without the
/// flag the same script ends in the error.
#[test]
fn agent_auto_retry_retries_a_transient_failure() {
    let dir = std::env::temp_dir().join(format!("agentstream-agent-retry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        r#"[{"stopReason": "error", "errorMessage": "529 overloaded_error: Overloaded"}, "Recovered."]"#,
    )
    .unwrap();
    let agent = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentstream"))
            .current_dir(&dir)
            .arg("agent")
            .args(["--jsonl"])
            .args(extra)
            .args([script.to_str().unwrap(), "hi"])
            .output()
            .unwrap()
    };
    let o = agent(&["--auto-retry", "--retry-base-delay-ms", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains(r#""type":"auto_retry_start""#), "{out}");
    assert!(out.contains(r#""success":true"#), "{out}");
    assert!(out.contains("Recovered."), "{out}");
    let o = agent(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(!text(&o.stdout).contains("auto_retry_start"));
    // The retry settings need the flag.
    let o = agent(&["--max-retries", "2"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `agent --auto-compact` on a session: once the answer's usage passes the
/// window less the reserve, the session is compacted (the summary asked of
/// the same model) and a `compaction` entry is written; without a session
/// the flag is refused.
#[test]
fn agent_auto_compact_writes_a_compaction_entry() {
    let dir =
        std::env::temp_dir().join(format!("agentstream-agent-compact-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.jsonl");
    let answer = |text: &str, total: u64| {
        serde_json::json!({"role": "assistant", "stopReason": "stop",
            "content": [{"type": "text", "text": text}],
            "usage": {"input": total - 10, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": total,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
    };
    let long = "word ".repeat(400);
    let turns = serde_json::json!([
        answer(&long, 500),
        answer(&long, 900),
        answer("## Goal\nA summary.", 100)
    ]);
    let script = dir.join("script.json");
    std::fs::write(&script, turns.to_string()).unwrap();
    let agent = |extra: &[&str], prompt: &str| {
        Command::new(env!("CARGO_BIN_EXE_agentstream"))
            .current_dir(&dir)
            .arg("agent")
            .args(["--jsonl", "--session", file.to_str().unwrap()])
            .args([
                "--auto-compact",
                "--context-window",
                "1000",
                "--reserve-tokens",
                "200",
            ])
            .args(["--keep-recent-tokens", "50"])
            .args(extra)
            .args([script.to_str().unwrap(), prompt])
            .output()
            .unwrap()
    };
    // The first run stays under the threshold (500 < 1000 - 200).
    let o = agent(&[], &"first question ".repeat(50));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("compaction_start"));
    // The script restarts each run: the second run's answer is turn 1
    // again, so give it the larger usage with a second script.
    // The cut falls inside the turn: Pi asks for the history's summary
    // and the turn prefix's.
    let turns = serde_json::json!([
        answer(&long, 900),
        answer("## Goal\nA summary.", 100),
        answer("The turn so far.", 100)
    ]);
    std::fs::write(&script, turns.to_string()).unwrap();
    let o = agent(&[], "second question");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains(r#""type":"compaction_start""#), "{out}");
    let end = out
        .lines()
        .find(|line| line.contains(r#""type":"compaction_end""#))
        .unwrap_or_else(|| panic!("no compaction_end in {out}"));
    assert!(!end.contains("errorMessage"), "{end}");
    let written = std::fs::read_to_string(&file).unwrap();
    let compaction = written
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|entry| entry["type"] == "compaction")
        .unwrap_or_else(|| panic!("no compaction entry in {written}"));
    assert!(compaction["summary"]
        .as_str()
        .unwrap()
        .contains("A summary."));
    // The prompts carry the wall clock, as Pi's do.
    let prompt = written
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|entry| entry["message"]["role"] == "user")
        .unwrap();
    assert!(prompt["message"]["timestamp"].as_u64().unwrap() > 1_600_000_000_000);
    // Without a session the flag is refused.
    let o = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .current_dir(&dir)
        .args(["agent", "--auto-compact", script.to_str().unwrap(), "hi"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("needs a session"));
    std::fs::remove_dir_all(&dir).unwrap();
}
