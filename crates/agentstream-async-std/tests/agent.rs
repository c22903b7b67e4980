//! The agent loop on async-std: the abort's grace period on its timer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentstream::agent::{
    AgentOptions, AgentStop, AgentTool, ToolContext, ToolError, ToolOutput, ToolSet,
    TOOL_ABORTED_MESSAGE,
};
use agentstream::message::{assistant, text, tool_call, validate_linkage, StopReason};
use agentstream::model::{AbortController, ScriptedModel};
use agentstream::rt::Runtime as _;
use agentstream_testkit::host::{abort_once, run_go, tool_results};
use serde_json::{json, Map, Value};

/// Finishes after `ms` milliseconds of async-std sleep.
struct Sleepy<'a> {
    started: &'a AtomicUsize,
}

impl AgentTool for Sleepy<'_> {
    fn name(&self) -> &str {
        "sleepy"
    }
    fn description(&self) -> &str {
        "Sleeps for `ms` milliseconds."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]})
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let ms = args["ms"].as_u64().unwrap_or(0);
        async_std::task::sleep(Duration::from_millis(ms)).await;
        Ok(ToolOutput::text("woke"))
    }
}

#[test]
fn within_the_grace_period_a_short_tool_finishes_and_a_long_one_is_aborted() {
    let started = AtomicUsize::new(0);
    let tools = ToolSet::new().with(Sleepy { started: &started });
    let model = ScriptedModel::new([
        assistant(
            [
                tool_call("short", "sleepy", json!({"ms": 1})),
                tool_call("long", "sleepy", json!({"ms": 600_000})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("never")], StopReason::Stop),
    ]);
    let controller = AbortController::new();
    let options = AgentOptions::default()
        .with_signal(controller.signal())
        .with_abort_grace(agentstream_async_std::AsyncStd.pause(Duration::from_millis(500)));
    let run = run_go(&model, &tools, options);
    let outcome = async_std::task::block_on(abort_once(run, &controller, || {
        started.load(Ordering::SeqCst) >= 2
    }));
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    assert!(validate_linkage(&outcome.messages).is_empty());
    assert_eq!(
        tool_results(&outcome.messages),
        [
            ("short", "woke", false),
            ("long", TOOL_ABORTED_MESSAGE, true)
        ]
    );
}

#[test]
fn the_prelude_has_the_agent_types() {
    use agentstream_async_std::prelude::*;
    let agent: Agent<ScriptedModel> = Agent::new(
        ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]),
        ToolSet::new(),
    );
    let outcome: AgentOutcome = async_std::task::block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    let _: Option<AgentHooks> = None;
    let _: Option<(AgentOptions, AgentEvent, ToolOutput, ToolCallDecision)> = None;
}

#[test]
fn a_tool_still_running_after_the_grace_period_gets_an_aborted_result() {
    async_std::task::block_on(
        agentstream_testkit::host::a_hung_tool_is_aborted_after_the_grace(
            agentstream_async_std::AsyncStd,
        ),
    );
}
