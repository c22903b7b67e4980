//! What the Pi-oracle tests of sessions share (`compaction_oracle.rs`,
//! `policies_oracle.rs`): the files under `tests/fixtures/pi-sessions`,
//! read.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentstream::session::{parse_session, ParsedSession, SessionEntry, SessionTree};
use serde_json::Value;

/// `tests/fixtures/pi-sessions`.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-sessions")
}

/// The oracle's printout `name` (such as `compaction.pi.json`), parsed.
pub fn golden(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(name)).unwrap()).unwrap()
}

/// A session file of the corpus (or the real one, `large…`) by name,
/// parsed.
pub fn load(name: &str) -> ParsedSession {
    let dir = if name.starts_with("large") {
        "real"
    } else {
        "corpus"
    };
    let path = root().join(dir).join(name);
    parse_session(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The default branch (root to the last entry) of a corpus or real file,
/// without its header.
pub fn branch(name: &str) -> Vec<SessionEntry> {
    let entries: Vec<SessionEntry> = load(name)
        .entries
        .into_iter()
        .filter(|e| !matches!(e, SessionEntry::Session(_)))
        .collect();
    let tree = SessionTree::new(&entries);
    match tree.last() {
        Some(leaf) => tree
            .path(leaf)
            .unwrap()
            .into_iter()
            .map(|i| entries[i].clone())
            .collect(),
        None => Vec::new(),
    }
}
