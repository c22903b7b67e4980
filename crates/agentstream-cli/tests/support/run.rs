//! What the tests that run `agentstream` once per call share: the run, its
//! output as text, and input files under the target directory.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `agentstream ARGS...` to its end.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Output bytes as text (the binary writes UTF-8).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Writes `contents` to a fresh file `name` under the target directory's
/// folder `dir`; returns its path.
pub fn file(dir: &str, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), dir].iter().collect();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The event types of a tool-call turn (text, then a `read` call) and its
/// answer: the demo's trace, and chapter 04's first turn with its call.
pub const TOOL_TURN_THEN_ANSWER: [&str; 8] = [
    "start",
    "text_delta",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "start",
    "text_delta",
    "done",
];
