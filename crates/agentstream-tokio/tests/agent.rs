//! The agent loop on tokio: tool calls spawned on the runtime's worker
//! threads, and the abort's grace period on tokio's timer. The probe tool
//! and the helpers are the native hosts' (`agentstream_testkit::host`).

use agentstream::agent::{AgentOptions, AgentStop};
use agentstream::rt::Runtime as _;
use agentstream_testkit::host::{a_hung_tool_is_aborted_after_the_grace, run_probes, Probe};

#[test]
fn tool_calls_run_on_the_runtime_worker_threads() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let probe = Probe::new();
    let spawner = agentstream_tokio::Tokio.tool_spawner();
    let (outcome, _) = runtime.block_on(run_probes(&probe, spawner, AgentOptions::default()));
    assert_eq!(outcome.stop, AgentStop::Completed);
    let caller = std::thread::current().id();
    let threads = probe.threads.lock().unwrap();
    assert_eq!(threads.len(), 2);
    assert!(
        threads.iter().all(|t| *t != caller),
        "tools ran on worker threads"
    );
}

#[test]
fn a_tool_still_running_after_the_grace_period_gets_an_aborted_result() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(a_hung_tool_is_aborted_after_the_grace(
        agentstream_tokio::Tokio,
    ));
}

#[test]
fn the_prelude_has_the_agent_types() {
    use agentstream_tokio::prelude::*;
    let agent: Agent<ScriptedModel> = Agent::new(
        ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]),
        ToolSet::new(),
    );
    let outcome: AgentOutcome = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(agent.prompt_text("go"))
        .unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    let _: Option<AgentHooks> = None;
    let _: Option<(AgentOptions, AgentEvent, ToolOutput, ToolCallDecision)> = None;
}
