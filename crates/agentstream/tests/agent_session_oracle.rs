//! Our [`Agent`] with a [`SessionRecorder`], [`AutoRetry`] and
//! [`AutoCompaction`], against Pi's running `AgentSession`
//! (pi-coding-agent 0.73.1) on the same scripted scenarios (#40
//! verification): `tests/fixtures/agent-session/scenarios.json` holds each
//! scenario (its settings, the session's history, the agent's `script`, the
//! summary calls' `summaries`, the prompts and manual compactions), and
//! `NAME.pi.json` what Pi did with it (written by
//! `oracle/pi-coding-agent/agent-session.mjs`, checked by
//! `.ci/pi-sessions-oracle.sh`): the session events with their
//! deterministic fields, the final transcript, the session's entry types,
//! how many scripted replies were left, and what each summary call was
//! given (the thinking level as `reasoning`, `maxTokens`). We replay each scenario and compare
//! part by part; a part that differs must be listed in [`DELIBERATE`] with
//! its reason, and a listed difference that no scenario shows fails too.

// These tests write session files, which neither Miri's isolation nor
// WASI without a preopened directory allows.
#![cfg(not(any(miri, target_family = "wasm")))]
#![cfg(feature = "std")]

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use agentstream::agent::{Agent, AgentEvent, AgentOptions, AutoCompaction, AutoRetry, ToolSet};
use agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, ContentBlock, Message, StopReason,
};
use agentstream::model::{
    Model, ModelStream, ScriptedModel, StreamOptions, ThinkingLevel, ThinkingModel,
};
use agentstream::session::{CompactionSettings, SessionRecorder, SessionWriter};
use serde_json::{json, Value};

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::recorded;

/// The differences from Pi that are ours on purpose: (scenario, part,
/// reason). The parts are `events`, `transcript`, `entries`,
/// `unusedScript`, `unusedSummaries` and `summaryCalls`.
const DELIBERATE: &[(&str, &str, &str)] = &[
    ("overflow-abort", "events", ABORT_ENDS_THE_RUN),
    ("overflow-abort", "transcript", ABORT_ENDS_THE_RUN),
    ("overflow-abort", "entries", ABORT_ENDS_THE_RUN),
    ("overflow-abort", "unusedScript", ABORT_ENDS_THE_RUN),
];

/// Why `overflow-abort` differs.
const ABORT_ENDS_THE_RUN: &str = "an abort() while an overflow's compaction runs ends our run there (prompt resolves aborted, nothing continues); Pi's abort() reaches neither its compaction nor the continue() it schedules 100 ms after it, so Pi answers once more";

/// What a scenario's `onSummaryCall` does as the first summary call
/// starts: Pi's `abort()` or `abortCompaction()`.
type Hook = Box<dyn Fn(&OracleAgent) + Send + Sync>;

/// The agent a scenario runs.
type OracleAgent = Agent<Arc<ScriptedModel>>;

/// The scripted summarizer: records each call's thinking level and token
/// limit as the oracle does, and runs the scenario's hook on the first.
struct Summarizer {
    model: ScriptedModel,
    calls: Mutex<Vec<Value>>,
    hook: Mutex<Option<(Weak<OracleAgent>, Hook)>>,
}

impl Model for Summarizer {
    fn stream(
        &self,
        context: &agentstream::message::Context,
        options: StreamOptions,
    ) -> ModelStream {
        let reasoning = options
            .thinking
            .filter(|l| *l != ThinkingLevel::Off)
            .map(|l| l.as_str());
        self.calls
            .lock()
            .unwrap()
            .push(json!({"reasoning": reasoning, "maxTokens": options.max_tokens}));
        let hook = self.hook.lock().unwrap().take();
        if let Some((agent, hook)) = hook {
            if let Some(agent) = agent.upgrade() {
                hook(&agent);
            }
        }
        self.model.stream(context, options)
    }
}

