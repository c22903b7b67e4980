//! The agent loop: a model, a set of tools, and the turns between them.
//!
//! [`Agent`] is the object Pi's users drive: it owns the transcript, the
//! model, the tools, the system prompt and the options, and offers Pi's
//! operations (prompt, continue, steer, follow up, abort, wait for idle,
//! reset, subscribe, state); its docs map them one by one. It is built on
//! the low-level form below.
//!
//! [`run_agent`] (or [`agent_loop`], its [`EventStream`](crate::EventStream)
//! form) calls the model, runs the tool calls of its answer, appends one
//! `toolResult` per call, and calls the model again until it answers
//! without tool calls. It emits [`AgentEvent`]s in the JSON shape of Pi's
//! agent package. It knows no runtime: the tools of a turn are polled
//! concurrently on the caller's task, or, with a [`ToolSet`] and a
//! [`ToolSpawner`], run as tasks of a runtime (the adapters provide
//! spawners and [`AbortGrace`] timers).
//!
//! The result of a run is an [`AgentOutcome`]: the messages the run added
//! (prompts included), why it stopped, and how many model calls it made.
//! After every run, `context.messages` followed by the outcome's messages
//! passes [`validate_linkage`](crate::message::validate_linkage): every
//! tool call has exactly one result.
//!
//! # Where we match Pi's agent loop
//!
//! - Event names and fields (`agent_start` … `agent_end`, `toolCallId`,
//!   `toolName`, `args`, `partialResult`, `result: {content, details?}`,
//!   `isError`, `toolResults`, `assistantMessageEvent`), and their order:
//!   `message_start`/`message_end` for every prompt, steering, follow-up
//!   and tool-result message; `message_update` wrapping each model event.
//! - Parallel tool execution by default; `tool_execution_*` events in
//!   real time (completion order); `toolResult` messages and `turn_end`'s
//!   `toolResults` in the order of the calls, immediate failures included
//!   (Pi 0.73; Pi 0.58 put immediate failures first).
//! - Failures are results, never panics: `Tool X not found`, `Validation
//!   failed for tool "X"` naming each path and the received arguments,
//!   an `execute` error's message; Pi's scalar coercion before validation,
//!   with the coerced value passed to `execute` and the model's original
//!   kept in events and history.
//! - Steering after the current batch, at the start of the next turn
//!   (Pi 0.73), or interrupting with `Skipped due to queued user message.`
//!   for the remaining calls (Pi 0.58's behaviour and wording); follow-up
//!   messages only when the run would otherwise end.
//! - `before_tool_call` (allow, block, rewrite), `after_tool_call`,
//!   `transform_context` before every model call (on a copy).
//! - A model turn ending in `error` or `aborted` ends the run after
//!   `turn_end`/`agent_end`, that message last, kept as Pi keeps it.
//!
//! # Where we deliberately differ, and why
//!
//! - **A `length` turn's calls are not executed.** Their arguments may be
//!   truncated, and running a half-written command is worse than asking
//!   again; each call gets an error result reading
//!   [`NOT_EXECUTED_MESSAGE`] (as do the calls of an `error` or `aborted`
//!   turn), so the history stays linkage-valid. Pi 0.73 runs them.
//! - **No model call after an abort.** Pi 0.73 starts one more turn whose
//!   model call returns `aborted` at once; the outcome is the same, and
//!   we save the call. A tool still running when the [`AbortGrace`] period
//!   ends is dropped and gets [`TOOL_ABORTED_MESSAGE`]; calls not started
//!   yet get the same result.
//! - **The turn limit is typed**: [`AgentStop::MaxTurns`], not an error
//!   string.
//! - **Hooks may be plain functions or return futures**
//!   ([`BeforeToolCallHook::new`] / [`BeforeToolCallHook::new_async`], …);
//!   Pi's are always async. A plain one costs no allocation per call.
//! - **Subscribers are not awaited** ([`Agent::subscribe`]): Pi awaits each
//!   listener before the loop goes on; here every stream subscriber has a
//!   bounded queue of its own, read at its own pace (see [`Subscription`]).
//! - **Per-tool sequential calls** ([`AgentTool::sequential`]): the calls
//!   before such a call finish first, it runs alone, then the rest of the
//!   turn continues in parallel. Interrupting steering runs a turn's calls
//!   one at a time, since a queued message can only skip calls that have
//!   not started.
//! - **Without a grace timer, an abort settles running tools at once**
//!   (after one more poll, in which a tool watching its signal can still
//!   return its own result): the core has no clock, and waiting forever
//!   would let one stuck tool hold the run.

// On wasm, tools, hooks and subscribers need not be `Send`/`Sync` (see
// `MaybeSend`), so the `Arc`s that share them are not either: by design.
#![cfg_attr(target_family = "wasm", allow(clippy::arc_with_non_send_sync))]

mod agent_object;
mod events;
mod execute;
mod gate;
mod hooks;
mod maybe_send;
mod model_turn;
mod options;
mod run;
mod state;
mod subscribe;
mod tool;
mod toolset;
mod validate;

pub use agent_object::{Agent, WaitForIdle};
pub use events::AgentEvent;
pub use execute::TOOL_ABORTED_MESSAGE;
pub use gate::{GateHandle, GatedTool};
pub use hooks::{
    AfterToolCallHook, AgentHooks, BeforeToolCallHook, MessageSource, SteeringMode,
    ToolCallDecision, TransformContextHook, SKIPPED_MESSAGE,
};
#[doc(hidden)]
pub use maybe_send::Captures;
pub use maybe_send::{BoxFuture, MaybeSend, MaybeSync};
pub use model_turn::NO_TERMINAL_MESSAGE;
pub use options::{
    AbortGrace, AgentOptions, AgentOutcome, AgentStop, ArgumentValidator, ToolExecution,
};
pub use run::{agent_loop, run_agent, AgentEventStream, NOT_EXECUTED_MESSAGE};
pub use state::{AgentError, AgentFailure, AgentState, QueueMode};
pub use subscribe::{Lagged, SubscriberId, Subscription, DEFAULT_SUBSCRIBER_CAPACITY};
pub use tool::{
    parse_args, AgentTool, ProgressReporter, SendExecution, ToolContext, ToolError,
    ToolExecutionResult, ToolFuture, ToolOutput, ToolSpawner, TypedTool,
};
pub use toolset::ToolSet;
pub use validate::{validate_arguments, validate_arguments_strict};
