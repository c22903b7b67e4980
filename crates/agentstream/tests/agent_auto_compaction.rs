//! The [`Agent`]'s [`AutoCompaction`] policy (#40 section 2) on a session
//! written by a [`SessionRecorder`]: an overflow compacted then continued
//! once, a context past the threshold compacted, Pi's events and the
//! `compaction` entry; scripted models throughout.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]
#![cfg(feature = "std")]

use std::path::PathBuf;

use agentstream::agent::{Agent, AgentStop, AutoCompaction, ToolSet};
use agentstream::message::{assistant, text, user, AssistantMessage, Message, StopReason};
use agentstream::model::ScriptedModel;
use agentstream::session::{CompactionSettings, SessionEntry, SessionRecorder};

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::recorded;

const OVERFLOW: &str = "prompt is too long: 213462 tokens > 200000 maximum";

#[path = "support/compaction_session.rs"]
mod compaction_session;

fn recorder(name: &str) -> (SessionRecorder, PathBuf) {
    compaction_session::compaction_session("agentstream-autocompact", name)
}

fn failed(error: &str) -> AssistantMessage {
    let mut m = assistant([], StopReason::Error);
    m.error_message = Some(error.into());
    m
}

fn agent_on(recorder: &SessionRecorder, script: Vec<AssistantMessage>) -> Agent<ScriptedModel> {
    let context = recorder.with_writer(|w| w.context()).unwrap();
    let summarizer = ScriptedModel::new([
        assistant([text("SUMMARY")], StopReason::Stop),
        assistant([text("SUMMARY 2")], StopReason::Stop),
    ]);
    let settings = CompactionSettings::default().with_keep_recent_tokens(2);
    let policy = AutoCompaction::new(recorder.compactor(summarizer, settings), 200_000)
        .with_settings(settings);
    let agent = Agent::from_session(ScriptedModel::new(script), ToolSet::new(), &context)
        .with_auto_compaction(policy);
    recorder.attach(&agent);
    agent
}

fn compactions(recorder: &SessionRecorder) -> usize {
    recorder.with_writer(|w| {
        w.entries()
            .iter()
            .filter(|e| matches!(e, SessionEntry::Compaction(_)))
            .count()
    })
}

#[test]
fn an_overflow_is_compacted_once_and_the_run_continues() {
    let (recorder, dir) = recorder("overflow");
    let agent = agent_on(
        &recorder,
        vec![
            failed(OVERFLOW),
            assistant([text("after")], StopReason::Stop),
        ],
    );
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(outcome.turns, 2);
    assert!(recorder.take_error().is_none());
    assert_eq!(compactions(&recorder), 1);

    let events = events.lock().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let start = types.iter().position(|t| *t == "compaction_start").unwrap();
    assert_eq!(
        events[start],
        serde_json::json!({"type": "compaction_start", "reason": "overflow"})
    );
    let end = &events[start + 1];
    assert_eq!(end["type"], "compaction_end");
    assert_eq!(end["reason"], "overflow");
    assert_eq!(end["willRetry"], true);
    assert_eq!(end["aborted"], false);
    assert!(end["result"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("SUMMARY"));
    assert!(end.get("errorMessage").is_none());
    assert_eq!(types[start + 2], "agent_start", "the run continues");

    // The transcript: the summary, the kept messages, the answer; never
    // the overflow error.
    let messages = agent.state().messages;
    assert_eq!(messages[0].role(), "user");
    assert!(matches!(messages.last(), Some(Message::Assistant(a)) if a.text() == "after"));
    assert!(!messages
        .iter()
        .any(|m| matches!(m, Message::Assistant(a) if a.stop_reason == StopReason::Error)));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_second_overflow_ends_with_pis_failure_text() {
    let (recorder, dir) = recorder("twice");
    let agent = agent_on(&recorder, vec![failed(OVERFLOW), failed(OVERFLOW)]);
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Error);
    assert_eq!(compactions(&recorder), 1, "compacted once only");
    let events = events.lock().unwrap();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "compaction_end");
    assert_eq!(last["willRetry"], false);
    assert_eq!(
        last["errorMessage"],
        "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_context_past_the_threshold_is_compacted_and_the_run_ends() {
    let (recorder, dir) = recorder("threshold");
    let mut big = assistant([text("big")], StopReason::Stop);
    big.usage.total_tokens = Some(200_000 - 16_384 + 1);
    let agent = agent_on(&recorder, vec![big]);
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(outcome.turns, 1, "no retry after a threshold compaction");
    assert_eq!(compactions(&recorder), 1);
    let events = events.lock().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        &types[types.len() - 2..],
        ["compaction_start", "compaction_end"]
    );
    assert_eq!(events.last().unwrap()["reason"], "threshold");
    assert_eq!(events.last().unwrap()["willRetry"], false);
    // One token less: nothing happens.
    let (recorder, dir2) = recorder_again();
    let mut under = assistant([text("big")], StopReason::Stop);
    under.usage.total_tokens = Some(200_000 - 16_384);
    let agent = agent_on(&recorder, vec![under]);
    futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(compactions(&recorder), 0);
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&dir2).ok();
}

