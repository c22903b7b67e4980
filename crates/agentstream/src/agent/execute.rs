//! Running the tool calls of one turn: lookup, hooks, validation, the
//! parallel/sequential policy, progress, and the abort's grace period.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context as TaskContext, Poll};

use serde_json::{Map, Value};

use super::events::AgentEvent;
use super::hooks::{SteeringMode, ToolCallDecision, SKIPPED_MESSAGE};
use super::options::{AgentOptions, ToolExecution};
use super::progress::ProgressReceiver;
use super::tool::{ProgressReporter, ToolContext, ToolExecutionResult, ToolOutput};
use super::toolset::ToolSet;
use crate::message::{Message, SharedMessage, ToolCall, ToolResultMessage};
use crate::model::AbortSignal;

/// The text of the result of a call that had not finished when the run was
/// aborted (after the grace period, if there is one), or that had not
/// started yet.
pub const TOOL_ABORTED_MESSAGE: &str = "aborted: the run was aborted before the tool finished";

/// What a turn's batch of calls produced.
pub(super) struct Batch {
    /// The results, in call order.
    pub(super) results: Vec<Arc<ToolResultMessage>>,
    /// The steering messages that interrupted the batch, if any.
    pub(super) steered: Vec<Message>,
    /// Whether every result set the [`terminate`](ToolOutput::terminate)
    /// hint (Pi's `shouldTerminateToolBatch`; never for an empty batch).
    pub(super) terminate: bool,
}

impl Batch {
    /// The batch of `results` of calls that were not run: each result's
    /// message is emitted, in call order; nothing steered, no termination.
    pub(super) fn unrun<E: Fn(AgentEvent)>(results: Vec<Arc<ToolResultMessage>>, emit: &E) -> Self {
        for result in &results {
            emit_result_message(result, emit);
        }
        Batch {
            results,
            steered: Vec::new(),
            terminate: false,
        }
    }
}

/// Runs a turn's calls as Pi 0.73.1 does and emits their events, the
/// `toolResult` messages' `message_start`/`message_end` included.
///
/// In parallel mode every call first gets its `tool_execution_start` and
/// its preflight (lookup, argument preparation, validation,
/// `before_tool_call`), in call order, a preflight failure ending right
/// after its start; then the allowed calls run together, each ending when
/// it completes. The `toolResult` messages follow, in call order, after the
/// last end. In sequential mode (chosen in the options, or because one of
/// the batch's tools is [`sequential`](super::AgentTool::sequential), as
/// Pi's `executionMode: "sequential"`; and with interrupting steering)
/// each call starts, runs, ends and has its `toolResult` message before the
/// next call starts.
pub(super) async fn run_calls<E>(
    tools: &ToolSet<'_>,
    calls: &[&ToolCall],
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &E,
) -> Batch
where
    E: Fn(AgentEvent),
{
    let interrupt = options.hooks.steering_mode == SteeringMode::Interrupt;
    let mut results = Vec::with_capacity(calls.len());
    let parallel = options.tool_execution == ToolExecution::Parallel
        && !interrupt
        && !calls.iter().any(|call| tools.sequential(&call.name));
    if parallel {
        let terminate = run_group(tools, calls, signal, options, emit, &mut results).await;
        for result in &results {
            emit_result_message(result, emit);
        }
        return Batch {
            results,
            steered: Vec::new(),
            terminate,
        };
    }
    let mut steered = Vec::new();
    let mut terminate = !calls.is_empty();
    for call in calls {
        let result = if !steered.is_empty() {
            terminate = false;
            settle_unrun(call, SKIPPED_MESSAGE, options, emit)
        } else if signal.is_aborted() {
            terminate = false;
            settle_unrun(call, TOOL_ABORTED_MESSAGE, options, emit)
        } else {
            emit_start(call, emit);
            let output = match preflight(tools, call, options).await {
                Err(output) => output,
                Ok(arguments) => execute(tools, call, arguments, signal, options, emit).await,
            };
            terminate &= output.terminate;
            emit_end(call, &output, emit);
            into_result(call, output, options.now_unix_ms())
        };
        emit_result_message(&result, emit);
        results.push(result);
        if interrupt && steered.is_empty() {
            steered = options.hooks.steering();
        }
    }
    Batch {
        results,
        steered,
        terminate,
    }
}

