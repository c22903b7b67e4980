//! The agent loop under the test's control: gated tools, the abort's grace
//! period, per-tool sequential calls, `Send` runs, scripted replies that
//! read the request, deterministic ids.

use std::convert::Infallible;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use agentstream::agent::{
    run_agent, AgentEvent, AgentOptions, AgentOutcome, AgentStop, GatedTool, ToolOutput, ToolSet,
    TOOL_ABORTED_MESSAGE,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, AssistantMessage, ContentBlock, Context,
    Message, StopReason,
};
use agentstream::model::{
    AbortController, Model, ModelEvent, ScriptStep, ScriptedModel, ScriptedTurn, StreamOptions,
};
use agentstream::rt::Pause;
use agentstream::EventStream;
use futures_util::future::{join, FutureExt};
use futures_util::StreamExt;
use serde_json::json;

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::run_go as run;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

fn calls(ids: &[(&str, &str)]) -> AssistantMessage {
    assistant(
        ids.iter()
            .map(|(id, name)| tool_call(*id, *name, json!({}))),
        StopReason::ToolUse,
    )
}

fn results(outcome: &AgentOutcome) -> Vec<(String, String, bool)> {
    agent_support::tool_results(&outcome.messages)
}

fn ends(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// A grace period that ends when the test finishes the returned producer.
fn test_grace() -> (agentstream::Producer<(), (), Infallible>, Pause) {
    let (end, stream) = EventStream::<(), (), Infallible>::channel();
    let result = stream.result();
    let grace = Pause::from_fn(move || result.clone().map(|_| ()));
    // The stream itself is not needed; the result future outlives it.
    drop(stream);
    (end, grace)
}

#[test]
fn without_a_grace_period_a_running_tool_is_dropped_at_the_abort() {
    let (gated, gate) = GatedTool::new("wait");
    let tools = ToolSet::new().with(gated);
    let model = ScriptedModel::new([
        calls(&[("a", "wait")]),
        assistant([text("never")], StopReason::Stop),
    ]);
    let controller = AbortController::new();
    let options = AgentOptions::default().with_signal(controller.signal());
    let control = async {
        gate.started(1).await;
        controller.abort();
    };
    let ((outcome, events), ()) = block_on(join(run(&model, &tools, options), control));
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1, "no model call after the abort");
    assert_eq!(
        results(&outcome),
        [("a".into(), TOOL_ABORTED_MESSAGE.into(), true)]
    );
    assert_eq!(events.last().map(AgentEvent::type_name), Some("agent_end"));
    assert!(events.iter().any(|e| e.type_name() == "turn_end"));
}

#[test]
fn within_the_grace_period_a_tool_still_finishes_and_the_late_one_is_aborted() {
    let (gated, gate) = GatedTool::new("wait");
    let tools = ToolSet::new().with(gated);
    let model = ScriptedModel::new([
        calls(&[("a", "wait"), ("b", "wait")]),
        assistant([text("never")], StopReason::Stop),
    ]);
    let controller = AbortController::new();
    let (end_grace, grace) = test_grace();
    let options = AgentOptions::default()
        .with_signal(controller.signal())
        .with_abort_grace(grace);
    let control = async {
        gate.started(2).await;
        controller.abort();
        gate.release("a", ToolOutput::text("made it"));
        gate.finished("a").await;
        let _ = end_grace.finish(());
        // The loop sees the end of the grace period at its next poll...
        agentstream::yield_now().await;
        // ...so this is too late: the call was dropped.
        gate.release("b", ToolOutput::text("too late"));
    };
    let ((outcome, events), ()) = block_on(join(run(&model, &tools, options), control));
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    assert_eq!(
        results(&outcome),
        [
            ("a".into(), "made it".into(), false),
            ("b".into(), TOOL_ABORTED_MESSAGE.into(), true)
        ]
    );
    assert_eq!(ends(&events), ["a", "b"]);
}

#[test]
fn a_sequential_tool_makes_its_whole_batch_sequential() {
    // Pi 0.73.1's `executionMode: "sequential"`: one such call runs every
    // call of the batch one after the other, in call order.
    let (par, par_gate) = GatedTool::new("par");
    let (seq, seq_gate) = GatedTool::new("seq");
    let tools = ToolSet::new().with(par).with(seq.sequential());
    let model = ScriptedModel::new([
        calls(&[("p1", "par"), ("p2", "par"), ("s", "seq"), ("p3", "par")]),
        assistant([text("done")], StopReason::Stop),
    ]);
    let control = async {
        par_gate.started(1).await;
        assert_eq!(par_gate.started_ids(), ["p1"], "p2 waits for p1");
        par_gate.release("p2", ToolOutput::text("p2"));
        par_gate.release("p1", ToolOutput::text("p1"));
        seq_gate.started(1).await;
        assert_eq!(par_gate.started_ids(), ["p1", "p2"], "p3 waits for s");
        seq_gate.release("s", ToolOutput::text("s"));
        par_gate.started(3).await;
        par_gate.release("p3", ToolOutput::text("p3"));
    };
    let ((outcome, events), ()) =
        block_on(join(run(&model, &tools, AgentOptions::default()), control));
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(ends(&events), ["p1", "p2", "s", "p3"], "ends in call order");
    let ids: Vec<_> = results(&outcome).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["p1", "p2", "s", "p3"], "results in call order");
}

