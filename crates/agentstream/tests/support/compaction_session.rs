//! The session the compaction tests start from (`agent_auto_compaction.rs`,
//! `compaction_thinking.rs`): two long exchanges' worth of history (a long
//! first question and answer, then a short pair), written to a new
//! session file under the temporary directory.
#![allow(dead_code)]

use std::path::PathBuf;

use agentstream::message::{assistant, text, user, Message, StopReason};
use agentstream::session::{SessionRecorder, SessionWriter};

/// A recorder on that session, in a directory named after `prefix` and
/// `name` (removed first); the directory, for the caller to remove.
pub fn compaction_session(prefix: &str, name: &str) -> (SessionRecorder, PathBuf) {
    let dir = std::env::temp_dir().join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut w = SessionWriter::create(&dir, "/work/x");
    let long = "x".repeat(400);
    for m in [
        Message::from(user(format!("first {long}"))),
        assistant([text(format!("answer {long}"))], StopReason::Stop).into(),
        user("second").into(),
        assistant([text("fine")], StopReason::Stop).into(),
    ] {
        w.append_message(m.into()).unwrap();
    }
    (SessionRecorder::new(w), dir)
}