/// The calls of a parallel batch: every start and preflight in call order,
/// then the allowed calls together; appends the results to `results` in
/// call order and returns whether every one set the `terminate` hint.
async fn run_group<E>(
    tools: &ToolSet<'_>,
    group: &[&ToolCall],
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &E,
    results: &mut Vec<Arc<ToolResultMessage>>,
) -> bool
where
    E: Fn(AgentEvent),
{
    // Each call's preflight failure, or its arguments for `execute`.
    let mut prepared = Vec::with_capacity(group.len());
    for call in group {
        emit_start(call, emit);
        let preflight = preflight(tools, call, options).await;
        if let Err(output) = &preflight {
            emit_end(call, output, emit);
        }
        prepared.push(preflight);
    }
    let allowed = prepared
        .iter()
        .filter(|preflight| preflight.is_ok())
        .count();
    let mut runs = group
        .iter()
        .zip(&mut prepared)
        .filter_map(|(call, preflight)| match preflight {
            Ok(arguments) => Some((call, core::mem::take(arguments))),
            Err(_) => None,
        })
        .map(|(call, arguments)| async move {
            let output = execute(tools, call, arguments, signal, options, emit).await;
            emit_end(call, &output, emit);
            output
        });
    // A lone allowed call is awaited as it is: `join_all` would allocate
    // its slots and its output vector for one future.
    let mut lone = None;
    let mut outputs = Vec::new().into_iter();
    if allowed == 1 {
        if let Some(run) = runs.next() {
            lone = Some(run.await);
        }
    } else {
        outputs = futures_util::future::join_all(runs).await.into_iter();
    }
    let mut terminate = !group.is_empty();
    for (call, preflight) in group.iter().zip(prepared) {
        let output = match preflight {
            Err(output) => output,
            // One output per allowed call, in the same order; the fallback
            // is never taken.
            Ok(_) => lone
                .take()
                .or_else(|| outputs.next())
                .unwrap_or_else(|| failure(TOOL_ABORTED_MESSAGE)),
        };
        terminate &= output.terminate;
        results.push(into_result(call, output, options.now_unix_ms()));
    }
    terminate
}

/// An error result as Pi makes one (`createErrorToolResult`): one text
/// block and `details: {}`.
pub(super) fn failure(text: impl Into<String>) -> ToolOutput {
    ToolOutput::error(text).with_details(Value::Object(Map::new()))
}

/// The result of a call that never runs (cut off by `length`, skipped by
/// an interrupting steering message, or reached after an abort): its start
/// and end events, and its `toolResult` message's events.
pub(super) fn settle_unrun<E: Fn(AgentEvent)>(
    call: &ToolCall,
    text: &str,
    options: &AgentOptions,
    emit: &E,
) -> Arc<ToolResultMessage> {
    emit_start(call, emit);
    let output = failure(text);
    emit_end(call, &output, emit);
    into_result(call, output, options.now_unix_ms())
}

/// The error result of a call that is not executed and gets no events of
/// its own (the calls of an `error` or `aborted` turn).
pub(super) fn unrun_result(
    call: &ToolCall,
    text: &str,
    options: &AgentOptions,
) -> Arc<ToolResultMessage> {
    into_result(call, failure(text), options.now_unix_ms())
}

fn emit_start<E: Fn(AgentEvent)>(call: &ToolCall, emit: &E) {
    emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Value::Object(call.arguments.clone()),
    });
}

fn emit_end<E: Fn(AgentEvent)>(call: &ToolCall, output: &ToolOutput, emit: &E) {
    emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: ToolExecutionResult::new(output.content.clone(), output.details.clone())
            .with_terminate(output.terminate),
        is_error: output.is_error,
    });
}

/// A `toolResult` message entering the history: `message_start`, then
/// `message_end`, both sharing the message.
pub(super) fn emit_result_message<E: Fn(AgentEvent)>(result: &Arc<ToolResultMessage>, emit: &E) {
    emit(AgentEvent::MessageStart {
        message: SharedMessage::ToolResult(result.clone()),
    });
    emit(AgentEvent::MessageEnd {
        message: SharedMessage::ToolResult(result.clone()),
    });
}

/// The `toolResult` message of a call, shared by its events from here on.
fn into_result(call: &ToolCall, output: ToolOutput, timestamp: u64) -> Arc<ToolResultMessage> {
    Arc::new(ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: output.content,
        details: output.details,
        is_error: output.is_error,
        timestamp,
        extra: Default::default(),
    })
}

/// Runs an allowed call: its execution under the abort's cutoff, its
/// progress as `tool_execution_update` events, then `after_tool_call` on
/// what it returned (an `Err` included, as Pi does; not on a call dropped
/// at the cutoff).
async fn execute<E>(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    arguments: Map<String, Value>,
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &E,
) -> ToolOutput
where
    E: Fn(AgentEvent),
{
    let (sink, progress) = ProgressReceiver::new();
    let cx = ToolContext {
        tool_call_id: &call.id,
        signal: signal.clone(),
        progress: ProgressReporter {
            sink,
            _call: PhantomData,
        },
    };
    let Some(execution) = tools.execute(&call.name, arguments, cx) else {
        return not_found(call);
    };
    // Each update carries the arguments as the model sent them, copied
    // only for a tool that reports progress.
    let report = |partial_result: Value| {
        emit(AgentEvent::ToolExecutionUpdate {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: Value::Object(call.arguments.clone()),
            partial_result,
        })
    };
    let output = match guarded(execution, signal, options, progress, report).await {
        None => return failure(TOOL_ABORTED_MESSAGE),
        Some(Err(error)) => with_empty_details(error.into_output()),
        Some(Ok(output)) => output,
    };
    match &options.hooks.after_tool_call {
        Some(after) => after.call(call, output).get().await,
        None => output,
    }
}

