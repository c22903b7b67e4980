//! The loop: model call, tool calls, repeat.

use alloc::vec::Vec;
use core::convert::Infallible;
use core::future::Future;

use super::events::AgentEvent;
use super::execute::{run_calls, settle_unrun, unrun_result, Batch};
use super::hooks::TurnSummary;
use super::model_turn::stream_turn;
use super::options::{AgentOptions, AgentOutcome, AgentStop};
use super::toolset::ToolSet;
use crate::event_stream::EventStream;
use crate::message::{Context, Message, SharedMessage, StopReason, ToolCall};
use crate::model::Model;
use crate::sync::Lock;

/// The text of the result given to each call of a turn that was cut off
/// (`length`, `error` or `aborted`), whose calls are never executed.
///
/// After a `length` turn the run goes on, so the model reads these results
/// and can call again (a model that is cut off every time keeps the run
/// going, as in Pi: [`AgentOptions::max_turns`] bounds it); after an
/// `error` or `aborted` turn the run ends.
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
///   [`NOT_EXECUTED_MESSAGE`] and the run goes on, as Pi's does; the calls
///   of an `error` or `aborted` turn get the same results (Pi leaves them
///   without any);
/// - after an abort no further model call is made (Pi makes one that
///   returns `aborted` at once);
/// - the turn limit ([`AgentStop::MaxTurns`]) is ours: Pi has none (its
///   `shouldStopAfterTurn` hook ends a run the same way);
///
/// and the rest of the list is in the [module docs](super#where-we-deliberately-differ-and-why).
///
/// `emit` is `FnMut`: it is called once per event, in order, never
/// re-entered. The future is `Send` when the model is `Sync` and `emit` is
/// `Send` (the tools always are on native targets), so a multi-threaded
/// runtime can run it.
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
pub async fn run_agent<M, E>(
    model: &M,
    tools: &ToolSet<'_>,
    mut context: Context,
    prompts: Vec<Message>,
    mut options: AgentOptions,
    emit: E,
) -> AgentOutcome
where
    M: Model + ?Sized,
    E: FnMut(AgentEvent),
{
    if options.clock.is_none() {
        options.clock = model.clock();
    }
    // The tools of a turn run concurrently and each reports its own events,
    // so the callback is shared behind the crate's lock (never contended:
    // every event is emitted from the run's own task, one at a time).
    let emit = Lock::new(emit);
    let emit = &|event: AgentEvent| emit.with(|emit| emit(event));
    let signal = options.signal.clone().unwrap_or_default();
    let definitions = tools.definitions();
    if !definitions.is_empty() {
        context.tools = Some(definitions);
    }
    // The run's messages are the tail of the history from here on; the
    // history holds them owned (the model is asked with it), the events
    // share one more copy of each, collected here for `agent_end`.
    let base = context.messages.len();
    let mut added = Vec::new();
    let mut turns = 0usize;
    let mut error_cause = None;
    emit(AgentEvent::AgentStart);
    let mut pending = prompts;
    // Pi polls the steering queue once before the first turn too: a
    // message queued while the run was starting joins the prompts.
    pending.extend(options.hooks.steering());
    let stop = loop {
        if signal.is_aborted() {
            break AgentStop::Aborted;
        }
        if options.max_turns.is_some_and(|max| turns >= max) {
            break AgentStop::MaxTurns;
        }
        emit(AgentEvent::TurnStart);
        for message in pending.drain(..) {
            added.push(record(message, &mut context, emit));
        }
        turns += 1;
        let transformed = match &options.hooks.transform_context {
            Some(transform) => {
                let mut request = context.clone();
                transform.apply(&mut request).await;
                Some(request)
            }
            None => None,
        };
        // Pi resolves the key after the context transform, right before
        // the call.
        let api_key = match &options.hooks.api_key {
            Some(hook) => hook.resolve().await,
            None => None,
        };
        let request = transformed.as_ref().unwrap_or(&context);
        let (assistant, cause) =
            stream_turn(model, request, &options.stream, api_key, &signal, emit).await;
        error_cause = cause;
        context
            .messages
            .push(Message::Assistant((*assistant).clone()));
        // Borrowed from the turn's message, which outlives the batch.
        let calls: Vec<&ToolCall> = assistant.tool_calls().collect();
        let Batch {
            results,
            steered,
            terminate,
        } = match assistant.stop_reason {
            // A turn cut off by the length limit: its calls may hold
            // truncated arguments and are not executed; each gets a start,
            // an end and a result reading NOT_EXECUTED_MESSAGE, and the run
            // goes on (as Pi's does), so the model can try again.
            StopReason::Length => {
                let results = calls
                    .iter()
                    .map(|call| settle_unrun(call, NOT_EXECUTED_MESSAGE, &options, emit))
                    .collect::<Vec<_>>();
                Batch::unrun(results, emit)
            }
            // A failed turn ends the run. Pi leaves its calls without
            // results; here each gets one (no execution events), so the
            // history stays linkage-valid.
            StopReason::Error | StopReason::Aborted => {
                let results = calls
                    .iter()
                    .map(|call| unrun_result(call, NOT_EXECUTED_MESSAGE, &options))
                    .collect::<Vec<_>>();
                Batch::unrun(results, emit)
            }
            _ => run_calls(tools, &calls, &signal, &options, emit).await,
        };
        // A batch whose every result set `terminate` ends the calls as a
        // turn without calls does (Pi's `hasMoreToolCalls = !terminate`).
        let no_calls = calls.is_empty() || terminate;
        context.messages.extend(
            results
                .iter()
                .map(|result| Message::ToolResult((**result).clone())),
        );
        let failed = match assistant.stop_reason {
            StopReason::Error => Some(AgentStop::Error),
            StopReason::Aborted => Some(AgentStop::Aborted),
            _ => None,
        };
        added.push(SharedMessage::Assistant(assistant.clone()));
        added.extend(results.iter().cloned().map(SharedMessage::ToolResult));
        match options.hooks.should_stop_after_turn.as_ref() {
            Some(hook) if failed.is_none() => {
                // Pi asks after `turn_end` was emitted (a listener has
                // seen it).
                emit(AgentEvent::TurnEnd {
                    message: assistant.clone(),
                    tool_results: results.clone(),
                });
                let turn = TurnSummary {
                    message: &assistant,
                    tool_results: &results,
                    context: &context,
                    new_messages: &added,
                };
                if hook.call(&turn) {
                    break AgentStop::StoppedAfterTurn;
                }
            }
            _ => {
                emit(AgentEvent::TurnEnd {
                    message: assistant,
                    tool_results: results,
                });
                if let Some(stop) = failed {
                    break stop;
                }
            }
        }
        pending = steered;
        pending.extend(options.hooks.steering());
        if pending.is_empty() && no_calls {
            pending = options.hooks.follow_up();
            if pending.is_empty() {
                break AgentStop::Completed;
            }
        }
    };
    emit(AgentEvent::AgentEnd { messages: added });
    AgentOutcome {
        messages: context.messages.split_off(base),
        stop,
        turns,
        error_cause: match stop {
            AgentStop::Error | AgentStop::Aborted => error_cause,
            _ => None,
        },
    }
}

