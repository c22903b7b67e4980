//! Running the tool calls of one turn: lookup, hooks, validation, the
//! parallel/sequential policy, progress, and the abort's grace period.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context as TaskContext, Poll};

use futures_util::StreamExt;
use serde_json::{Map, Value};

use super::events::AgentEvent;
use super::hooks::{SteeringMode, ToolCallDecision, SKIPPED_MESSAGE};
use super::options::{AgentOptions, ToolExecution};
use super::tool::{ProgressReporter, ToolContext, ToolExecutionResult, ToolOutput};
use super::toolset::ToolSet;
use crate::event_stream::EventStream;
use crate::message::{ContentBlock, Message, ToolCall, ToolResultMessage};
use crate::model::AbortSignal;

/// The text of the result of a call that had not finished when the run was
/// aborted (after the grace period, if there is one), or that had not
/// started yet.
pub const TOOL_ABORTED_MESSAGE: &str = "aborted: the run was aborted before the tool finished";

/// Runs a turn's calls; returns their results in call order and the
/// steering messages that interrupted the batch, if any.
pub(super) async fn run_calls<E>(
    tools: &ToolSet<'_>,
    calls: &[&ToolCall],
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &E,
) -> (Vec<ToolResultMessage>, Vec<Message>)
where
    E: Fn(AgentEvent),
{
    let interrupt = options.hooks.steering_mode == SteeringMode::Interrupt;
    let mut results = Vec::with_capacity(calls.len());
    if options.tool_execution == ToolExecution::Parallel && !interrupt {
        // Consecutive calls of non-sequential tools form one concurrent
        // group; a sequential tool's call is a group of its own.
        let mut rest = calls;
        while !rest.is_empty() {
            let alone = tools.sequential(&rest[0].name);
            let len = if alone {
                1
            } else {
                rest.iter()
                    .position(|call| tools.sequential(&call.name))
                    .unwrap_or(rest.len())
            };
            let (group, tail) = rest.split_at(len);
            rest = tail;
            let group_results = futures_util::future::join_all(
                group
                    .iter()
                    .map(|call| run_call(tools, call, signal, options, emit)),
            )
            .await;
            results.extend(group_results);
        }
        return (results, Vec::new());
    }
    let mut steered = Vec::new();
    for call in calls {
        if !steered.is_empty() {
            results.push(settle_unrun(call, SKIPPED_MESSAGE, emit));
            continue;
        }
        if signal.is_aborted() {
            results.push(settle_unrun(call, TOOL_ABORTED_MESSAGE, emit));
            continue;
        }
        results.push(run_call(tools, call, signal, options, emit).await);
        if interrupt {
            steered = options.hooks.steering();
        }
    }
    (results, steered)
}

pub(super) fn error_result(call: &ToolCall, text: &str) -> ToolResultMessage {
    crate::message::tool_result(call.id.clone(), call.name.clone(), text, true)
}

/// The result of a call that never runs (skipped by an interrupting
/// steering message, or reached after an abort), reported with start and
/// end events as Pi 0.58 reports skipped calls.
fn settle_unrun<E: Fn(AgentEvent)>(call: &ToolCall, text: &str, emit: &E) -> ToolResultMessage {
    emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Value::Object(call.arguments.clone()),
    });
    let result = error_result(call, text);
    emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result_value(&result.content, result.details.as_ref()),
        is_error: true,
    });
    result
}

