//! Compaction's deterministic parts against the real Pi 0.73.1:
//! `tests/fixtures/pi-sessions/compaction.pi.json` holds pi-ai's
//! `isContextOverflow` on provider error texts and usages, and
//! pi-coding-agent's `estimateTokens` for messages written for it and for
//! every message of each session file's default context, and
//! `findCutPoint` on each file's default branch, and `serializeConversation`
//! and `generateSummary`'s prompts for each file's default context, as
//! `oracle/pi-coding-agent/compaction.mjs` printed them.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]

use agentstream::message::{AssistantMessage, Message};
use agentstream::session::{
    build_session_context, convert_to_llm, estimate_tokens, find_cut_point, is_context_overflow,
    serialize_conversation, summary_prompt, AgentMessage, Leaf, SUMMARIZATION_SYSTEM_PROMPT,
};
use serde_json::{json, Value};

#[path = "support/pi_sessions.rs"]
mod pi_sessions;
use pi_sessions::load;

fn golden() -> Value {
    pi_sessions::golden("compaction.pi.json")
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
    for (name, tokens) in golden["estimate"]["files"].as_object().unwrap() {
        let session = load(name);
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
    let (mut compared, mut split) = (0, 0);
    for (name, cases) in golden["cuts"].as_object().unwrap() {
        let branch = pi_sessions::branch(name);
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

#[test]
fn serialized_conversations_and_prompts_equal_pis_byte_for_byte() {
    let golden = golden();
    let (mut conversations, mut prompts) = (0, 0);
    for (name, want) in golden["serialized"].as_object().unwrap() {
        let session = load(name);
        let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
        let conversation = serialize_conversation(&convert_to_llm(&ctx.messages));
        same_text(want["conversation"].as_str().unwrap(), &conversation, name);
        conversations += 1;
        if want["plain"].is_object() {
            assert_eq!(
                want["plain"]["system"], SUMMARIZATION_SYSTEM_PROMPT,
                "{name}"
            );
            let plain = summary_prompt(&ctx.messages, None, None);
            same_text(want["plain"]["prompt"].as_str().unwrap(), &plain, name);
            let update = summary_prompt(
                &ctx.messages,
                Some("Focus on the tests."),
                Some("The previous summary."),
            );
            same_text(want["update"]["prompt"].as_str().unwrap(), &update, name);
            prompts += 2;
        }
    }
    assert!(
        conversations >= 11 && prompts >= 20,
        "{conversations} conversations, {prompts} prompts"
    );
}

/// Whether serde_json keeps object keys in insertion order here (its
/// `preserve_order` feature, which the CLI turns on for the workspace).
fn keys_in_insertion_order() -> bool {
    let map: serde_json::Map<String, Value> = serde_json::from_str(r#"{"b":1,"a":2}"#).unwrap();
    map.keys().next().map(String::as_str) == Some("b")
}

/// Pi's text, byte for byte when serde_json keeps key order; without
/// `preserve_order` the core sorts a tool call's argument keys, so a
/// differing `[Assistant tool calls]` paragraph must then have the same
/// length (the same arguments in another order) and everything else must
/// be equal.
fn same_text(pi: &str, ours: &str, name: &str) {
    if keys_in_insertion_order() || pi == ours {
        if pi != ours {
            let at = pi
                .bytes()
                .zip(ours.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(pi.len().min(ours.len()));
            let from = at.saturating_sub(80);
            panic!(
                "{name}: differs at byte {at}: Pi {:?}, ours {:?}",
                &pi[from..(at + 80).min(pi.len())],
                &ours[from..(at + 80).min(ours.len())]
            );
        }
        return;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (pi.split("\n\n").collect(), ours.split("\n\n").collect());
    assert_eq!(a.len(), b.len(), "{name}: paragraph count");
    for (x, y) in a.iter().zip(&b) {
        if x != y {
            assert!(
                x.trim_start_matches('\n')
                    .starts_with("[Assistant tool calls]: ")
                    && x.len() == y.len(),
                "{name}: Pi {x:?}, ours {y:?}"
            );
        }
    }
}
