//! What every connection of a server shares: how it answers, its limits,
//! and the calls so far (numbered, handed to the model, recorded).

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentstream::message::AssistantMessage;
use agentstream::model::{
    DoneReason, Model, ModelStream, ScriptedModel, ScriptedReply, ScriptedTurn, StreamOptions,
};
use bytes::Bytes;

use crate::cassette::Player;
use crate::log::{Kept, Line, RequestLog};
use crate::proxy::Proxy;
use crate::route::Target;
use crate::script::Step;
use agentstream_wire::server::ApiError;
use agentstream_wire::server::DecodedRequest;

/// The largest request body read by default: 32 MiB (Anthropic's own
/// request limit). A larger body gets HTTP 413 with the provider's error
/// body. See [`ServerBuilder::max_request_bytes`](crate::ServerBuilder::max_request_bytes).
pub const MAX_REQUEST_BYTES: usize = 32 << 20;

/// The most bytes of unfinished request bodies held across all
/// connections at once, by default: 256 MiB. A request whose body would
/// take more gets HTTP 503 (see
/// [`ServerBuilder::max_buffered_request_bytes`](crate::ServerBuilder::max_buffered_request_bytes)).
pub const MAX_BUFFERED_REQUEST_BYTES: usize = 256 << 20;

/// The status of a call made after a
/// [`ScriptedModel`](agentstream::model::ScriptedModel) ran out of turns.
pub const EXHAUSTED_STATUS: u16 = 500;

/// The OpenAI `code` of that answer (Anthropic's type is `api_error`); the
/// message is [`agentstream::model::EXHAUSTED_MESSAGE`].
pub const EXHAUSTED_CODE: &str = "script_exhausted";

/// How long a client may take to send a request's headers, from the
/// moment the connection waits for them (an idle keep-alive connection
/// included), by default: 30 s.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's body, by default: 60 s.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the recording proxy waits for the upstream, by default: to
/// connect, and for each read of its answer (the head, then every piece
/// of the body): 300 s. See
/// [`ServerBuilder::upstream_timeout`](crate::ServerBuilder::upstream_timeout).
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

/// The most connections open at once, by default (see
/// [`ServerBuilder::max_connections`](crate::ServerBuilder::max_connections)).
pub const MAX_CONNECTIONS: usize = 256;

/// How a server answers; shared by every connection.
pub(crate) struct Shared {
    pub(crate) model: Arc<dyn Model + Send + Sync>,
    /// The same model, when it is a [`ScriptedModel`]: its plain turns
    /// are written straight from their messages.
    pub(crate) scripted: Option<Arc<ScriptedModel>>,
    pub(crate) steps: Vec<Step>,
    pub(crate) chunks: usize,
    pub(crate) delay: Duration,
    pub(crate) pings: bool,
    pub(crate) model_name: String,
    pub(crate) max_request_bytes: usize,
    /// The bytes of request bodies being read, across all connections,
    /// and their bound.
    pub(crate) buffered: AtomicUsize,
    pub(crate) max_buffered: usize,
    pub(crate) body_timeout: Duration,
    /// Whether each request's line is written as it arrives (for the
    /// `--requests` file), instead of when the log is read.
    pub(crate) lines_at_once: bool,
    pub(crate) source: Source,
    pub(crate) calls: Mutex<Calls>,
}

/// Where the answers come from.
pub(crate) enum Source {
    /// The model, with the script's steps.
    Model,
    /// An upstream endpoint, through the recording proxy.
    Upstream(Proxy),
    /// Recorded cassettes.
    Replay(Player),
}

/// The calls so far.
pub(crate) struct Calls {
    pub(crate) next: usize,
    pub(crate) log: RequestLog,
}

impl Calls {
    /// Numbers the next call and records `request` (given the number);
    /// the number.
    fn number(&mut self, request: impl FnOnce(usize) -> Kept) -> Result<usize, ApiError> {
        let index = self.next;
        self.log.push(request(index)).map_err(|e| {
            ApiError::new(
                500,
                format!("agentstream serve cannot record the request: {e}"),
            )
        })?;
        self.next += 1;
        Ok(index)
    }
}

/// What a call gets: its number and how it is answered.
pub(crate) struct Call {
    pub(crate) index: usize,
    pub(crate) answer: Answer,
}

/// How a call is answered.
pub(crate) enum Answer {
    /// With the script's HTTP error; the model is not called.
    Refused(ApiError),
    /// With the model's events, cut short as the script's `step` says.
    Events { events: ModelStream, step: Step },
    /// With a scripted turn's message, written as the events the turn
    /// would play (see [`plain`]).
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
        return Some(Answer::Refused(ApiError::model_failure(
            &turn.final_message(),
        )));
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

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("model_name", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn calls(&self) -> MutexGuard<'_, Calls> {
        // A panic elsewhere while holding the lock leaves consistent data.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the request and takes the next step, under one lock so the
    /// call numbers, the recordings and the model's turns share one order.
    /// What the log keeps (a copy of `body`, or the request's line when
    /// a file needs it at once) is made before the lock is taken; only
    /// its call number is added under it. A model that streams gets the
    /// request's options, moved out of it.
    pub(crate) fn take_call(
        &self,
        target: &Target,
        body: &[u8],
        request: &mut DecodedRequest,
        signal: agentstream::model::AbortSignal,
    ) -> Result<Call, ApiError> {
        let kept = self.keeping(target, body, request);
        let mut options: StreamOptions = std::mem::take(&mut request.options);
        options.signal = Some(signal);
        let mut calls = self.calls();
        let index = calls.number(kept)?;
        let step = self.steps.get(index).cloned().unwrap_or(Step::Model);
        let answer = match (step, &self.scripted) {
            (Step::Http(error), _) => Answer::Refused(error),
            // A plain turn's events would all be ready at once: its message
            // gives the same bytes without them. A delay or a step needs the
            // events one by one.
            (Step::Model, Some(scripted)) => {
                let turn = scripted.take_turn(&request.context);
                let undelayed = self.delay.is_zero();
                match turn.as_deref().and_then(|turn| unplayed(turn, undelayed)) {
                    Some(answer) => answer,
                    None => Answer::Events {
                        events: scripted.play(turn, options),
                        step: Step::Model,
                    },
                }
            }
            (step, _) => Answer::Events {
                events: self.model.stream(&request.context, options),
                step,
            },
        };
        Ok(Call { index, answer })
    }

    /// What the log keeps of a request, given its call number.
    fn keeping(
        &self,
        target: &Target,
        body: &[u8],
        request: &DecodedRequest,
    ) -> impl FnOnce(usize) -> Kept {
        let kept = if self.lines_at_once {
            Ok(Line::new(target.api, request))
        } else {
            Err((target.decoding(), Bytes::copy_from_slice(body)))
        };
        move |call| match kept {
            Ok(line) => Kept::Line(line.numbered(call)),
            Err((route, body)) => Kept::Body { call, route, body },
        }
    }

    /// Records a request answered without the model (by the upstream or
    /// a cassette); its call number.
    pub(crate) fn record(
        &self,
        target: &Target,
        body: &[u8],
        request: &DecodedRequest,
    ) -> Result<usize, ApiError> {
        let kept = self.keeping(target, body, request);
        self.calls().number(kept)
    }

    /// The requests kept, oldest first, and how many were dropped.
    pub(crate) fn kept(&self) -> (Vec<Kept>, usize) {
        let calls = self.calls();
        (calls.log.snapshot(), calls.log.dropped())
    }
}
