//! The loop: model call, tool calls, repeat.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::future::Future;

use futures_util::StreamExt;
use serde_json::{json, Map, Value};

use super::events::AgentEvent;
use super::hooks::{SteeringMode, ToolCallDecision, SKIPPED_MESSAGE};
use super::options::{AgentOptions, AgentOutcome, AgentStop, ToolExecution};
use super::tool::{ProgressReporter, ToolContext, ToolOutput, ToolSet};
use crate::event_stream::EventStream;
use crate::message::{AssistantMessage, Context, Message, StopReason, ToolCall, ToolResultMessage};
use crate::model::{AbortSignal, Model, StreamOptions};

/// The text of the result given to each call of a turn that was cut off
/// (`length`, `error` or `aborted`), whose calls are never executed.
pub const NOT_EXECUTED_MESSAGE: &str = "not executed: the response was cut off";

/// The stream of an agent run: its events, and the [`AgentOutcome`] as
/// the result.
pub type AgentEventStream = EventStream<AgentEvent, AgentOutcome, Infallible>;

/// Runs the agent loop, handing every event to `emit` as it happens.
///
/// `context` is the history before the run (its `tools` are replaced by
/// `tools`' definitions); `prompts` are appended first. The loop calls the
/// model, streams its events, runs the assistant message's tool calls and
/// appends one `toolResult` per call in call order, then calls the model
/// again, until a turn ends without tool calls, the turn limit is reached,
/// a model call fails, or the run is aborted. The final history is
/// `context.messages` followed by [`AgentOutcome::messages`], and it is
/// always linkage-valid: every tool call has exactly one result.
///
/// Where this differs from Pi's agent loop:
/// - the calls of a turn that stopped with `length` are not executed (their
///   arguments may be truncated); they get error results reading
///   [`NOT_EXECUTED_MESSAGE`], as do those of an `error` or `aborted` turn;
/// - after an abort no further model call is made (Pi makes one that
///   returns `aborted` at once);
/// - the turn limit ends the run with [`AgentStop::MaxTurns`] rather than
///   an error string.
///
/// ```
/// use agentstream::agent::{run_agent, AgentOptions, AgentStop, ToolSet};
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::ScriptedModel;
///
/// let model = ScriptedModel::new([assistant([text("hello")], StopReason::Stop)]);
/// let outcome = futures_executor::block_on(run_agent(
///     &model,
///     &ToolSet::new(),
///     Context::default(),
///     vec![user("hi").into()],
///     AgentOptions::default(),
///     |event| println!("{}", serde_json::to_string(&event).unwrap()),
/// ));
/// assert_eq!(outcome.stop, AgentStop::Completed);
/// assert_eq!(outcome.messages.len(), 2);
/// ```
pub async fn run_agent<M: Model + ?Sized>(
    model: &M,
    tools: &ToolSet<'_>,
    mut context: Context,
    prompts: Vec<Message>,
    options: AgentOptions,
    emit: impl Fn(AgentEvent),
) -> AgentOutcome {
    let emit = &emit as &dyn Fn(AgentEvent);
    let signal = options.signal.clone().unwrap_or_default();
    if !tools.is_empty() {
        context.tools = Some(tools.definitions());
    }
    let mut added: Vec<Message> = Vec::new();
    let mut turns = 0usize;
    emit(AgentEvent::AgentStart);
    let mut pending = prompts;
    let stop = loop {
        if signal.is_aborted() {
            break AgentStop::Aborted;
        }
        if options.max_turns.is_some_and(|max| turns >= max) {
            break AgentStop::MaxTurns;
        }
        emit(AgentEvent::TurnStart);
        for message in pending.drain(..) {
            emit(AgentEvent::MessageStart {
                message: message.clone(),
            });
            emit(AgentEvent::MessageEnd {
                message: message.clone(),
            });
            context.messages.push(message.clone());
            added.push(message);
        }
        turns += 1;
        let assistant = match &options.hooks.transform_context {
            Some(transform) => {
                let mut request = context.clone();
                transform(&mut request);
                stream_turn(model, &request, &signal, emit).await
            }
            None => stream_turn(model, &context, &signal, emit).await,
        };
        context.messages.push(assistant.clone().into());
        added.push(assistant.clone().into());
        let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
        let cut_off = matches!(
            assistant.stop_reason,
            StopReason::Length | StopReason::Error | StopReason::Aborted
        );
        let (results, steered) = if cut_off {
            let results = calls
                .iter()
                .map(|call| error_result(call, NOT_EXECUTED_MESSAGE))
                .collect();
            (results, Vec::new())
        } else {
            run_calls(tools, &calls, &signal, &options, emit).await
        };
        for result in &results {
            let message: Message = result.clone().into();
            emit(AgentEvent::MessageStart {
                message: message.clone(),
            });
            emit(AgentEvent::MessageEnd {
                message: message.clone(),
            });
            context.messages.push(message.clone());
            added.push(message);
        }
        emit(AgentEvent::TurnEnd {
            message: assistant.clone(),
            tool_results: results,
        });
        match assistant.stop_reason {
            StopReason::Error => break AgentStop::Error,
            StopReason::Aborted => break AgentStop::Aborted,
            _ => {}
        }
        pending = steered;
        pending.extend(options.hooks.steering());
        if pending.is_empty() && (calls.is_empty() || cut_off) {
            pending = options.hooks.follow_up();
            if pending.is_empty() {
                break AgentStop::Completed;
            }
        }
    };
    emit(AgentEvent::AgentEnd {
        messages: added.clone(),
    });
    AgentOutcome {
        messages: added,
        stop,
        turns,
    }
}

