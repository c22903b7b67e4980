//! The agent-session policies' model-free parts against the real Pi
//! 0.73.1: `tests/fixtures/pi-sessions/policies.pi.json` holds
//! `prepareCompaction` on each session file's default branch for several
//! `keepRecentTokens` (the first kept entry's index, split turn, `tokensBefore`, the
//! previous summary, how many messages are summarized, the read/modified
//! file lists), `shouldCompact` on a few sizes and `AgentSession`'s
//! `_isRetryableError` on error texts, as
//! `oracle/pi-coding-agent/policies.mjs` printed them.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]

use agentstream::agent::is_retryable_error;
use agentstream::message::{assistant, StopReason};
use agentstream::session::{prepare_compaction, should_compact, CompactionSettings};
use serde_json::{json, Value};

#[path = "support/pi_sessions.rs"]
mod pi_sessions;

fn golden() -> Value {
    pi_sessions::golden("policies.pi.json")
}

#[test]
fn prepare_compaction_equals_pis() {
    let golden = golden();
    let (mut compared, mut with_files, mut split) = (0, 0, 0);
    for (name, cases) in golden["prepared"].as_object().unwrap() {
        let branch = pi_sessions::branch(name);
        for case in cases.as_array().unwrap() {
            let keep = case["keep"].as_u64().unwrap();
            let settings = CompactionSettings::default().with_keep_recent_tokens(keep);
            let ours = prepare_compaction(&branch, &settings).map(|p| {
                json!({
                    "firstKeptEntryIndex": branch
                        .iter()
                        .position(|e| e.id() == Some(p.first_kept_entry_id.as_str()))
                        .map_or(-1, |i| i as i64),
                    "isSplitTurn": p.is_split_turn,
                    "tokensBefore": p.tokens_before,
                    "previousSummary": p.previous_summary,
                    "messagesToSummarize": p.messages_to_summarize.len(),
                    "turnPrefixMessages": p.turn_prefix_messages.len(),
                    "readFiles": p.file_lists.read_files,
                    "modifiedFiles": p.file_lists.modified_files,
                })
            });
            let ours = ours.unwrap_or(Value::Null);
            assert_eq!(ours, case["result"], "{name} keep {keep}");
            compared += 1;
            if ours.is_object() {
                split += usize::from(ours["isSplitTurn"] == true);
                with_files += usize::from(
                    !ours["readFiles"].as_array().unwrap().is_empty()
                        || !ours["modifiedFiles"].as_array().unwrap().is_empty(),
                );
            }
        }
    }
    assert!(compared >= 50, "{compared} preparations");
    eprintln!("{compared} preparations, {split} split turns, {with_files} with file lists");
}

#[test]
fn should_compact_equals_pis() {
    for case in golden()["thresholds"].as_array().unwrap() {
        let (tokens, window) = (
            case["tokens"].as_u64().unwrap(),
            case["window"].as_u64().unwrap(),
        );
        assert_eq!(
            Value::Bool(should_compact(
                tokens,
                window,
                &CompactionSettings::default()
            )),
            case["result"],
            "{case}"
        );
    }
}

#[test]
fn retryable_errors_equal_pis() {
    let cases = golden()["retryable"].as_array().unwrap().clone();
    assert!(cases.len() >= 40);
    for case in cases {
        let mut message = assistant([], StopReason::Error);
        message.error_message = Some(case["text"].as_str().unwrap().into());
        assert_eq!(
            Value::Bool(is_retryable_error(&message)),
            case["result"],
            "{:?}",
            case["text"]
        );
    }
}
