//! Compaction's deterministic parts against the real Pi 0.73.1:
//! `tests/fixtures/pi-sessions/compaction.pi.json` holds pi-ai's
//! `isContextOverflow` on provider error texts and usages, and
//! pi-coding-agent's `estimateTokens` for messages written for it and for
//! every message of each session file's default context, and
//! `findCutPoint` on each file's default branch, as
//! `oracle/pi-coding-agent/compaction.mjs` printed them.

use std::path::Path;

use agentstream::message::{AssistantMessage, Message};
use agentstream::session::{
    build_session_context, estimate_tokens, find_cut_point, is_context_overflow, parse_session,
    AgentMessage, Leaf, SessionEntry, SessionTree,
};
use serde_json::{json, Value};

fn golden() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-sessions/compaction.pi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn overflow_detection_equals_pis() {
    let golden = golden();
    let cases = golden["overflow"].as_array().unwrap();
    let mut failures = Vec::new();
    for case in cases {
        let message = AssistantMessage::from_value(case["message"].clone()).unwrap();
        let window = case["contextWindow"].as_u64();
        let ours = is_context_overflow(&message, window);
        if Value::Bool(ours) != case["result"] {
            failures.push(format!(
                "{:?} window {window:?}: Pi {}, ours {ours}",
                message.error_message, case["result"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 40);
    let overflows = cases.iter().filter(|c| c["result"] == true).count();
    assert!(
        overflows > 20 && overflows < cases.len() - 10,
        "both answers are covered"
    );
}

#[test]
fn token_estimates_equal_pis() {
    let golden = golden();
    let mut compared = 0;
    for case in golden["estimate"]["messages"].as_array().unwrap() {
        let message = AgentMessage::from_value(case["message"].clone()).unwrap();
        assert_eq!(
            Value::from(estimate_tokens(&message)),
            case["tokens"],
            "{}",
            case["message"]
        );
        compared += 1;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-sessions");
    for (name, tokens) in golden["estimate"]["files"].as_object().unwrap() {
        let dir = if name.starts_with("large") {
            "real"
        } else {
            "corpus"
        };
        let session =
            parse_session(&std::fs::read_to_string(root.join(dir).join(name)).unwrap()).unwrap();
        let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
        let ours: Vec<u64> = ctx.messages.iter().map(estimate_tokens).collect();
        assert_eq!(Value::from(ours), *tokens, "{name}");
        compared += tokens.as_array().unwrap().len();
    }
    assert!(compared > 900, "{compared} messages compared");
    // Not every estimate is trivial.
    let m: Message = agentstream::message::user("x".repeat(9)).into();
    assert_eq!(estimate_tokens(&m.into()), 3);
}

#[test]
fn cut_points_equal_pis() {
    let golden = golden();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-sessions");
    let (mut compared, mut split) = (0, 0);
    for (name, cases) in golden["cuts"].as_object().unwrap() {
        let dir = if name.starts_with("large") {
            "real"
        } else {
            "corpus"
        };
        let session =
            parse_session(&std::fs::read_to_string(root.join(dir).join(name)).unwrap()).unwrap();
        let entries: Vec<SessionEntry> = session
            .entries
            .into_iter()
            .filter(|e| !matches!(e, SessionEntry::Session(_)))
            .collect();
        let tree = SessionTree::new(&entries);
        let branch: Vec<SessionEntry> = match tree.last() {
            Some(leaf) => tree
                .path(leaf)
                .unwrap()
                .into_iter()
                .map(|i| entries[i].clone())
                .collect(),
            None => Vec::new(),
        };
        for case in cases.as_array().unwrap() {
            let start = case["start"].as_u64().unwrap() as usize;
            let keep = case["keep"].as_f64().unwrap() as u64;
            let cut = find_cut_point(&branch, start, branch.len(), keep);
            let ours = json!({
                "firstKeptEntryIndex": cut.first_kept_entry_index,
                "turnStartIndex": cut.turn_start_index.map_or(-1, |i| i as i64),
                "isSplitTurn": cut.is_split_turn,
            });
            assert_eq!(ours, case["result"], "{name} start {start} keep {keep}");
            compared += 1;
            split += usize::from(cut.is_split_turn);
        }
    }
    assert!(
        compared >= 100 && split > 0,
        "{compared} cuts, {split} split turns"
    );
}
