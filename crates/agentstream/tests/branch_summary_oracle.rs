//! Branch summaries against the real Pi 0.73.1:
//! `tests/fixtures/pi-sessions/branch-summary.pi.json` holds, for pairs of
//! entries of each corpus file, what pi-coding-agent's
//! `collectEntriesForBranchSummary` collected and the request and result
//! of `generateBranchSummary` at several token budgets and instructions,
//! as `oracle/pi-coding-agent/branch-summary.mjs` printed them (entries by
//! their index among the file's entries, the header left out).

// These tests read files, which neither Miri's isolation nor WASI without
// a preopened directory allows.
#![cfg(not(any(miri, target_family = "wasm")))]

use std::sync::Mutex;

use agentstream::message::{assistant, text, Context, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, StreamOptions, ThinkingLevel};
use agentstream::session::{
    collect_entries_for_branch_summary, generate_branch_summary, BranchSummary,
    BranchSummarySettings, SessionEntry, SummaryOptions,
};
use serde_json::{json, Value};

#[path = "support/pi_sessions.rs"]
mod pi_sessions;
use pi_sessions::load;

/// Answers `summary` as the oracle's provider does, keeping the request.
#[derive(Default)]
struct Stand {
    request: Mutex<Option<Value>>,
}

impl Model for Stand {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        let prompt =
            serde_json::to_value(&context.messages[0]).unwrap()["content"][0]["text"].clone();
        let reasoning = options
            .thinking
            .filter(|l| *l != ThinkingLevel::Off)
            .map(|l| l.as_str());
        *self.request.lock().unwrap() = Some(json!({
            "system": context.system_prompt,
            "prompt": prompt,
            "maxTokens": options.max_tokens,
            "reasoning": reasoning,
        }));
        ScriptedModel::new([assistant([text("summary")], StopReason::Stop)])
            .stream(context, options)
    }
}

fn result_json(summary: BranchSummary, called: bool) -> Value {
    match summary {
        BranchSummary::Summary { summary, .. } if !called => json!({ "summary": summary }),
        BranchSummary::Summary {
            summary,
            file_lists,
        } => json!({
            "summary": summary,
            "readFiles": file_lists.read_files,
            "modifiedFiles": file_lists.modified_files,
        }),
        BranchSummary::Aborted => json!({ "aborted": true }),
        BranchSummary::Error(error) => json!({ "error": error }),
    }
}

#[test]
fn branch_summaries_equal_pis() {
    let golden = pi_sessions::golden("branch-summary.pi.json");
    let mut failures = Vec::new();
    let (mut cases, mut calls, mut limited) = (0, 0, 0);
    for (name, file_cases) in golden.as_object().unwrap() {
        let entries: Vec<SessionEntry> = load(name)
            .entries
            .into_iter()
            .filter(|e| !matches!(e, SessionEntry::Session(_)))
            .collect();
        let index = |e: &SessionEntry| entries.iter().position(|x| std::ptr::eq(x, e));
        let id = |v: &Value| entries[v.as_u64().unwrap() as usize].id().unwrap();
        for case in file_cases.as_array().unwrap() {
            cases += 1;
            let (branch, ancestor) = collect_entries_for_branch_summary(
                &entries,
                Some(id(&case["from"])),
                id(&case["to"]),
            );
            let ours: Vec<Option<usize>> = branch.iter().map(|e| index(e)).collect();
            let ancestor = ancestor.map(|a| entries.iter().rposition(|e| e.id() == Some(&a)));
            let where_ = format!("{name} {} → {}", case["from"], case["to"]);
            if json!(ours) != case["entries"] || json!(ancestor.flatten()) != case["ancestor"] {
                failures.push(format!(
                    "{where_}: Pi {} (ancestor {}), ours {ours:?} (ancestor {ancestor:?})",
                    case["entries"], case["ancestor"]
                ));
                continue;
            }
            for s in case["summaries"].as_array().unwrap() {
                let mut settings = BranchSummarySettings::new(s["window"].as_u64().unwrap());
                settings.reserve_tokens = s["reserveTokens"].as_u64().unwrap();
                settings.custom_instructions = s["customInstructions"].as_str().map(String::from);
                settings.replace_instructions = s["replaceInstructions"] == true;
                let stand = Stand::default();
                // The agent's level does not reach the call, as in Pi.
                let mut options = SummaryOptions::default();
                options.thinking = Some(ThinkingLevel::High);
                let summary = futures_executor::block_on(generate_branch_summary(
                    &branch, &stand, &settings, &options,
                ));
                let request = stand.request.lock().unwrap().take();
                calls += usize::from(request.is_some());
                limited += usize::from(s["window"] == 1060);
                let ours = json!({
                    "request": request,
                    "result": result_json(summary, request.is_some()),
                });
                for part in ["request", "result"] {
                    if ours[part] != s[part] {
                        failures.push(format!(
                            "{where_} window {}: {part}\n  pi:   {}\n  ours: {}",
                            s["window"], s[part], ours[part]
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        cases >= 30 && calls >= 100 && limited > 0,
        "{cases} cases, {calls} calls"
    );
}
