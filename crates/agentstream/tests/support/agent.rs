//! What the core's agent-loop tests share (`agent.rs`, `agent_control.rs`,
//! `agent_loop_features.rs`, `agent_object.rs`): the loop run on a `go`
//! prompt with its events collected, the tool results of a history, a
//! model whose every call fails with an HTTP status, a tool made of a
//! closure, and an agent's events recorded as Pi's JSON (also
//! `agent_auto_compaction.rs`, `agent_auto_retry.rs`, `agent_session_id.rs`).
#![allow(dead_code)]

use std::future::Future;
use std::sync::{Arc, Mutex};

use agentstream::agent::{
    run_agent, Agent, AgentEvent, AgentOptions, AgentOutcome, AgentTool, ToolContext, ToolError,
    ToolOutput, ToolSet,
};
use agentstream::message::{assistant, user, validate_linkage, Context, Message, StopReason};
use agentstream::model::{
    ErrorCause, ErrorReason, HttpFailure, Model, ModelEvent, ModelStream, StreamOptions,
};
use serde_json::{json, Map, Value};

/// Runs the loop on `model` and `tools` from an empty context with the
/// prompt `go`, collecting every event; checks the history's linkage.
pub async fn run_go(
    model: &dyn Model,
    tools: &ToolSet<'_>,
    options: AgentOptions,
) -> (AgentOutcome, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let outcome = run_agent(
        model,
        tools,
        Context::default(),
        vec![user("go").into()],
        options,
        |event| events.push(event),
    )
    .await;
    assert_eq!(validate_linkage(&outcome.messages), vec![], "linkage");
    (outcome, events)
}

/// Each tool result of `messages`, in history order: its call id, its
/// first block's text (empty if it has none) and whether it is an error.
pub fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                r.tool_call_id.clone(),
                r.content
                    .first()
                    .and_then(|block| block.as_text())
                    .unwrap_or("")
                    .to_owned(),
                r.is_error,
            )),
            _ => None,
        })
        .collect()
}

/// Fails every call with HTTP `status`.
pub struct Failing(pub u16);

impl Model for Failing {
    fn stream(&self, _: &Context, _: StreamOptions) -> ModelStream {
        let (mut producer, stream) = ModelStream::channel();
        let mut message = assistant([], StopReason::Error);
        message.error_message = Some(format!("HTTP {}", self.0));
        producer
            .push_error(
                ModelEvent::error(ErrorReason::Error, message),
                ErrorCause::Http(HttpFailure::new(self.0)),
            )
            .unwrap();
        stream
    }
}

/// A tool taking any object (`{"type": "object"}`) whose call is the
/// future `run` makes of its arguments; built by [`object_tool`].
pub struct ObjectTool<F> {
    name: &'static str,
    description: &'static str,
    run: F,
}

/// The tool `name`, described by `description`, whose calls run `run`.
pub fn object_tool<F, Fut>(name: &'static str, description: &'static str, run: F) -> ObjectTool<F>
where
    F: Fn(Map<String, Value>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    ObjectTool {
        name,
        description,
        run,
    }
}

impl<F, Fut> AgentTool for ObjectTool<F>
where
    F: Fn(Map<String, Value>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        (self.run)(args).await
    }
}

/// The events of the agent's subscribers from now on, as Pi's JSON, less
/// the streaming ones (`message_update`).
pub fn recorded<M: Model>(agent: &Agent<M>) -> Arc<Mutex<Vec<Value>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    agent.subscribe_fn(move |event: &AgentEvent| {
        if event.type_name() != "message_update" {
            sink.lock()
                .unwrap()
                .push(serde_json::to_value(event).unwrap());
        }
    });
    events
}