fn recorder_again() -> (SessionRecorder, PathBuf) {
    recorder("threshold-under")
}

/// Pi's same-model check: with the policy's model named, an overflow error
/// from another model (one used before a switch) does not compact; from
/// the named model it does.
#[test]
fn an_overflow_from_another_model_is_not_compacted() {
    for (model, compacted) in [("other", 0), ("scripted", 1)] {
        let (recorder, dir) = recorder(&format!("same-model-{model}"));
        let context = recorder.with_writer(|w| w.context()).unwrap();
        let summarizer = ScriptedModel::new([assistant([text("SUMMARY")], StopReason::Stop)]);
        let settings = CompactionSettings::default().with_keep_recent_tokens(2);
        let policy = AutoCompaction::new(recorder.compactor(summarizer, settings), 200_000)
            .with_settings(settings)
            .with_model("scripted", model);
        let mut overflow = failed(OVERFLOW);
        overflow.provider = "scripted".into();
        overflow.model = "scripted".into();
        let script = vec![overflow, assistant([text("after")], StopReason::Stop)];
        let agent = Agent::from_session(ScriptedModel::new(script), ToolSet::new(), &context)
            .with_auto_compaction(policy);
        recorder.attach(&agent);
        futures_executor::block_on(agent.prompt_text("third")).unwrap();
        assert_eq!(compactions(&recorder), compacted, "policy model {model}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// A threshold compaction ends the run, but a message queued while it
/// ran is delivered: the loop goes on (Pi's `hasQueuedMessages` check).
#[test]
fn a_message_queued_during_a_threshold_compaction_is_delivered() {
    use std::sync::{Arc, Mutex};
    let (recorder, dir) = recorder("threshold-queued");
    let mut big = assistant([text("big")], StopReason::Stop);
    big.usage.total_tokens = Some(200_000 - 16_384 + 1);
    let agent = Arc::new(agent_on(
        &recorder,
        vec![
            big,
            assistant([text("follow-up answered")], StopReason::Stop),
        ],
    ));
    // Queue a follow-up when the compaction starts (the run has ended its
    // turns by then, so only the compaction's check can deliver it).
    let queued = Arc::new(Mutex::new(None::<Arc<Agent<ScriptedModel>>>));
    *queued.lock().unwrap() = Some(Arc::clone(&agent));
    let hook = Arc::clone(&queued);
    agent.subscribe_fn(move |event| {
        if matches!(
            event,
            agentstream::agent::AgentEvent::CompactionStart { .. }
        ) {
            if let Some(agent) = hook.lock().unwrap().take() {
                agent.follow_up(user("one more thing").into());
            }
        }
    });
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(outcome.turns, 2, "the queued follow-up got its turn");
    assert_eq!(compactions(&recorder), 1);
    let messages = agent.state().messages;
    assert!(
        matches!(messages.last(), Some(Message::Assistant(a)) if a.text() == "follow-up answered")
    );
    assert!(messages
        .iter()
        .any(|m| serde_json::to_string(m).unwrap().contains("one more thing")));
    let types: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    let end = types.iter().position(|t| t == "compaction_end").unwrap();
    assert_eq!(types[end + 1], "agent_start", "{types:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Pi's manual `compact()`: `compaction_start`/`compaction_end` with
/// reason `manual` to the agent's subscribers, and on failure the end
/// carries `Compaction failed: …`.
#[test]
fn a_manual_compaction_emits_pis_events() {
    let (recorder, dir) = recorder("manual");
    let agent = agent_on(&recorder, vec![]);
    let events = recorded(&agent);
    let summarizer = ScriptedModel::new([assistant([text("MANUAL")], StopReason::Stop)]);
    let settings = CompactionSettings::default().with_keep_recent_tokens(2);
    let result =
        futures_executor::block_on(recorder.compact(&agent, &summarizer, &settings, None)).unwrap();
    assert!(result.summary.contains("MANUAL"));
    // Again at once: nothing new to compact.
    let error = futures_executor::block_on(recorder.compact(&agent, &summarizer, &settings, None))
        .unwrap_err();
    let events = events.lock().unwrap();
    let manual: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["reason"] == "manual").collect();
    assert_eq!(manual.len(), 4, "{events:?}");
    assert_eq!(
        *manual[0],
        serde_json::json!({"type": "compaction_start", "reason": "manual"})
    );
    assert_eq!(manual[1]["type"], "compaction_end");
    assert_eq!(manual[1]["willRetry"], false);
    assert!(manual[1]["result"]["summary"]
        .as_str()
        .unwrap()
        .contains("MANUAL"));
    assert_eq!(
        manual[3]["errorMessage"],
        format!("Compaction failed: {error}")
    );
    assert!(manual[3].get("result").is_none());
    std::fs::remove_dir_all(&dir).ok();
}

/// Pi checks before a prompt too (`_checkCompaction(last, false)`): an
/// aborted answer past the threshold, which the check after its run left
/// alone, is compacted before the next prompt is sent; and the kept
/// answer of a compaction (whose usage counts the context before it)
/// does not compact again (Pi's compaction boundary).
#[test]
fn the_check_before_a_prompt_compacts_an_aborted_answer_once() {
    let (recorder, dir) = recorder("before-prompt");
    let mut aborted = assistant([text("cut")], StopReason::Aborted);
    aborted.usage.total_tokens = Some(200_000);
    let agent = agent_on(
        &recorder,
        vec![
            aborted,
            assistant([text("one")], StopReason::Stop),
            assistant([text("two")], StopReason::Stop),
        ],
    );
    let events = recorded(&agent);
    let types = || -> Vec<String> {
        events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect()
    };
    futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(
        compactions(&recorder),
        0,
        "an aborted answer is left after its run"
    );
    futures_executor::block_on(agent.prompt_text("fourth")).unwrap();
    assert_eq!(
        compactions(&recorder),
        1,
        "the check before the prompt compacts it"
    );
    let seen = types();
    let start = seen.iter().position(|t| t == "compaction_start").unwrap();
    assert_eq!(seen[start + 1], "compaction_end");
    assert_eq!(
        seen[start + 2],
        "agent_start",
        "then the prompt runs: {seen:?}"
    );
    futures_executor::block_on(agent.prompt_text("fifth")).unwrap();
    assert_eq!(compactions(&recorder), 1, "no second compaction");
    std::fs::remove_dir_all(&dir).ok();
}

/// After a threshold compaction the kept answer still reads past the
/// threshold; the next prompt does not compact on it again.
#[test]
fn a_compacted_answer_does_not_compact_again_before_the_next_prompt() {
    let (recorder, dir) = recorder("boundary");
    let mut big = assistant([text("big")], StopReason::Stop);
    big.usage.total_tokens = Some(200_000 - 16_384 + 1);
    let agent = agent_on(
        &recorder,
        vec![big, assistant([text("small")], StopReason::Stop)],
    );
    let events = recorded(&agent);
    futures_executor::block_on(agent.prompt_text("third")).unwrap();
    assert_eq!(compactions(&recorder), 1);
    let outcome = futures_executor::block_on(agent.prompt_text("fourth")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(compactions(&recorder), 1);
    // Not even tried (Pi's preparation would refuse it: "Already
    // compacted").
    let starts = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "compaction_start")
        .count();
    assert_eq!(starts, 1);
    std::fs::remove_dir_all(&dir).ok();
}
