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
//! agent package; the events share each message
//! ([`SharedMessage`](crate::message::SharedMessage)) instead of copying it
//! per event, and the history the model reads holds the one other copy.
//! It knows no runtime: the tools of a turn are polled
//! concurrently on the caller's task, or, with a [`ToolSet`] and a
//! [`ToolSpawner`], run as tasks of a runtime
//! ([`rt::tool_spawner`](crate::rt::tool_spawner); the grace period after
//! an abort is a [`Pause`](crate::rt::Pause) on the runtime's timer).
//!
//! The result of a run is an [`AgentOutcome`]: the messages the run added
//! (prompts included), why it stopped, and how many model calls it made.
//! After every run, `context.messages` followed by the outcome's messages
//! passes [`validate_linkage`](crate::message::validate_linkage): every
//! tool call has exactly one result.
//!
//! # Where we match Pi's agent loop
//!
//! Pi 0.73.1 (`@mariozechner/pi-agent-core`) is the reference, and the
//! match is tested, not read off its source: the Pi oracle
//! (`oracle/pi-agent/transcripts.mjs`) runs the real Pi through 24
//! scripted scenarios and writes every event, the run's messages, the
//! params each tool received and the context of each model call
//! (`tests/golden/pi/`); the differential test (`tests/agent_golden.rs`)
//! plays the same scenarios through this loop and compares all of it as
//! JSON values, and the conformance suite compares the events on six
//! executors, in WebAssembly and on a microcontroller. CI regenerates the
//! transcripts with the real Pi and checks they are unchanged
//! (`.ci/pi-agent-oracle.sh`). Twenty-one scenarios are identical; three
//! differ in the documented ways below, and nothing else differs.
//!
//! - Event names and fields (`agent_start` … `agent_end`, `toolCallId`,
//!   `toolName`, `args`, `partialResult`, `result: {content, details?}`,
//!   `isError`, `toolResults`, `assistantMessageEvent`), and their order:
//!   `message_start`/`message_end` for every prompt, steering, follow-up
//!   and tool-result message; `message_update` wrapping each model event.
//! - Parallel mode in two phases: every call of the batch gets its
//!   `tool_execution_start` and its preflight (lookup, validation, then
//!   `before_tool_call`), in call order, a preflight failure ending right
//!   after its own start; then the allowed calls run together.
//!   `tool_execution_end` follows completion order; the `toolResult`
//!   messages and `turn_end`'s `toolResults` follow call order, after the
//!   last end.
//! - Sequential mode ([`ToolExecution::Sequential`], or a batch holding a
//!   call of a [`sequential`](AgentTool::sequential) tool, Pi's
//!   `executionMode: "sequential"`): each call's start, end and
//!   `toolResult` message come before the next call's start.
//! - A tool's [`prepare_arguments`](AgentTool::prepare_arguments) (Pi's
//!   `prepareArguments`) rewrites the model's arguments before validation.
//! - A batch whose every result sets [`ToolOutput::terminate`] (Pi's
//!   `terminate`, shown in `tool_execution_end`'s result) ends the calls as
//!   a turn without calls does; [`StopAfterTurnHook`] (Pi's
//!   `shouldStopAfterTurn`) ends the run after a turn's `turn_end`;
//!   [`ApiKeyHook`] (Pi's `getApiKey`) gives each model call its key.
//! - Failures are results, never panics, and every error result carries
//!   `details: {}` as Pi's do: `Tool X not found`; `Validation failed for
//!   tool "X":` with one `  - path: message` line per failure in TypeBox's
//!   words, then `Received arguments:` and the model's arguments (see
//!   [`validate_arguments`]); an `execute` error's message; a blocking
//!   hook's reason. Pi's scalar coercion runs before validation, the
//!   coerced value is what `execute` gets, and the model's original stays
//!   in the events and the history.
//! - Steering is polled before the first turn and after each batch, and
//!   lands at the start of the next turn; follow-up messages only when the
//!   run would otherwise end.
//! - `before_tool_call` (allow, block, rewrite) runs after validation, on
//!   allowed calls only; `after_tool_call` sees every executed call's
//!   output, a failed one included (it may turn it into a success);
//!   `transform_context` runs before every model call, on a copy.
//! - A model turn ending in `error` or `aborted` ends the run after
//!   `turn_end`/`agent_end`, that message last, kept as Pi keeps it. A
//!   model call that fails before streaming anything is one `message_start`
//!   and `message_end` of the error message, no update.
//! - A tool call's streaming partial holds the arguments parsed so far
//!   (partial-JSON parsing, as pi-ai's providers do) and, serialized, no
//!   field Pi's has not.
//!
//! # Where we deliberately differ, and why
//!
//! Each item is named by a test; the first two are the differential
//! test's `Difference`s, applied to Pi's transcripts before comparing.
//!
//! - **A `length` turn's calls are not executed** (differential scenario
//!   `length_with_tool_call`; `a_length_turn_gets_not_executed_results_and_the_run_goes_on`).
//!   Their arguments may be truncated, and running a half-written command
//!   is worse than asking again. Each call gets its `tool_execution_start`,
//!   then an end and a result reading [`NOT_EXECUTED_MESSAGE`] (error,
//!   `details: {}`), and the run goes on as Pi's does: the next turn runs
//!   with those results, so the model can try again. Pi 0.73.1 executes
//!   the calls.
//! - **No model call after an abort** (scenarios `abort_tool_honours_signal`
//!   and `abort_tool_ignores_signal`;
//!   `abort_during_a_tool_ends_the_run_without_another_model_call`). Pi
//!   starts one more turn whose model call returns `aborted` at once and
//!   ends the run with that empty aborted message; we end the run after
//!   the batch and save the call. So the outcome here ends with the tool
//!   results, and [`AgentOutcome::stop`] says [`AgentStop::Aborted`].
//! - **An abort does not wait forever for a tool**
//!   (`without_a_grace_period_a_running_tool_is_dropped_at_the_abort`,
//!   `within_the_grace_period_a_tool_still_finishes_and_the_late_one_is_aborted`).
//!   Pi waits for every running tool, however long it ignores its signal.
//!   Here a tool still running when the abort grace
//!   ([`AgentOptions::with_abort_grace`]) ends is
//!   dropped and gets [`TOOL_ABORTED_MESSAGE`]; without a grace timer (the
//!   core has no clock) it gets one more poll, in which a tool watching
//!   its signal still returns its own result, as Pi's would. An unbounded
//!   grace (a future that never completes) waits as Pi does; the
//!   `abort_tool_ignores_signal` scenario runs that way. In sequential
//!   mode, calls not started before the abort get the same result without
//!   running (Pi runs them with an aborted signal)
//!   (`calls_not_started_at_an_abort_get_aborted_results_without_running`).
//! - **The calls of an `error` or `aborted` turn get results**
//!   (`an_error_turn_with_tool_calls_gets_not_executed_results`): each an
//!   error reading [`NOT_EXECUTED_MESSAGE`], so the history stays
//!   linkage-valid; Pi leaves them without any (its `turn_end` has
//!   `toolResults: []`).
//! - **The turn limit is ours**: Pi has none. [`AgentOptions::max_turns`]
//!   ends the run after the N-th turn with [`AgentStop::MaxTurns`] where
//!   Pi's `shouldStopAfterTurn` returning true after that turn ends its
//!   loop; the events are the same (scenario `max_turns`, which the oracle
//!   runs with such a `shouldStopAfterTurn`).
//! - **`before_tool_call` decides with a value**: [`ToolCallDecision`]'s
//!   `Rewrite` replaces the arguments (and they are validated again), where
//!   Pi's hook mutates the validated arguments object in place; the hook is
//!   given the call as the model sent it (Pi passes the validated
//!   arguments beside it).
//! - **Interrupting steering** ([`SteeringMode::Interrupt`]) is Pi 0.58's
//!   behaviour, kept as an option: the remaining calls are skipped with
//!   [`SKIPPED_MESSAGE`]
//!   (`interrupting_steering_skips_the_remaining_calls_with_pi_058_wording`).
//! - **Hooks may be plain functions or return futures**
//!   ([`BeforeToolCallHook::new`] / [`BeforeToolCallHook::new_async`], …);
//!   Pi's are always async. A plain one costs no allocation per call.
//! - **Subscribers are not awaited** ([`Agent::subscribe`]): Pi awaits each
//!   listener before the loop goes on; here every stream subscriber has a
//!   bounded queue of its own, read at its own pace (see [`Subscription`]).
//! - **The validator knows the keywords tool schemas use** (see
//!   [`validate_arguments`]); TypeBox knows all of JSON Schema, so a
//!   schema with `pattern`, `oneOf` or `format` is validated here only as
//!   far as the subset goes. Properties are checked in the schema's map
//!   order, alphabetical unless serde_json's `preserve_order` is on (TypeBox
//!   follows the schema's text).
//!
//! # The history after an abort
//!
//! A run aborted while the model streams ends with an `aborted` assistant
//! message, kept in the history as Pi keeps it. The next request leaves
//! that message out: every request builder runs
//! [`transform_messages`](crate::message::transform), which does not replay
//! failed or aborted turns (their half-written tool calls or reasoning are
//! refused by the endpoints). So after an abort and a new prompt the
//! provider sees two user messages in a row, the aborted turn's prompt and
//! the new one. That is what Pi does too (its `transformMessages` skips
//! the same messages).

