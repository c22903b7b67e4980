//! The summary calls of a compaction get the agent's thinking level, as
//! Pi's `compact(…, thinkingLevel)` passes the session's level as
//! `reasoning` (pi-coding-agent 0.73.1, `compaction.js`): when the model
//! reasons and the level is not `off`; their token limits are Pi's (80 %
//! of `reserveTokens`, 50 % for a split turn's prefix). Threshold,
//! overflow and manual compactions alike.

// These tests write session files, which neither Miri's isolation nor
// WASI without a preopened directory allows.
#![cfg(not(any(miri, target_family = "wasm")))]
#![cfg(feature = "std")]

use std::sync::{Arc, Mutex};

use agentstream::agent::{Agent, AgentOptions, AutoCompaction, ToolSet};
use agentstream::message::{assistant, text, AssistantMessage, Context, StopReason};
use agentstream::model::{
    Model, ModelStream, ScriptedModel, StreamOptions, ThinkingLevel, ThinkingModel,
};
use agentstream::session::{CompactionSettings, SessionRecorder};

/// A scripted summarizer that keeps the options of every call.
#[derive(Clone)]
struct Seen {
    model: Arc<ScriptedModel>,
    options: Arc<Mutex<Vec<StreamOptions>>>,
}

impl Seen {
    fn new() -> Self {
        let answers = (0..4).map(|i| assistant([text(format!("SUMMARY {i}"))], StopReason::Stop));
        Self {
            model: Arc::new(ScriptedModel::new(answers)),
            options: Arc::default(),
        }
    }

    /// `(thinking, max_tokens)` of each call so far.
    fn calls(&self) -> Vec<(Option<ThinkingLevel>, Option<u64>)> {
        self.options
            .lock()
            .unwrap()
            .iter()
            .map(|o| (o.thinking, o.max_tokens))
            .collect()
    }
}

impl Model for Seen {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.options.lock().unwrap().push(options.clone());
        self.model.stream(context, options)
    }
}

const RESERVE: u64 = 16_384;

fn settings() -> CompactionSettings {
    CompactionSettings::default()
        .with_reserve_tokens(RESERVE)
        .with_keep_recent_tokens(2)
}

#[path = "support/compaction_session.rs"]
mod compaction_session;

fn session(name: &str) -> (SessionRecorder, std::path::PathBuf) {
    compaction_session::compaction_session("agentstream-compaction-thinking", name)
}

fn past_threshold() -> AssistantMessage {
    let mut m = assistant([text("big")], StopReason::Stop);
    m.usage.input = 190_000;
    m.usage.total_tokens = Some(190_000);
    m
}

/// An agent on the session at `level` for a model with `traits`, with
/// threshold compaction summarized by `seen`.
fn agent(
    recorder: &SessionRecorder,
    seen: &Seen,
    level: Option<ThinkingLevel>,
    traits: Option<ThinkingModel>,
) -> Agent<ScriptedModel> {
    let context = recorder.with_writer(|w| w.context()).unwrap();
    let policy = AutoCompaction::new(recorder.compactor(seen.clone(), settings()), 200_000)
        .with_settings(settings());
    let mut options = AgentOptions::default();
    options.stream.thinking_model = traits;
    let agent = Agent::from_session(
        ScriptedModel::new([past_threshold()]),
        ToolSet::new(),
        &context,
    )
    .with_options(options)
    .with_auto_compaction(policy);
    agent.set_thinking_level(level);
    recorder.attach(&agent);
    agent
}

/// The history and the split turn's prefix: two calls, 80 % and 50 % of
/// the reserve.
fn limits(calls: &[(Option<ThinkingLevel>, Option<u64>)]) -> Vec<Option<u64>> {
    let mut limits: Vec<Option<u64>> = calls.iter().map(|c| c.1).collect();
    limits.sort_unstable();
    limits
}

#[test]
fn a_threshold_compaction_summarizes_at_the_agents_thinking_level() {
    let (recorder, dir) = session("threshold");
    let seen = Seen::new();
    let agent = agent(&recorder, &seen, Some(ThinkingLevel::High), None);
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    let calls = seen.calls();
    assert!(!calls.is_empty(), "no summary call");
    assert!(
        calls.iter().all(|c| c.0 == Some(ThinkingLevel::High)),
        "{calls:?}"
    );
    let mut expected: Vec<Option<u64>> = vec![Some(RESERVE * 8 / 10)];
    if calls.len() == 2 {
        expected.insert(0, Some(RESERVE / 2));
    }
    assert_eq!(limits(&calls), expected);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_model_that_does_not_reason_and_level_off_summarize_without_reasoning() {
    for (name, level, traits) in [
        (
            "no-reasoning",
            Some(ThinkingLevel::High),
            Some(ThinkingModel::new(false, None, None)),
        ),
        (
            "off",
            Some(ThinkingLevel::Off),
            Some(ThinkingModel::new(true, None, None)),
        ),
    ] {
        let (recorder, dir) = session(name);
        let seen = Seen::new();
        let agent = agent(&recorder, &seen, level, traits);
        futures_executor::block_on(agent.prompt_text("go")).unwrap();
        let calls = seen.calls();
        assert!(!calls.is_empty(), "{name}: no summary call");
        assert!(
            calls.iter().all(|c| c.0 == Some(ThinkingLevel::Off)),
            "{name}: {calls:?}"
        );
        // The model's traits go along, as Pi's model object does.
        let options = seen.options.lock().unwrap();
        assert!(options.iter().all(|o| o.thinking_model == traits), "{name}");
        drop(options);
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn a_manual_compaction_summarizes_at_the_agents_thinking_level() {
    let (recorder, dir) = session("manual");
    let seen = Seen::new();
    let agent = agent(&recorder, &seen, Some(ThinkingLevel::Low), None);
    futures_executor::block_on(recorder.compact(&agent, &seen, &settings(), None)).unwrap();
    let calls = seen.calls();
    assert!(!calls.is_empty(), "no summary call");
    assert!(
        calls.iter().all(|c| c.0 == Some(ThinkingLevel::Low)),
        "{calls:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
