//! The agent loop: a model, a set of tools, and the turns between them.
//!
//! [`run_agent`] (or [`agent_loop`], its [`EventStream`](crate::EventStream)
//! form) calls the model, runs the tool calls of its answer, appends one
//! `toolResult` per call, and calls the model again until it answers
//! without tool calls. It emits [`AgentEvent`]s in the JSON shape of Pi's
//! agent package. It knows no runtime: the tools of a turn are polled
//! concurrently on the caller's task.

mod events;
mod execute;
mod gate;
mod hooks;
mod model_turn;
mod options;
mod run;
mod tool;
mod validate;

pub use events::AgentEvent;
pub use execute::TOOL_ABORTED_MESSAGE;
pub use gate::{GateHandle, GatedTool};
pub use hooks::{
    AfterToolCallHook, AgentHooks, BeforeToolCallHook, MessageSource, SteeringMode,
    ToolCallDecision, TransformContextHook, SKIPPED_MESSAGE,
};
pub use model_turn::NO_TERMINAL_MESSAGE;
pub use options::{
    AbortGrace, AgentOptions, AgentOutcome, AgentStop, ArgumentValidator, ToolExecution,
};
pub use run::{agent_loop, run_agent, AgentEventStream, NOT_EXECUTED_MESSAGE};
pub use tool::{
    parse_args, AgentTool, ProgressReporter, SendAgentTool, SendExecution, SendToolSet,
    ToolContext, ToolError, ToolOutput, ToolSet, ToolSpawner, Tools,
};
pub use validate::{validate_arguments, validate_arguments_strict};
