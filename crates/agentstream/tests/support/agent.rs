//! What the core's agent-loop tests share (`agent.rs`, `agent_control.rs`,
//! `agent_loop_features.rs`, `agent_object.rs`): the loop run on a `go`
//! prompt with its events collected, the tool results of a history, and a
//! model whose every call fails with an HTTP status.
#![allow(dead_code)]

use agentstream::agent::{run_agent, AgentEvent, AgentOptions, AgentOutcome, ToolSet};
use agentstream::message::{assistant, user, validate_linkage, Context, Message, StopReason};
use agentstream::model::{
    ErrorCause, ErrorReason, HttpFailure, Model, ModelEvent, ModelStream, StreamOptions,
};

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
