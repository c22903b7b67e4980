//! The differential test against the real Pi (pi-coding-agent 0.73.1):
//! for every session file under `tests/fixtures/pi-sessions/{corpus,real}`,
//! `FILE.pi.json` holds what Pi's `buildSessionContext` and `convertToLlm`
//! return for the default leaf and every entry, and the shape of Pi's
//! `getTree()`, as `oracle/pi-coding-agent/contexts.mjs` printed them
//! (`.ci/pi-sessions-oracle.sh` checks they are still Pi's). Ours must be
//! equal under JavaScript semantics.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]

use std::path::Path;

use agentstream::message::json_diff;
use agentstream::session::{
    build_session_context, convert_to_llm, parse_session, Leaf, SessionEntry, SessionTree,
};
use serde_json::{json, Value};

fn fixtures() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-sessions");
    let mut files = Vec::new();
    for dir in ["corpus", "real"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The tree as `contexts.mjs` prints it: preorder `[depth, id, label]`.
fn tree_rows(entries: &[SessionEntry]) -> Value {
    let tree = SessionTree::new(entries);
    let shape = tree.shape();
    let labels = tree.labels();
    let mut rows = Vec::new();
    let mut stack: Vec<(usize, usize)> = shape.roots.iter().rev().map(|&i| (0, i)).collect();
    while let Some((depth, i)) = stack.pop() {
        let id = entries[i].id().unwrap_or_default();
        rows.push(json!([depth, id, labels.get(id)]));
        for &c in shape.children[i].iter().rev() {
            stack.push((depth + 1, c));
        }
    }
    Value::Array(rows)
}

#[test]
fn contexts_equal_pi_for_every_leaf() {
    let (mut equal, mut total, mut files) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in fixtures() {
        files += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let golden: Value =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("pi.json")).unwrap())
                .unwrap();
        let session = parse_session(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let entries: Vec<SessionEntry> = session
            .entries
            .into_iter()
            .filter(|e| !matches!(e, SessionEntry::Session(_)))
            .collect();
        assert_eq!(
            golden["entries"],
            json!(entries.len()),
            "{name}: entry count"
        );
        for record in golden["contexts"].as_array().unwrap() {
            total += 1;
            let leaf = match record["leaf"].as_str() {
                Some(id) => Leaf::Id(id),
                None => Leaf::Last,
            };
            let ours = build_session_context(&entries, leaf).unwrap();
            let context = serde_json::to_value(&ours).unwrap();
            let llm = serde_json::to_value(convert_to_llm(&ours.messages)).unwrap();
            let diff = json_diff(&record["context"], &context)
                .map(|d| format!("context: {d}"))
                .or_else(|| json_diff(&record["llm"], &llm).map(|d| format!("llm: {d}")));
            match diff {
                None => equal += 1,
                Some(d) => failures.push(format!("{name} leaf {}: {d}", record["leaf"])),
            }
        }
        if !golden["tree"].is_null() {
            let rows = tree_rows(&entries);
            if let Some(d) = json_diff(&golden["tree"], &rows) {
                failures.push(format!("{name} tree: {d}"));
            }
        }
    }
    println!("{files} files, {equal}/{total} contexts equal to Pi's");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        files >= 11 && total >= 90,
        "the corpus is missing: {files} files, {total} contexts"
    );
}
