//! The `Agent` holds a session id (Pi's `sessionId`) and a thinking level
//! (Pi's `thinkingLevel`), and every model call of its runs carries them in
//! its `StreamOptions`, tool-call turns included.

use std::sync::{Arc, Mutex};

use agentstream::agent::{Agent, ToolError, ToolOutput, ToolSet};
use agentstream::message::{assistant, text, tool_call, Context, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, StreamOptions, ThinkingLevel};
use serde_json::json;

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::object_tool;

/// A scripted model that writes down each call's session id and thinking
/// level.
struct Seen {
    inner: ScriptedModel,
    session_ids: Mutex<Vec<Option<String>>>,
    levels: Mutex<Vec<Option<ThinkingLevel>>>,
}

impl Model for Seen {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.session_ids
            .lock()
            .unwrap()
            .push(options.session_id.clone());
        self.levels.lock().unwrap().push(options.thinking);
        self.inner.stream(context, options)
    }
}

/// A `Seen` answering a tool call, then `done`, then `again`, and the tools.
fn scripted() -> (Arc<Seen>, ToolSet<'static>) {
    let model = Arc::new(Seen {
        inner: ScriptedModel::new([
            assistant([tool_call("c1", "noop", json!({}))], StopReason::ToolUse),
            assistant([text("done")], StopReason::Stop),
            assistant([text("again")], StopReason::Stop),
        ]),
        session_ids: Mutex::new(Vec::new()),
        levels: Mutex::new(Vec::new()),
    });
    // A tool that answers `ok`.
    let noop = object_tool("noop", "does nothing", |_| async {
        Ok::<_, ToolError>(ToolOutput::text("ok"))
    });
    (model, ToolSet::new().with(noop))
}

#[test]
fn every_call_of_a_run_carries_the_agent_s_thinking_level() {
    let (model, tools) = scripted();
    let agent = Agent::new(Arc::clone(&model), tools);
    assert_eq!(agent.thinking_level(), None);
    agent.set_thinking_level(Some(ThinkingLevel::High));
    assert_eq!(agent.thinking_level(), Some(ThinkingLevel::High));
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    agent.set_thinking_level(Some(ThinkingLevel::Off));
    futures_executor::block_on(agent.prompt_text("more")).unwrap();
    let seen = model.levels.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            Some(ThinkingLevel::High),
            Some(ThinkingLevel::High),
            Some(ThinkingLevel::Off)
        ]
    );
}

#[test]
fn every_call_of_a_run_carries_the_agent_s_session_id() {
    let (model, tools) = scripted();
    let agent = Agent::new(Arc::clone(&model), tools);
    assert_eq!(agent.session_id(), None);
    agent.set_session_id(Some("s-42".into()));
    assert_eq!(agent.session_id().as_deref(), Some("s-42"));
    futures_executor::block_on(agent.prompt_text("go")).unwrap();
    agent.set_session_id(None);
    futures_executor::block_on(agent.prompt_text("more")).unwrap();
    let seen = model.session_ids.lock().unwrap().clone();
    assert_eq!(
        seen,
        [Some("s-42".to_owned()), Some("s-42".to_owned()), None]
    );
}
