//! Hooks and message queues: the points where an application steers a run.
//!
//! Pi's hooks are async; these are plain functions, called on the loop's
//! task, so the loop needs no runtime to await them. A hook that needs I/O
//! can prepare its answer before the run or in a tool.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::tool::ToolOutput;
use crate::message::{Context, Message, ToolCall};

/// What `before_tool_call` decides about a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolCallDecision {
    /// Run the call as it is.
    Allow,
    /// Do not run it; its result is an error with this text.
    Block(String),
    /// Run it with these arguments instead (validated like the model's).
    Rewrite(Map<String, Value>),
}

/// Called before each call runs (after the tool is found).
pub type BeforeToolCallHook = Arc<dyn Fn(&ToolCall) -> ToolCallDecision + Send + Sync>;
/// Called with each call's output; returns the output to keep.
pub type AfterToolCallHook = Arc<dyn Fn(&ToolCall, ToolOutput) -> ToolOutput + Send + Sync>;
/// Called on a copy of the context before every model call, for pruning or
/// compaction; the run's history is not changed.
pub type TransformContextHook = Arc<dyn Fn(&mut Context) + Send + Sync>;
/// Drains messages queued by the application (steering or follow-up).
pub type MessageSource = Arc<dyn Fn() -> Vec<Message> + Send + Sync>;

/// When steering messages land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SteeringMode {
    /// After the current tool batch has finished, at the start of the next
    /// turn (Pi 0.73).
    #[default]
    AfterBatch,
    /// As soon as a call finishes: the remaining calls of the turn are
    /// skipped with error results reading [`SKIPPED_MESSAGE`] (Pi 0.58).
    /// The calls then run one after the other, since a queued message can
    /// only skip calls that have not started.
    Interrupt,
}

/// The result text of a call skipped by an interrupting steering message.
pub const SKIPPED_MESSAGE: &str = "Skipped due to queued user message.";

/// The hooks and queues of a run; every one is optional.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct AgentHooks {
    /// Allows, blocks or rewrites a call before it runs.
    pub before_tool_call: Option<BeforeToolCallHook>,
    /// Rewrites a call's output.
    pub after_tool_call: Option<AfterToolCallHook>,
    /// Transforms the context sent to the model.
    pub transform_context: Option<TransformContextHook>,
    /// Messages that steer the running agent.
    pub steering: Option<MessageSource>,
    /// Messages that start a new turn when the run would otherwise end.
    pub follow_up: Option<MessageSource>,
    /// When steering messages land.
    pub steering_mode: SteeringMode,
}

impl AgentHooks {
    pub(crate) fn steering(&self) -> Vec<Message> {
        self.steering.as_ref().map(|f| f()).unwrap_or_default()
    }

    pub(crate) fn follow_up(&self) -> Vec<Message> {
        self.follow_up.as_ref().map(|f| f()).unwrap_or_default()
    }
}

impl core::fmt::Debug for AgentHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AgentHooks")
            .field("before_tool_call", &self.before_tool_call.is_some())
            .field("after_tool_call", &self.after_tool_call.is_some())
            .field("transform_context", &self.transform_context.is_some())
            .field("steering", &self.steering.is_some())
            .field("follow_up", &self.follow_up.is_some())
            .field("steering_mode", &self.steering_mode)
            .finish()
    }
}