/// A running call: its execution, the abort's cutoff (the signal, then the
/// grace period), and its progress queue. Resolves to the execution's
/// output, or `None` if the cutoff came first. The execution is polled
/// before the cutoff, so a tool that reacts to the abort at once still
/// returns its own result; progress reports are handed to `report` as
/// soon as they are seen, before the output when both are ready.
///
/// A struct rather than `select` over `pin!`ned locals: nothing here holds
/// a reference into its own future across an await.
fn guarded<'a, F, R>(
    execution: F,
    signal: &'a AbortSignal,
    options: &AgentOptions,
    progress: ProgressReceiver,
    report: R,
) -> Guarded<F, impl Future<Output = ()> + 'a, R>
where
    F: Future,
    R: Fn(Value),
{
    let grace = options.abort_grace.clone();
    let cutoff = async move {
        signal.aborted().await;
        if let Some(grace) = grace {
            grace.start().await;
        }
    };
    Guarded {
        execution,
        cutoff,
        progress,
        report,
    }
}

pin_project_lite::pin_project! {
    struct Guarded<F, C, R> {
        #[pin]
        execution: F,
        #[pin]
        cutoff: C,
        progress: ProgressReceiver,
        report: R,
    }
}

impl<F: Future, C: Future<Output = ()>, R: Fn(Value)> Future for Guarded<F, C, R> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let polled = this.execution.poll(cx);
        this.progress.drain(cx, &*this.report);
        if let Poll::Ready(output) = polled {
            return Poll::Ready(Some(output));
        }
        this.cutoff.poll(cx).map(|()| None)
    }
}

/// A tool's `Err` as its error result: the error's own details, or `{}`
/// as Pi gives every error result.
fn with_empty_details(output: ToolOutput) -> ToolOutput {
    if output.details.is_some() {
        output
    } else {
        output.with_details(Value::Object(Map::new()))
    }
}

fn not_found(call: &ToolCall) -> ToolOutput {
    failure(format!("Tool {} not found", call.name))
}

/// A call's preflight, in Pi's order: the tool is looked up, the model's
/// arguments are prepared by the tool
/// ([`prepare_arguments`](super::AgentTool::prepare_arguments)) and
/// validated (and coerced), then `before_tool_call` allows,
/// blocks or rewrites the call (a rewrite is validated in turn). Returns
/// the arguments `execute` gets (the events and the history keep what the
/// model sent), or the error result of a call that cannot run.
async fn preflight(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    options: &AgentOptions,
) -> Result<Map<String, Value>, ToolOutput> {
    let Some(schema) = tools.parameters(&call.name) else {
        return Err(not_found(call));
    };
    let prepared = tools.prepare_arguments(&call.name, &call.arguments);
    let checked = validated(
        schema,
        call,
        prepared.as_ref().unwrap_or(&call.arguments),
        options,
    )?;
    let decision = match &options.hooks.before_tool_call {
        Some(before) => Some(before.call(call).get().await),
        None => None,
    };
    match decision {
        None | Some(ToolCallDecision::Allow) => Ok(checked),
        Some(ToolCallDecision::Rewrite(arguments)) => validated(schema, call, &arguments, options),
        Some(ToolCallDecision::Block(reason)) => Err(failure(reason)),
    }
}

/// A copy of `proposed` checked against `schema` by the run's validator,
/// coerced, or the failure Pi words as `Validation failed for tool "X":`
/// with one `  - path: message` line per failure and the received
/// arguments (`proposed`, before any coercion).
fn validated(
    schema: &Value,
    call: &ToolCall,
    proposed: &Map<String, Value>,
    options: &AgentOptions,
) -> Result<Map<String, Value>, ToolOutput> {
    let Some(validator) = options.validator else {
        return Ok(proposed.clone());
    };
    let mut arguments = Value::Object(proposed.clone());
    let errors = validator(schema, &mut arguments);
    if !errors.is_empty() {
        let received = serde_json::to_string_pretty(proposed).unwrap_or_default();
        let mut text = format!("Validation failed for tool \"{}\":\n", call.name);
        for error in &errors {
            text.push_str("  - ");
            text.push_str(error);
            text.push('\n');
        }
        text.push_str("\nReceived arguments:\n");
        text.push_str(&received);
        return Err(failure(text));
    }
    match arguments {
        Value::Object(map) => Ok(map),
        // A validator that replaced the object: keep what it was given.
        _ => Ok(proposed.clone()),
    }
}