/// Like [`run_agent`], as an [`AgentEventStream`] and the future that
/// produces it. Poll the future (or spawn it) and read the stream.
///
/// ```
/// use agentstream::agent::{agent_loop, AgentOptions, AgentStop, ToolSet};
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::ScriptedModel;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([assistant([text("hello")], StopReason::Stop)]);
/// let tools = ToolSet::new();
/// let (events, run) = agent_loop(&model, &tools, Context::default(),
///     vec![user("hi").into()], AgentOptions::default());
/// futures_executor::block_on(run);
/// let outcome = futures_executor::block_on(events.result()).unwrap();
/// assert_eq!(outcome.stop, AgentStop::Completed);
/// let types: Vec<_> = futures_executor::block_on(
///     events.map(|e| e.unwrap().type_name()).collect::<Vec<_>>());
/// assert_eq!(types.first(), Some(&"agent_start"));
/// assert_eq!(types.last(), Some(&"agent_end"));
/// ```
pub fn agent_loop<'a, M: Model + ?Sized>(
    model: &'a M,
    tools: &'a ToolSet<'_>,
    context: Context,
    prompts: Vec<Message>,
    options: AgentOptions,
) -> (AgentEventStream, impl Future<Output = ()> + 'a) {
    let (producer, events) = EventStream::channel();
    let run = async move {
        let outcome = run_agent(model, tools, context, prompts, options, |event| {
            // A consumer that went away refuses events; the run goes on so
            // that its result stays available.
            let _ = producer.push(event);
        })
        .await;
        let _ = producer.finish(outcome);
    };
    (events, run)
}

/// One model call, its events forwarded as `message_*` events.
async fn stream_turn<M: Model + ?Sized>(
    model: &M,
    context: &Context,
    signal: &AbortSignal,
    emit: &dyn Fn(AgentEvent),
) -> AssistantMessage {
    let mut stream = model.stream(
        context,
        StreamOptions::default().with_signal(signal.clone()),
    );
    let mut started = false;
    while let Some(event) = stream.next().await {
        if let Some(message) = event.terminal_message() {
            let message = message.clone();
            if !started {
                emit(AgentEvent::MessageStart {
                    message: message.clone().into(),
                });
            }
            emit(AgentEvent::MessageEnd {
                message: message.clone().into(),
            });
            return message;
        }
        // Every non-terminal event carries the message so far.
        let Some(partial) = event.partial().map(|p| p.to_message()) else {
            continue;
        };
        if started {
            emit(AgentEvent::MessageUpdate {
                message: partial.into(),
                assistant_message_event: event,
            });
        } else {
            started = true;
            emit(AgentEvent::MessageStart {
                message: partial.into(),
            });
        }
    }
    // A model stream always ends with a terminal event; should one not,
    // the turn is an error rather than a hang or a panic.
    let mut message = crate::message::assistant([], StopReason::Error);
    message.error_message = Some("model stream ended without a terminal event".to_owned());
    emit(AgentEvent::MessageEnd {
        message: message.clone().into(),
    });
    message
}

