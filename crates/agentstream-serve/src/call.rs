//! Taking a call: its request decoded, numbered and logged under one
//! lock, and what answers it: the script's step, a rule's reply, a
//! scripted turn's message, or the model's events.

use std::sync::Arc;

use agentstream::message::AssistantMessage;
use agentstream::model::{
    AbortSignal, DoneReason, ModelStream, ScriptedReply, ScriptedTurn, StreamOptions,
    EXHAUSTED_MESSAGE,
};

use crate::lanes::Play;
use crate::limits::{EXHAUSTED_CODE, EXHAUSTED_STATUS, UNMATCHED_CODE};
use crate::manner::Manner;
use crate::route::Target;
use crate::rules::{with_call_ids, Facts, Reply};
use crate::script::Step;
use crate::script::NO_MATCH_MESSAGE;
use crate::state::State;
use agentstream_wire::server::{ApiError, DecodedRequest};

/// What a call gets: its number and how it is answered.
pub(crate) struct Call {
    pub(crate) index: usize,
    pub(crate) answer: Answer,
    /// The timing and quirks of the turn or rule reply that answers it.
    pub(crate) manner: Manner,
}

/// How a call is answered.
pub(crate) enum Answer {
    /// With the script's HTTP error; the model is not called.
    Refused(ApiError),
    /// With the model's events, cut short as the script's `step` says.
    Events { events: ModelStream, step: Step },
    /// With a scripted turn's message, written as the events the turn
    /// would play (see [`unplayed`]).
    Message {
        message: Arc<AssistantMessage>,
        reason: DoneReason,
        full_sequence: bool,
    },
}

/// The answer of a turn that needs no playing; `None` for a turn that
/// must be played (chunked, delayed, failing after some content, or
/// ending with a stop reason that has no `done`).
///
/// A failure with nothing to stream is refused as a failed provider
/// request is, with its error message (the short trace's `start →
/// error` is not put on the wire as a stream that starts and fails). A
/// turn that plays straight through to `done` in one chunk, when nothing
/// delays its events (`undelayed`), is written from its message.
fn unplayed(turn: &ScriptedTurn, undelayed: bool) -> Option<Answer> {
    if turn.is_empty_failure() {
        return Some(Answer::Refused(refusal(&turn.final_message())));
    }
    let ScriptedReply::Message(message) = turn.reply() else {
        return None;
    };
    let reason = DoneReason::from_stop_reason(&message.stop_reason)?;
    (undelayed && turn.chunks().get() == 1).then(|| Answer::Message {
        message: message.clone(),
        reason,
        full_sequence: turn.is_full_sequence(),
    })
}