async fn run_call<E>(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &E,
) -> ToolResultMessage
where
    E: Fn(AgentEvent),
{
    let args = Value::Object(call.arguments.clone());
    emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: args.clone(),
    });
    let output = match prepare_arguments(tools, call, options).await {
        Err(output) => output,
        Ok(arguments) => {
            let (sink, progress) = EventStream::<Value, (), Infallible>::channel();
            let cx = ToolContext {
                tool_call_id: &call.id,
                signal: signal.clone(),
                progress: ProgressReporter {
                    sink: Arc::new(sink),
                    _call: PhantomData,
                },
            };
            match tools.execute(&call.name, arguments, cx) {
                None => not_found(call),
                Some(execution) => {
                    let report = |partial_result: Value| {
                        emit(AgentEvent::ToolExecutionUpdate {
                            tool_call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            args: args.clone(),
                            partial_result,
                        })
                    };
                    match guarded(execution, signal, options, progress, report).await {
                        None => ToolOutput::error(TOOL_ABORTED_MESSAGE),
                        Some(Err(error)) => error.into_output(),
                        Some(Ok(output)) => match &options.hooks.after_tool_call {
                            Some(after) => after.call(call, output).get().await,
                            None => output,
                        },
                    }
                }
            }
        }
    };
    emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result_value(&output.content, output.details.as_ref()),
        is_error: output.is_error,
    });
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: output.content,
        details: output.details,
        is_error: output.is_error,
        timestamp: 0,
        extra: Default::default(),
    }
}

/// A running call: its execution, the abort's cutoff (the signal, then the
/// grace period), and its progress channel. Resolves to the execution's
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
    progress: EventStream<Value, (), Infallible>,
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
            grace().await;
        }
    };
    Guarded {
        execution,
        cutoff,
        progress,
        report,
        open: true,
    }
}

pin_project_lite::pin_project! {
    struct Guarded<F, C, R> {
        #[pin]
        execution: F,
        #[pin]
        cutoff: C,
        progress: EventStream<Value, (), Infallible>,
        report: R,
        open: bool,
    }
}

impl<F: Future, C: Future<Output = ()>, R: Fn(Value)> Future for Guarded<F, C, R> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let polled = this.execution.poll(cx);
        while *this.open {
            match this.progress.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(value))) => (this.report)(value),
                Poll::Ready(_) => *this.open = false,
                Poll::Pending => break,
            }
        }
        if let Poll::Ready(output) = polled {
            return Poll::Ready(Some(output));
        }
        this.cutoff.poll(cx).map(|()| None)
    }
}

/// A `tool_execution_end` result: the result's blocks and details.
fn result_value(content: &[ContentBlock], details: Option<&Value>) -> ToolExecutionResult {
    ToolExecutionResult::new(content.to_vec(), details.cloned())
}

fn not_found(call: &ToolCall) -> ToolOutput {
    ToolOutput::error(format!("Tool {} not found", call.name))
}

/// The arguments `execute` gets: passed through `before_tool_call`, then
/// validated and coerced (the events and the history keep what the model
/// sent), or the error result of a call that cannot run.
async fn prepare_arguments(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    options: &AgentOptions,
) -> Result<Map<String, Value>, ToolOutput> {
    let Some(schema) = tools.parameters(&call.name) else {
        return Err(not_found(call));
    };
    let decision = match &options.hooks.before_tool_call {
        Some(before) => Some(before.call(call).get().await),
        None => None,
    };
    // One copy to validate and coerce; the text of a failure shows what was
    // proposed (the model's arguments, or the hook's rewrite).
    let (mut arguments, rewritten) = match decision {
        None | Some(ToolCallDecision::Allow) => (call.arguments.clone(), None),
        Some(ToolCallDecision::Rewrite(arguments)) => (arguments.clone(), Some(arguments)),
        Some(ToolCallDecision::Block(reason)) => return Err(ToolOutput::error(reason)),
    };
    let Some(validator) = options.validator else {
        return Ok(arguments);
    };
    let proposed = rewritten.as_ref().unwrap_or(&call.arguments);
    let mut value = Value::Object(core::mem::take(&mut arguments));
    let errors = validator(schema, &mut value);
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
        return Err(ToolOutput::error(text));
    }
    match value {
        Value::Object(map) => Ok(map),
        // A validator that replaced the object: keep what it was given.
        _ => Ok(proposed.clone()),
    }
}
