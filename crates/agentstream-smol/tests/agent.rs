//! The agent loop on smol: tool calls spawned on smol's global executor,
//! and the abort's grace period on smol's timer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::agent::{
    run_agent, AgentOptions, AgentStop, AgentTool, ToolContext, ToolError, ToolOutput, ToolSet,
    TOOL_ABORTED_MESSAGE,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, Context, Message, StopReason,
};
use agentstream::model::{AbortController, ScriptedModel};
use agentstream::rt::Runtime as _;
use serde_json::{json, Map, Value};

/// Counts its calls; with `hang`, never finishes by itself.
struct Count {
    calls: Arc<Mutex<usize>>,
    hang: bool,
}

impl AgentTool for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Counts."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        *self.calls.lock().unwrap() += 1;
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(ToolOutput::text("counted"))
    }
}

fn model() -> ScriptedModel {
    ScriptedModel::new([
        assistant(
            [
                tool_call("a", "count", json!({})),
                tool_call("b", "count", json!({})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ])
}

fn results(messages: &[Message]) -> Vec<(String, bool)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => {
                Some((r.content[0].as_text().unwrap().to_owned(), r.is_error))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn tool_calls_run_as_smol_tasks() {
    let calls = Arc::new(Mutex::new(0));
    let tools = ToolSet::new()
        .with(Count {
            calls: Arc::clone(&calls),
            hang: false,
        })
        .with_spawner(agentstream_smol::Smol.tool_spawner());
    let model = model();
    let outcome = smol::block_on(run_agent(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |_| {},
    ));
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert!(validate_linkage(&outcome.messages).is_empty());
    assert_eq!(
        results(&outcome.messages),
        vec![("counted".to_owned(), false); 2]
    );
    assert_eq!(*calls.lock().unwrap(), 2);
}

#[test]
fn a_tool_still_running_after_the_grace_period_gets_an_aborted_result() {
    let calls = Arc::new(Mutex::new(0));
    let tools = ToolSet::new()
        .with(Count {
            calls: Arc::clone(&calls),
            hang: true,
        })
        .with_spawner(agentstream_smol::Smol.tool_spawner());
    let model = model();
    let controller = AbortController::new();
    let options = AgentOptions::default()
        .with_signal(controller.signal())
        .with_abort_grace(agentstream_smol::Smol.pause(Duration::from_millis(20)));
    let outcome = smol::block_on(async {
        let run = run_agent(
            &model,
            &tools,
            Context::default(),
            vec![user("go").into()],
            options,
            |_| {},
        );
        let abort = async {
            while *calls.lock().unwrap() < 2 {
                smol::future::yield_now().await;
            }
            controller.abort();
        };
        futures_util::future::join(run, abort).await.0
    });
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    assert!(validate_linkage(&outcome.messages).is_empty());
    assert_eq!(
        results(&outcome.messages),
        vec![(TOOL_ABORTED_MESSAGE.to_owned(), true); 2]
    );
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