/// A `wait` tool whose call `a` is released with `ok` at once, and a
/// model that calls it, then answers `done` (for the `Send` tests, which
/// are native only).
#[cfg(not(target_family = "wasm"))]
fn one_released_call() -> (ToolSet<'static>, ScriptedModel) {
    let (gated, gate) = GatedTool::new("wait");
    gate.release("a", ToolOutput::text("ok"));
    let tools = ToolSet::new().with(gated);
    let model = ScriptedModel::new([
        calls(&[("a", "wait")]),
        assistant([text("done")], StopReason::Stop),
    ]);
    (tools, model)
}

#[cfg(not(target_family = "wasm"))] // MaybeSend is no bound there
#[test]
fn a_run_over_send_tools_is_a_send_future() {
    fn assert_send<F: std::future::Future + Send>(f: F) -> F {
        f
    }
    let (tools, model) = one_released_call();
    let events = Mutex::new(Vec::new());
    let future = assert_send(run_agent(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |event: AgentEvent| events.lock().unwrap().push(event.type_name()),
    ));
    let outcome = block_on(future);
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(results(&outcome), [("a".into(), "ok".into(), false)]);
    assert!(events.lock().unwrap().contains(&"tool_execution_end"));
}

#[test]
fn a_spawner_runs_each_call_through_it() {
    let spawned = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&spawned);
    let (gated, gate) = GatedTool::new("wait");
    gate.release("a", ToolOutput::text("ok"));
    gate.release("b", ToolOutput::text("ok"));
    let tools = ToolSet::new()
        .with(gated)
        .with_spawner(Arc::new(move |execution| {
            *counter.lock().unwrap() += 1;
            execution
        }));
    let model = ScriptedModel::new([
        calls(&[("a", "wait"), ("b", "wait")]),
        assistant([text("done")], StopReason::Stop),
    ]);
    let (outcome, _) = block_on(run(&model, &tools, AgentOptions::default()));
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(*spawned.lock().unwrap(), 2);
}

#[test]
fn scripted_replies_read_the_request_and_mix_with_fixed_turns() {
    let (gated, gate) = GatedTool::new("wait");
    gate.release("call_0_0", ToolOutput::text("42"));
    let tools = ToolSet::new().with(gated);
    let model = ScriptedModel::new([
        // An empty id is filled in as call_<call>_<block>.
        ScriptStep::from(assistant(
            [tool_call("", "wait", json!({}))],
            StopReason::ToolUse,
        )),
        ScriptStep::reply(|request: &Context| {
            let answer = request
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::ToolResult(r) => r.content[0].as_text().map(str::to_owned),
                    _ => None,
                })
                .unwrap_or_default();
            ScriptedTurn::message(assistant(
                [text(format!("the tool said {answer}"))],
                StopReason::Stop,
            ))
        }),
    ]);
    let (outcome, _) = block_on(run(&model, &tools, AgentOptions::default()));
    assert_eq!(results(&outcome), [("call_0_0".into(), "42".into(), false)]);
    let Some(Message::Assistant(last)) = outcome.messages.last() else {
        panic!("the run ends with the answer");
    };
    assert_eq!(last.text(), "the tool said 42");
}

#[test]
fn an_abort_right_after_a_tool_call_leaves_no_empty_text_block() {
    let model = ScriptedModel::new([ScriptedTurn::message(assistant(
        [
            tool_call("c1", "read", json!({"path": "a"})),
            text("and more text"),
        ],
        StopReason::ToolUse,
    ))
    .chunked(NonZeroUsize::new(3).unwrap())]);
    let controller = AbortController::new();
    let context = Context::from_messages([user("go").into()]);
    let message = block_on(async {
        let mut stream = model.stream(
            &context,
            StreamOptions::default().with_signal(controller.signal()),
        );
        while let Some(event) = stream.next().await {
            if matches!(event, ModelEvent::ToolCallEnd { .. }) {
                controller.abort();
            }
        }
        stream.result().await
    });
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.content.len(), 1, "{:?}", message.content);
    assert!(matches!(message.content[0], ContentBlock::ToolCall(_)));
}

#[cfg(not(target_family = "wasm"))] // MaybeSend is no bound there
#[test]
fn agent_loop_over_send_tools_gives_a_send_future_and_stream() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    let (tools, model) = one_released_call();
    let (events, run) = agentstream::agent::agent_loop(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
    );
    let (events, run) = (assert_send(events), assert_send(run));
    block_on(run);
    let outcome = block_on(events.result()).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert!(validate_linkage(&outcome.messages).is_empty());
    let types: Vec<&str> = block_on(events.map(|e| e.unwrap().type_name()).collect::<Vec<_>>());
    assert!(types.contains(&"tool_execution_end"));
}
