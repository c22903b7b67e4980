//! Session files as an attacker or a crash writes them: cycles, missing
//! parents, duplicate ids, unknown and malformed entries, deep chains.

use agentstream::message::json_diff;
use agentstream::session::{
    build_session_context, parse_session, write_session, Leaf, SessionEntry, SessionError,
    SessionTree, TreeError,
};
use serde_json::{json, Value};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

fn msg(id: &str, parent: Value, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1}})
    .to_string()
}

#[test]
fn a_parent_cycle_is_an_error_not_a_hang() {
    let file = [
        HEADER.to_string(),
        msg("a", json!("b"), "x"),
        msg("b", json!("a"), "y"),
    ]
    .join("\n");
    let session = parse_session(&file).unwrap();
    let err = build_session_context(&session.entries, Leaf::Last).unwrap_err();
    assert!(matches!(err, TreeError::Cycle { .. }), "{err}");
    assert!(err.to_string().contains("loops back"));
    // Both entries are on the cycle: no root reaches them.
    let shape = SessionTree::new(&session.entries).shape();
    assert_eq!(shape.unreachable.len(), 2);
    // A self-parent is a root, as in Pi's getTree, but a cycle for the walk.
    let file = [HEADER.to_string(), msg("a", json!("a"), "x")].join("\n");
    let session = parse_session(&file).unwrap();
    assert!(build_session_context(&session.entries, Leaf::Last).is_err());
    assert_eq!(SessionTree::new(&session.entries).shape().roots, vec![1]);
}

#[test]
fn a_deep_chain_is_walked_without_recursion() {
    // Fewer under Miri, which runs this a thousand times slower, and on
    // wasm32-wasip1, where Node 20's WASI crashes at exit (SIGSEGV, about
    // one run in three) after a harness has grown its memory this far.
    let n = if cfg!(miri) {
        500
    } else if cfg!(target_family = "wasm") {
        10_000
    } else {
        50_000
    };
    let mut lines = vec![HEADER.to_string()];
    for i in 0..n {
        let parent = if i == 0 {
            Value::Null
        } else {
            json!(format!("{:08x}", i - 1))
        };
        lines.push(msg(&format!("{i:08x}"), parent, "m"));
    }
    let session = parse_session(&lines.join("\n")).unwrap();
    let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
    assert_eq!(ctx.messages.len(), n);
    let tree = SessionTree::new(&session.entries);
    assert_eq!(tree.leaves().len(), 1);
    assert!(tree.shape().unreachable.is_empty());
}

#[test]
fn unknown_and_malformed_entries_round_trip_and_stay_in_the_tree() {
    let unknown = json!({"type": "future", "id": "u", "parentId": "a", "timestamp": "t",
        "nested": {"z": [1, 2.5, null], "a": "ü"}});
    let malformed = json!({"type": "model_change", "id": "m", "parentId": "u", "timestamp": "t",
        "provider": 5});
    let file = [
        HEADER.to_string(),
        msg("a", Value::Null, "first"),
        unknown.to_string(),
        malformed.to_string(),
        msg("b", json!("m"), "after"),
    ]
    .join("\n");
    let session = parse_session(&file).unwrap();
    assert!(matches!(session.entries[2], SessionEntry::Unknown(_)));
    let SessionEntry::Malformed(_, err) = &session.entries[3] else {
        panic!("not malformed")
    };
    assert_eq!(
        err.to_string(),
        "$.provider: expected a string, found a number"
    );
    let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
    assert_eq!(ctx.messages.len(), 2, "the path goes through both");
    assert_eq!(ctx.model, None);
    // Written back, every line is the same JSON value.
    let written = write_session(&session.entries);
    for (a, b) in file.lines().zip(written.lines()) {
        let (a, b): (Value, Value) = (
            serde_json::from_str(a).unwrap(),
            serde_json::from_str(b).unwrap(),
        );
        assert_eq!(json_diff(&a, &b), None);
    }
}

#[test]
fn missing_parents_duplicates_and_bad_lines() {
    let file = [
        HEADER.to_string(),
        "{broken".into(),
        "[1,2]".into(),
        msg("a", json!("nowhere"), "orphan"),
        msg("d", json!("a"), "first copy"),
        msg("d", json!("a"), "second copy"),
        msg("e", json!("d"), "end"),
    ]
    .join("\n");
    let session = parse_session(&file).unwrap();
    assert_eq!(session.skipped.len(), 2);
    assert_eq!(session.skipped[0].line, 2);
    let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
    let texts: Vec<Value> = ctx
        .messages
        .iter()
        .map(|m| m.to_value()["content"].clone())
        .collect();
    assert_eq!(
        texts,
        vec![json!("orphan"), json!("second copy"), json!("end")]
    );
    // The shadowed first copy is no node of its own, not a cycle.
    let shape = SessionTree::new(&session.entries).shape();
    assert!(shape.unreachable.is_empty(), "{shape:?}");
    assert_eq!(
        shape.children[1],
        vec![3, 3],
        "Pi's getTree lists the last copy twice"
    );
    // An unknown leaf id falls back to the last entry, as in Pi; null is empty.
    assert_eq!(
        build_session_context(&session.entries, Leaf::Id("zz")).unwrap(),
        ctx
    );
    assert!(build_session_context(&session.entries, Leaf::BeforeFirst)
        .unwrap()
        .messages
        .is_empty());
}

#[test]
fn a_file_without_a_header_is_refused() {
    assert_eq!(parse_session(""), Err(SessionError::Empty));
    assert_eq!(
        parse_session(&msg("a", Value::Null, "x")),
        Err(SessionError::NoHeader)
    );
    assert_eq!(
        parse_session(r#"{"type":"session","id":5}"#),
        Err(SessionError::NoHeader)
    );
}

#[test]
fn version_1_migration_is_deterministic_and_chains_entries() {
    let file = [
        r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":1,"tokensBefore":3}"#,
    ]
    .join("\n");
    let session = parse_session(&file).unwrap();
    assert_eq!((session.version, session.migrated), (1, true));
    assert_eq!(session.entries[1].id(), Some("00000001"));
    assert_eq!(session.entries[2].parent_id(), Some("00000001"));
    let SessionEntry::Compaction(c) = &session.entries[2] else {
        panic!()
    };
    assert_eq!(c.first_kept_entry_id.as_deref(), Some("00000001"));
    assert!(!c.extra.contains_key("firstKeptEntryIndex"));
    assert_eq!(session.header().unwrap().version, Some(3));
}