/// A message that enters the history whole (a prompt, a steering or
/// follow-up message): `message_start` and `message_end`, then appended to
/// the history; returns the copy the events share.
fn record<E: Fn(AgentEvent) + ?Sized>(
    message: Message,
    context: &mut Context,
    emit: &E,
) -> SharedMessage {
    let shared = SharedMessage::from(message.clone());
    emit(AgentEvent::MessageStart {
        message: shared.clone(),
    });
    emit(AgentEvent::MessageEnd {
        message: shared.clone(),
    });
    context.messages.push(message);
    shared
}

/// Like [`run_agent`], as an [`AgentEventStream`] and the future that
/// produces it. Poll the future (or spawn it) and read the stream.
///
/// Dropping the stream (and every handle on its result) stops the run:
/// the future completes at its next poll, dropping the model call and the
/// running tools, and no further model or tool call is made.
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
pub fn agent_loop<'a, 't: 'a, M>(
    model: &'a M,
    tools: &'a ToolSet<'t>,
    context: Context,
    prompts: Vec<Message>,
    options: AgentOptions,
) -> (
    AgentEventStream,
    impl Future<Output = ()> + 'a + super::maybe_send::Captures<'t>,
)
where
    M: Model + ?Sized,
{
    let (producer, events) = EventStream::channel();
    let run = async move {
        let closed = producer.closed();
        let outcome = {
            let run = run_agent(model, tools, context, prompts, options, |event| {
                // Refused only once nobody observes the stream; `closed`
                // then ends the run.
                let _ = producer.push(event);
            });
            let run = core::pin::pin!(run);
            // `closed` first: once nobody listens, the run is not polled
            // again (no further model or tool call starts).
            match futures_util::future::select(closed, run).await {
                futures_util::future::Either::Right((outcome, _)) => outcome,
                // Nobody is left to tell: drop the run where it is.
                futures_util::future::Either::Left(((), _)) => return,
            }
        };
        let _ = producer.finish(outcome);
    };
    (events, run)
}
