//! The messages the loop makes (a `prompt_text` user message, every
//! `toolResult`, the results of calls that never run) carry the time of
//! the run's clock, as Pi stamps them with `Date.now()`: the options'
//! clock, else the model's own, else 0.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use agentstream::agent::{run_agent, Agent, AgentOptions, ToolError, ToolOutput, ToolSet};
use agentstream::message::{assistant, text, tool_call, user, Context, Message, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, StreamOptions};
use agentstream::rt::Clock;
use serde_json::json;

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::object_tool;

/// A clock that moves one second on every reading, from `start`.
fn ticking(start: u64) -> (Clock, Arc<AtomicU64>) {
    let now = Arc::new(AtomicU64::new(start));
    let reading = Arc::clone(&now);
    let clock = Clock::from_fn(move || reading.fetch_add(1_000, Ordering::SeqCst));
    (clock, now)
}

/// A scripted model whose runtime has a clock.
struct Clocked {
    inner: ScriptedModel,
    clock: Clock,
}

impl Model for Clocked {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.inner.stream(context, options)
    }
    fn clock(&self) -> Option<Clock> {
        Some(self.clock.clone())
    }
}

fn two_calls_then_done() -> ScriptedModel {
    ScriptedModel::new([
        assistant(
            [
                tool_call("c1", "noop", json!({})),
                tool_call("c2", "missing", json!({})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ])
}

fn noop_tools() -> ToolSet<'static> {
    ToolSet::new().with(object_tool("noop", "does nothing", |_| async {
        Ok::<_, ToolError>(ToolOutput::text("ok"))
    }))
}

/// The timestamps of the user and tool-result messages, in history order.
fn stamps(messages: &[Message]) -> Vec<(String, u64)> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::User(m) => Some(("user".to_owned(), m.timestamp)),
            Message::ToolResult(m) => Some((m.tool_call_id.clone(), m.timestamp)),
            _ => None,
        })
        .collect()
}

#[test]
fn tool_results_carry_the_options_clock() {
    let (clock, _) = ticking(1_700_000_000_000);
    let model = two_calls_then_done();
    let outcome = futures_executor::block_on(run_agent(
        &model,
        &noop_tools(),
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default().with_clock(clock),
        |_| {},
    ));
    let stamps = stamps(&outcome.messages);
    // The prompt is the caller's message, kept as it was made.
    assert_eq!(stamps[0], ("user".to_owned(), 0));
    // Both results (the unknown tool's error included) read the clock.
    assert_eq!(stamps.len(), 3, "{stamps:?}");
    for (id, stamp) in &stamps[1..] {
        assert!(*stamp >= 1_700_000_000_000, "{id}: {stamp}");
    }
    assert_ne!(stamps[1].1, stamps[2].1, "each result reads the clock anew");
}

#[test]
fn without_options_clock_the_model_s_clock_stamps_prompt_text_and_results() {
    let (clock, _) = ticking(1_800_000_000_000);
    let agent = Agent::new(
        Clocked {
            inner: two_calls_then_done(),
            clock,
        },
        noop_tools(),
    );
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    let stamps = stamps(&agent.state().messages);
    assert_eq!(stamps.len(), 3, "{stamps:?}");
    assert_eq!(stamps[0], ("user".to_owned(), 1_800_000_000_000));
    assert!(stamps[1..]
        .iter()
        .all(|(_, stamp)| *stamp > 1_800_000_000_000));
}

#[test]
fn the_options_clock_wins_over_the_model_s() {
    let (model_clock, _) = ticking(1_800_000_000_000);
    let agent = Agent::new(
        Clocked {
            inner: two_calls_then_done(),
            clock: model_clock,
        },
        noop_tools(),
    )
    .with_options(AgentOptions::default().with_clock(Clock::from_fn(|| 5)));
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    let stamps = stamps(&agent.state().messages);
    assert!(stamps.iter().all(|(_, stamp)| *stamp == 5), "{stamps:?}");
}

#[test]
fn with_no_clock_anywhere_the_stamps_stay_zero() {
    let agent = Agent::new(two_calls_then_done(), noop_tools());
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    let stamps = stamps(&agent.state().messages);
    assert_eq!(stamps.len(), 3);
    assert!(stamps.iter().all(|(_, stamp)| *stamp == 0), "{stamps:?}");
}
