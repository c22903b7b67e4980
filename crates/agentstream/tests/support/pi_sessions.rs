//! What the Pi-oracle tests of sessions share (`compaction_oracle.rs`,
//! `policies_oracle.rs`): the files under `tests/fixtures/pi-sessions`,
//! read.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentstream::session::{parse_session, ParsedSession};
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