/// Our [`Agent`]'s transcript holds what goes to the model: Pi's
/// `compactionSummary` message (an application role its `AgentSession`
/// keeps in the agent state) is there already converted as Pi's
/// `convertToLlm` does, a user message with Pi's text; so Pi's transcript
/// is compared in that form. Returns how many messages it converted.
fn as_llm_transcript(transcript: &mut Value) -> usize {
    let mut converted = 0;
    for m in transcript.as_array_mut().into_iter().flatten() {
        if m["role"] == "compactionSummary" {
            let summary = m["text"].as_str().unwrap_or_default();
            *m = json!({"role": "user", "text": format!(
                "The conversation history before this point was compacted into the following \
                 summary:\n\n<summary>\n{summary}\n</summary>"
            )});
            converted += 1;
        }
    }
    converted
}

fn fixtures() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/agent-session"
    ))
}

/// One scripted reply as our message: text, stop reason, error text and
/// usage, as the oracle's provider builds Pi's.
fn scripted(step: &Value) -> AssistantMessage {
    let stop = match step["stopReason"].as_str().unwrap_or("stop") {
        "stop" => StopReason::Stop,
        "error" => StopReason::Error,
        "aborted" => StopReason::Aborted,
        "toolUse" => StopReason::ToolUse,
        "length" => StopReason::Length,
        other => panic!("stop reason {other}"),
    };
    let mut content: Vec<ContentBlock> = step["text"].as_str().map(text).into_iter().collect();
    for call in step["toolCalls"].as_array().into_iter().flatten() {
        content.push(tool_call(
            call["id"].as_str().unwrap(),
            call["name"].as_str().unwrap(),
            call["arguments"].clone(),
        ));
    }
    let mut message = assistant(content, stop);
    message.error_message = step["errorMessage"].as_str().map(str::to_owned);
    let input = step["usage"]["input"].as_u64().unwrap_or(0);
    let output = step["usage"]["output"].as_u64().unwrap_or(0);
    message.usage.input = input;
    message.usage.output = output;
    message.usage.total_tokens = Some(input + output);
    message
}

/// A session event as the oracle records it (see `recordEvent` there);
/// `None` for the streaming and queue events it leaves out.
fn record_event(e: &Value) -> Option<Value> {
    let kind = e["type"].as_str().unwrap_or_default();
    Some(match kind {
        "message_update" | "queue_update" => return None,
        // The oracle's own markers (a prompt, a manual compaction).
        _ if kind.starts_with('(') => e.clone(),
        "message_start" => json!({"type": kind, "role": e["message"]["role"]}),
        "message_end" => {
            let mut r = json!({"type": kind, "role": e["message"]["role"]});
            if e["message"]["role"] == "assistant" {
                r["stopReason"] = e["message"]["stopReason"].clone();
            }
            r
        }
        "compaction_start" => json!({"type": kind, "reason": e["reason"]}),
        "compaction_end" => {
            let mut r = json!({"type": kind, "reason": e["reason"], "aborted": e["aborted"],
                "willRetry": e["willRetry"]});
            if let Some(summary) = e["result"].get("summary") {
                r["summary"] = summary.clone();
            }
            if let Some(error) = e.get("errorMessage") {
                r["errorMessage"] = error.clone();
            }
            r
        }
        "auto_retry_start" => json!({"type": kind, "attempt": e["attempt"],
            "maxAttempts": e["maxAttempts"], "errorMessage": e["errorMessage"]}),
        "auto_retry_end" => {
            let mut r = json!({"type": kind, "success": e["success"], "attempt": e["attempt"]});
            if let Some(error) = e.get("finalError") {
                r["finalError"] = error.clone();
            }
            r
        }
        _ => json!({"type": kind}),
    })
}

/// A transcript message as the oracle records it: role, text (a summary's
/// text for the summary roles), and an answer's stop reason.
fn transcript_entry(m: &Message) -> Value {
    let v = serde_json::to_value(m).unwrap();
    let text = match &v["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => v["summary"].as_str().unwrap_or_default().to_owned(),
    };
    let mut r = json!({"role": v["role"], "text": text});
    if v["role"] == "assistant" {
        r["stopReason"] = v["stopReason"].clone();
    }
    r
}

