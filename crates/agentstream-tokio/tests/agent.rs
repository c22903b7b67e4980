//! The agent loop on tokio: tool calls spawned on the runtime's worker
//! threads, and the abort's grace period on tokio's timer.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
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

/// Records the thread it runs on; with `hang`, never finishes by itself.
struct Where {
    threads: Arc<Mutex<Vec<ThreadId>>>,
    hang: bool,
}

impl AgentTool for Where {
    fn name(&self) -> &str {
        "where"
    }
    fn description(&self) -> &str {
        "Says where it runs."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(ToolOutput::text("here"))
    }
}

fn model() -> ScriptedModel {
    ScriptedModel::new([
        assistant(
            [
                tool_call("a", "where", json!({})),
                tool_call("b", "where", json!({})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ])
}

#[test]
fn tool_calls_run_on_the_runtime_worker_threads() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let threads = Arc::new(Mutex::new(Vec::new()));
    let tools = ToolSet::new()
        .with(Where {
            threads: Arc::clone(&threads),
            hang: false,
        })
        .with_spawner(agentstream_tokio::Tokio.tool_spawner());
    let model = model();
    let outcome = runtime.block_on(run_agent(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |_| {},
    ));
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert!(validate_linkage(&outcome.messages).is_empty());
    let caller = std::thread::current().id();
    let threads = threads.lock().unwrap();
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
    let threads = Arc::new(Mutex::new(Vec::new()));
    let tools = ToolSet::new()
        .with(Where {
            threads: Arc::clone(&threads),
            hang: true,
        })
        .with_spawner(agentstream_tokio::Tokio.tool_spawner());
    let model = model();
    let controller = AbortController::new();
    let options = AgentOptions::default()
        .with_signal(controller.signal())
        .with_abort_grace(agentstream_tokio::Tokio.pause(Duration::from_millis(20)));
    let outcome = runtime.block_on(async {
        let run = run_agent(
            &model,
            &tools,
            Context::default(),
            vec![user("go").into()],
            options,
            |_| {},
        );
        let abort = async {
            while threads.lock().unwrap().len() < 2 {
                tokio::task::yield_now().await;
            }
            controller.abort();
        };
        futures_util::future::join(run, abort).await.0
    });
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    assert!(validate_linkage(&outcome.messages).is_empty());
    let aborted: Vec<_> = outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => {
                Some((r.content[0].as_text().unwrap().to_owned(), r.is_error))
            }
            _ => None,
        })
        .collect();
    assert_eq!(aborted, vec![(TOOL_ABORTED_MESSAGE.to_owned(), true); 2]);
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