fn error_result(call: &ToolCall, text: &str) -> ToolResultMessage {
    crate::message::tool_result(call.id.clone(), call.name.clone(), text, true)
}

/// Runs a turn's calls; returns their results in call order and the
/// steering messages that interrupted the batch, if any.
async fn run_calls(
    tools: &ToolSet<'_>,
    calls: &[ToolCall],
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &dyn Fn(AgentEvent),
) -> (Vec<ToolResultMessage>, Vec<Message>) {
    let interrupt = options.hooks.steering_mode == SteeringMode::Interrupt;
    if options.tool_execution == ToolExecution::Parallel && !interrupt {
        let results = futures_util::future::join_all(
            calls
                .iter()
                .map(|call| run_call(tools, call, signal, options, emit)),
        )
        .await;
        return (results, Vec::new());
    }
    let mut results = Vec::with_capacity(calls.len());
    let mut steered = Vec::new();
    for call in calls {
        if !steered.is_empty() {
            results.push(skip_call(call, emit));
            continue;
        }
        results.push(run_call(tools, call, signal, options, emit).await);
        if interrupt {
            steered = options.hooks.steering();
        }
    }
    (results, steered)
}

/// The result of a call skipped by an interrupting steering message,
/// reported with start and end events as Pi 0.58 does.
fn skip_call(call: &ToolCall, emit: &dyn Fn(AgentEvent)) -> ToolResultMessage {
    emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Value::Object(call.arguments.clone()),
    });
    let result = error_result(call, SKIPPED_MESSAGE);
    emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: json!({"content": result.content, "details": result.details}),
        is_error: true,
    });
    result
}

async fn run_call(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    signal: &AbortSignal,
    options: &AgentOptions,
    emit: &dyn Fn(AgentEvent),
) -> ToolResultMessage {
    let args = Value::Object(call.arguments.clone());
    emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: args.clone(),
    });
    let sink = |partial_result: Value| {
        emit(AgentEvent::ToolExecutionUpdate {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: args.clone(),
            partial_result,
        })
    };
    let cx = ToolContext {
        tool_call_id: &call.id,
        signal: signal.clone(),
        progress: ProgressReporter { sink: &sink },
    };
    let output = match prepare_arguments(tools, call, options) {
        Err(output) => output,
        Ok(arguments) => match tools.execute(&call.name, arguments, cx) {
            None => not_found(call),
            Some(execution) => {
                let output = match execution.await {
                    Ok(output) => output,
                    Err(error) => ToolOutput::error(String::from(error.message())),
                };
                match &options.hooks.after_tool_call {
                    Some(after) => after(call, output),
                    None => output,
                }
            }
        },
    };
    emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: json!({"content": output.content, "details": output.details}),
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

fn not_found(call: &ToolCall) -> ToolOutput {
    ToolOutput::error(format!("Tool {} not found", call.name))
}

/// The arguments `execute` gets: passed through `before_tool_call`, then
/// validated and coerced (the events and the history keep what the model
/// sent), or the error result of a call that cannot run.
fn prepare_arguments(
    tools: &ToolSet<'_>,
    call: &ToolCall,
    options: &AgentOptions,
) -> Result<Map<String, Value>, ToolOutput> {
    let Some(schema) = tools.parameters(&call.name) else {
        return Err(not_found(call));
    };
    let proposed = match options
        .hooks
        .before_tool_call
        .as_ref()
        .map(|before| before(call))
    {
        None | Some(ToolCallDecision::Allow) => call.arguments.clone(),
        Some(ToolCallDecision::Rewrite(arguments)) => arguments,
        Some(ToolCallDecision::Block(reason)) => return Err(ToolOutput::error(reason)),
    };
    let Some(validator) = options.validator else {
        return Ok(proposed);
    };
    let mut arguments = Value::Object(proposed.clone());
    let errors = validator(&schema, &mut arguments);
    if !errors.is_empty() {
        let received = serde_json::to_string_pretty(&proposed).unwrap_or_default();
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
    match arguments {
        Value::Object(map) => Ok(map),
        // A validator that replaced the object: keep what it was given.
        _ => Ok(proposed),
    }
}