fn settings(scenario: &Value) -> CompactionSettings {
    let c = &scenario["compaction"];
    let mut settings = CompactionSettings::default();
    if let Some(reserve) = c["reserveTokens"].as_u64() {
        settings = settings.with_reserve_tokens(reserve);
    }
    if let Some(keep) = c["keepRecentTokens"].as_u64() {
        settings = settings.with_keep_recent_tokens(keep);
    }
    settings
}

/// Replays one scenario on our agent and records it as the oracle does.
fn run(scenario: &Value) -> Value {
    let name = scenario["name"].as_str().unwrap();
    let dir = std::env::temp_dir().join(format!(
        "agentstream-session-oracle-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut writer = SessionWriter::create(&dir, "/work/x");
    let history = scenario["history"].as_array().unwrap();
    for m in history {
        let message: Message = if m["role"] == "user" {
            user(m["text"].as_str().unwrap()).into()
        } else {
            scripted(m).into()
        };
        writer.append_message(message.into()).unwrap();
    }
    let recorder = SessionRecorder::new(writer);
    // What Pi's createAgentSession writes on opening: the model of a
    // session without one, and the thinking level.
    if history.is_empty() {
        recorder
            .record_model_change("scripted", "scripted-model")
            .unwrap();
    }
    let level = scenario["thinkingLevel"].as_str().unwrap_or("off");
    recorder.record_thinking_level_change(level).unwrap();

    let context = recorder.with_writer(|w| w.context()).unwrap();
    let script: Vec<AssistantMessage> = scenario["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(scripted)
        .collect();
    let summaries: Vec<AssistantMessage> = scenario["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(scripted)
        .collect();
    let model = Arc::new(ScriptedModel::new(script));
    let summarizer = Arc::new(Summarizer {
        model: ScriptedModel::new(summaries),
        calls: Mutex::default(),
        hook: Mutex::default(),
    });
    let settings = settings(scenario);
    let mut agent = Agent::from_session(Arc::clone(&model), ToolSet::new(), &context);
    // The oracle's model reasons when the scenario says so, at its level.
    let mut options = AgentOptions::default();
    options.stream.thinking_model = Some(ThinkingModel::new(
        scenario["reasoning"] == true,
        None,
        Some(4096),
    ));
    agent.set_options(options);
    agent.set_thinking_level(ThinkingLevel::parse(level));
    if scenario["retry"]["enabled"] == true {
        let retry = AutoRetry::from_fn(|_| std::future::ready(()))
            .with_base_delay_ms(1)
            .with_max_retries(scenario["retry"]["maxRetries"].as_u64().unwrap() as u32);
        agent = agent.with_auto_retry(retry);
    }
    if scenario["compaction"]["enabled"] == true {
        let window = scenario["contextWindow"].as_u64().unwrap();
        let policy = AutoCompaction::new(
            recorder.compactor(Arc::clone(&summarizer), settings),
            window,
        )
        .with_settings(settings);
        agent = agent.with_auto_compaction(policy);
    }
    let agent = Arc::new(agent);
    let hook: Option<Hook> = match scenario["onSummaryCall"].as_str() {
        None => None,
        Some("abort") => Some(Box::new(|agent| agent.abort())),
        Some("abortCompaction") => Some(Box::new(|agent| agent.abort_compaction())),
        Some(other) => panic!("onSummaryCall {other}"),
    };
    *summarizer.hook.lock().unwrap() = hook.map(|hook| (Arc::downgrade(&agent), hook));
    recorder.attach(&agent);
    let events = recorded(&agent);
    // Follow-ups queued when a compaction starts, as the oracle does.
    let follow_ups: Vec<String> = scenario["followUpOnCompactionStart"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    let hook = Arc::new(Mutex::new((Arc::downgrade(&agent), follow_ups)));
    agent.subscribe_fn(move |event| {
        if matches!(event, AgentEvent::CompactionStart { .. }) {
            let mut hook = hook.lock().unwrap();
            let (agent, queue) = &mut *hook;
            if let (Some(agent), false) = (agent.upgrade(), queue.is_empty()) {
                agent.follow_up(user(queue.remove(0)).into());
            }
        }
    });

    let marker = |kind: &str| events.lock().unwrap().push(json!({"type": kind}));
    for action in scenario["actions"].as_array().unwrap() {
        if let Some(prompt) = action["prompt"].as_str() {
            marker("(prompt)");
            futures_executor::block_on(agent.prompt_text(prompt)).unwrap();
        } else if let Some(instructions) = action["compact"].as_str() {
            marker("(compact)");
            let instructions = (!instructions.is_empty()).then_some(instructions);
            let done = futures_executor::block_on(recorder.compact(
                &agent,
                &*summarizer,
                &settings,
                instructions,
            ));
            if let Err(error) = done {
                events
                    .lock()
                    .unwrap()
                    .push(json!({"type": "(compact threw)", "message": error.to_string()}));
            }
        }
        futures_executor::block_on(agent.wait_for_idle());
    }
    assert!(
        recorder.take_error().is_none(),
        "{name}: the session was written"
    );

    let events: Vec<Value> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(record_event)
        .collect();
    let transcript: Vec<Value> = agent
        .state()
        .messages
        .iter()
        .map(transcript_entry)
        .collect();
    let entries: Vec<Value> = recorder.with_writer(|w| {
        w.entries()
            .iter()
            .map(|e| serde_json::to_value(e).unwrap()["type"].clone())
            // Pi's getEntries() leaves the header out.
            .filter(|kind| kind != "session")
            .collect()
    });
    std::fs::remove_dir_all(&dir).ok();
    json!({
        "events": events,
        "transcript": transcript,
        "entries": entries,
        "unusedScript": model.remaining(),
        "unusedSummaries": summarizer.model.remaining(),
        "summaryCalls": *summarizer.calls.lock().unwrap(),
    })
}

#[test]
fn our_agent_session_does_what_pis_does_on_every_scenario() {
    let scenarios: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("scenarios.json")).unwrap())
            .unwrap();
    assert!(scenarios.len() >= 10);
    let mut unexplained = Vec::new();
    let mut seen = Vec::new();
    let mut equal = 0;
    let mut converted = 0;
    for scenario in &scenarios {
        let name = scenario["name"].as_str().unwrap();
        let mut golden: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join(format!("{name}.pi.json"))).unwrap(),
        )
        .unwrap();
        converted += as_llm_transcript(&mut golden["transcript"]);
        let ours = run(scenario);
        let mut same = true;
        for part in [
            "events",
            "transcript",
            "entries",
            "unusedScript",
            "unusedSummaries",
            "summaryCalls",
        ] {
            if ours[part] == golden[part] {
                continue;
            }
            same = false;
            if DELIBERATE.iter().any(|(s, p, _)| *s == name && *p == part) {
                seen.push((name, part));
            } else {
                unexplained.push(format!(
                    "{name} {part}:\n  pi:   {}\n  ours: {}",
                    golden[part], ours[part]
                ));
            }
        }
        equal += usize::from(same);
    }
    let stale: Vec<_> = DELIBERATE
        .iter()
        .filter(|(s, p, _)| !seen.contains(&(*s, *p)))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{} of {} scenarios equal; differences:\n{}",
        equal,
        scenarios.len(),
        unexplained.join("\n")
    );
    assert!(stale.is_empty(), "listed but not shown: {stale:?}");
    assert!(
        converted > 0,
        "no scenario compacted: the conversion is not shown"
    );
    eprintln!("{equal} of {} scenarios equal to Pi's", scenarios.len());
}
