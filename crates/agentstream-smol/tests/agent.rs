//! The agent loop on smol: tool calls spawned on smol's global executor,
//! and the abort's grace period on smol's timer. The probe tool and the
//! grace-period scenario are the native hosts' (`agentstream_testkit::host`).

use agentstream::agent::{AgentOptions, AgentStop};
use agentstream::rt::Runtime as _;
use agentstream_testkit::host::{
    a_hung_tool_is_aborted_after_the_grace, run_probes, tool_results, Probe,
};

#[test]
fn tool_calls_run_as_smol_tasks() {
    let probe = Probe::new();
    let spawner = agentstream_smol::Smol.tool_spawner();
    let (outcome, _) = smol::block_on(run_probes(&probe, spawner, AgentOptions::default()));
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(
        tool_results(&outcome.messages),
        [("a", "here", false), ("b", "here", false)]
    );
    assert_eq!(probe.calls(), 2);
}

#[test]
fn a_tool_still_running_after_the_grace_period_gets_an_aborted_result() {
    smol::block_on(a_hung_tool_is_aborted_after_the_grace(
        agentstream_smol::Smol,
    ));
}

#[test]
fn the_prelude_has_the_agent_types() {
    use agentstream_smol::prelude::*;
    let agent: Agent<ScriptedModel> = Agent::new(
        ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]),
        ToolSet::new(),
    );
    let outcome: AgentOutcome = smol::block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    let _: Option<AgentHooks> = None;
    let _: Option<(AgentOptions, AgentEvent, ToolOutput, ToolCallDecision)> = None;
}
