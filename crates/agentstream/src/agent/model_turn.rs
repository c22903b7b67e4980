//! One model call, its events forwarded as `message_*` agent events.

use alloc::borrow::ToOwned;
use alloc::sync::Arc;

use futures_util::StreamExt;

use super::events::AgentEvent;
use crate::message::{AssistantMessage, Context, SharedMessage, StopReason};
use crate::model::{AbortSignal, ApiKey, ErrorCause, Model, ModelEvent, StreamOptions};

/// The message a model stream ended without a terminal event gets.
pub const NO_TERMINAL_MESSAGE: &str = "model stream ended without a terminal event";

/// Streams one model call with `options` (the run's `signal` in place of
/// theirs, and `api_key`, when there is one, in place of theirs); returns its final message (shared with its `message_end`, and
/// with the model's terminal event) and, for a failed call, the typed cause
/// the model recorded.
pub(super) async fn stream_turn<M, E>(
    model: &M,
    context: &Context,
    options: &StreamOptions,
    api_key: Option<ApiKey>,
    signal: &AbortSignal,
    emit: &E,
) -> (Arc<AssistantMessage>, Option<ErrorCause>)
where
    M: Model + ?Sized,
    E: Fn(AgentEvent),
{
    let mut options = options.clone().with_signal(signal.clone());
    if api_key.is_some() {
        options.api_key = api_key;
    }
    let mut stream = model.stream(context, options);
    let mut started = false;
    while let Some(event) = stream.next().await {
        if event.is_terminal() {
            // The terminal event is not forwarded: its message is taken.
            let message = match event {
                ModelEvent::Done { message, .. } | ModelEvent::Error { error: message, .. } => {
                    message
                }
                _ => continue,
            };
            let cause = match message.stop_reason {
                StopReason::Error | StopReason::Aborted => stream.error_cause(),
                _ => None,
            };
            // The terminal event's message is shared as it is, never
            // copied: by `message_end` here and `turn_end` later.
            drop(stream);
            return (end_message(message, started, emit), cause);
        }
        // Every non-terminal event carries the message so far.
        let Some(partial) = event.partial().cloned() else {
            continue;
        };
        if started {
            emit(AgentEvent::MessageUpdate {
                message: partial,
                assistant_message_event: event,
            });
        } else {
            started = true;
            emit(AgentEvent::MessageStart {
                message: SharedMessage::Assistant(partial.to_shared()),
            });
        }
    }
    // A model stream always ends with a terminal event; should one not,
    // the turn is an error rather than a hang or a panic.
    let mut message = crate::message::assistant([], StopReason::Error);
    message.error_message = Some(NO_TERMINAL_MESSAGE.to_owned());
    (
        end_message(Arc::new(message), started, emit),
        Some(ErrorCause::Protocol),
    )
}

/// The final message's `message_end`, after its `message_start` if the
/// stream had none; returns the message, shared with the events.
fn end_message<E: Fn(AgentEvent)>(
    message: Arc<AssistantMessage>,
    started: bool,
    emit: &E,
) -> Arc<AssistantMessage> {
    if !started {
        emit(AgentEvent::MessageStart {
            message: SharedMessage::Assistant(message.clone()),
        });
    }
    emit(AgentEvent::MessageEnd {
        message: SharedMessage::Assistant(message.clone()),
    });
    message
}