/// Records the request and takes the next step, under one lock so the
/// call numbers, the recordings and the model's turns share one order.
/// What the log keeps (a copy of `body`, or the request's line when
/// a file needs it at once) is made before the lock is taken; only
/// its call number is added under it. A model that streams gets the
/// request's options, moved out of it.
pub(crate) fn take_call(
    state: &State,
    test: Option<&str>,
    target: &Target,
    body: &[u8],
    request: &mut DecodedRequest,
    signal: agentstream::model::AbortSignal,
    chaotic: bool,
) -> Result<Call, ApiError> {
    let kept = state.keeping(test, target, body, request);
    let mut options: StreamOptions = std::mem::take(&mut request.options);
    options.signal = Some(signal);
    // Which rules' keys hold is worked out before the numbering lock:
    // under it, only their counters move. The lane's script is looked up
    // first; should it be replaced in between, the keys are checked again
    // under the lock.
    // A server whose scripts have no rules skips this lookup.
    let looked = state
        .ruled
        .load(std::sync::atomic::Ordering::Acquire)
        .then(|| state.calls().lane(test).play.clone());
    let mut holding = match &looked {
        Some(play) if !play.rules.is_empty() => play.rules.holding(&Facts::of(request)),
        _ => Vec::new(),
    };
    let mut calls = state.calls();
    let lane = calls.number(test, kept)?;
    let index = lane.next - 1;
    let play = match looked {
        Some(play) if Arc::ptr_eq(&play, &lane.play) => play,
        _ => {
            if !lane.play.rules.is_empty() {
                holding = lane.play.rules.holding(&Facts::of(request));
            }
            lane.play.clone()
        }
    };
    if let Some(reply) = play.rules.pick(&holding, &mut lane.rule_counts) {
        drop(calls);
        let manner = reply.manner();
        let undelayed = state.delay.is_zero() && manner.is_plain() && !chaotic;
        let answer = ruled(&play, reply, index, options, undelayed);
        return Ok(Call {
            index,
            answer,
            manner,
        });
    }
    let element = lane.ordered;
    lane.ordered += 1;
    let step = play.steps.get(element);
    let manner = play.manners.get(element).cloned().unwrap_or_default();
    let answer = match (step, &play.scripted) {
        (Step::Http(error), _) => Answer::Refused(error),
        // A plain turn's events would all be ready at once: its message
        // gives the same bytes without them. A delay or a step needs the
        // events one by one.
        (Step::Model, Some(scripted)) => {
            let turn = scripted.take_turn(&request.context);
            let undelayed = state.delay.is_zero() && manner.is_plain() && !chaotic;
            match turn.as_deref().and_then(|turn| unplayed(turn, undelayed)) {
                Some(answer) => answer,
                None if turn.is_none() && state.strict => {
                    Answer::Refused(state.unmatched(request, lane))
                }
                None => Answer::Events {
                    events: scripted.play(turn, options),
                    step: Step::Model,
                },
            }
        }
        (step, _) => Answer::Events {
            events: play.model.stream(&request.context, options),
            step,
        },
    };
    Ok(Call {
        index,
        answer,
        manner,
    })
}

/// The answer of a rule's reply to call `index`: its HTTP error, or its
/// turn (shared; copied only to give tool calls without an id theirs)
/// played with its step.
fn ruled(
    play: &Play,
    reply: &Reply,
    index: usize,
    options: StreamOptions,
    undelayed: bool,
) -> Answer {
    let model = Step::Model;
    let step = reply.step.as_deref().unwrap_or(&model);
    let turn = match (step, &reply.turn) {
        (Step::Http(error), _) => return Answer::Refused(error.clone()),
        (_, Some(turn)) => with_call_ids(turn, index),
        // A reply is parsed from an element with a turn, unless it is an
        // HTTP error.
        (_, None) => return Answer::Refused(ApiError::new(500, "the rule has no turn")),
    };
    if *step == Step::Model {
        if let Some(answer) = unplayed(&turn, undelayed) {
            return answer;
        }
    }
    Answer::Events {
        events: play.player.play(Some(turn), options),
        step: step.clone(),
    }
}

/// A decoded call: what the response needs of the request, and the call.
pub(crate) struct Taken {
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) include_usage: bool,
    pub(crate) call: Call,
}

/// Decodes the body and takes the call. The decoded context is dropped
/// here: the log holds a copy of the body (or its JSON line), the model
/// what it needs of the context.
pub(crate) fn take(
    shared: &State,
    test: Option<&str>,
    target: &Target,
    body: &[u8],
    signal: AbortSignal,
    chaotic: bool,
) -> Result<Taken, ApiError> {
    let mut decoded = target.decode(body)?;
    let call = take_call(shared, test, target, body, &mut decoded, signal, chaotic)?;
    Ok(Taken {
        model: decoded.model,
        stream: decoded.stream,
        include_usage: decoded.include_usage,
        call,
    })
}

/// The error answer for a call refused with `message`: the script ran out
/// or had no answer for the request (a status the SDKs do not retry: the
/// test's script is wrong, and asking again cannot help), or the model
/// refused the call (500, as a provider's failure).
pub(crate) fn refusal(message: &AssistantMessage) -> ApiError {
    let error = ApiError::model_failure(message);
    if error.message == EXHAUSTED_MESSAGE {
        ApiError::new(EXHAUSTED_STATUS, error.message).with_code(EXHAUSTED_CODE)
    } else if error.message == NO_MATCH_MESSAGE {
        ApiError::new(EXHAUSTED_STATUS, error.message).with_code(UNMATCHED_CODE)
    } else {
        error
    }
}