// On wasm, tools, hooks and subscribers need not be `Send`/`Sync` (see
// `MaybeSend`), so the `Arc`s that share them are not either: by design.
#![cfg_attr(target_family = "wasm", allow(clippy::arc_with_non_send_sync))]

mod auto_compaction;
mod auto_retry;
mod event_access;
mod events;
mod execute;
mod gate;
mod hooks;
mod maybe_send;
mod model_turn;
mod options;
mod progress;
mod run;
#[cfg(feature = "schemars")]
mod schema;
mod state;
mod stateful;
mod subscribe;
mod tool;
mod toolset;
mod validate;

pub use auto_compaction::{AutoCompaction, Compactor};
pub use auto_retry::{is_retryable_error, AutoRetry, DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_RETRIES};
pub use events::AgentEvent;
pub use execute::TOOL_ABORTED_MESSAGE;
pub use gate::{GateHandle, GatedTool};
pub use hooks::{
    AfterToolCallHook, AgentHooks, ApiKeyHook, BeforeToolCallHook, MessageSource, SteeringMode,
    StopAfterTurnHook, ToolCallDecision, TransformContextHook, TurnSummary, SKIPPED_MESSAGE,
};
#[doc(hidden)]
pub use maybe_send::Captures;
pub use maybe_send::{BoxFuture, MaybeSend, MaybeSync};
pub use model_turn::NO_TERMINAL_MESSAGE;
pub use options::{AgentOptions, AgentOutcome, AgentStop, ArgumentValidator, ToolExecution};
pub use run::{agent_loop, run_agent, AgentEventStream, NOT_EXECUTED_MESSAGE};
#[cfg(feature = "schemars")]
pub use schema::derived_parameters;
pub use state::{AgentError, AgentFailure, AgentState, QueueMode};
pub use stateful::{Agent, WaitForIdle};
pub use subscribe::{Lagged, SubscriberId, Subscription, DEFAULT_SUBSCRIBER_CAPACITY};
pub use tool::{
    parse_args, AgentTool, ProgressReporter, SendExecution, ToolContext, ToolError,
    ToolExecutionResult, ToolFuture, ToolOutput, ToolSpawner, TypedTool,
};
pub use toolset::ToolSet;
pub use validate::{validate_arguments, validate_arguments_strict};
