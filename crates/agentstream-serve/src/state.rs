//! The server's state, shared by every connection: how it answers, its
//! limits, and the calls so far (numbered and recorded).

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentstream::model::{Model, ScriptedModel};
use bytes::Bytes;

use crate::cassette::Player;
use crate::limits::{EXHAUSTED_STATUS, UNMATCHED_CODE};
use crate::log::{Kept, Line, RequestLog};
use crate::proxy::Proxy;
use crate::route::Target;
use crate::rules::{Counts, Facts, Rules};
use crate::script::Step;
use agentstream_wire::server::ApiError;
use agentstream_wire::server::DecodedRequest;
use serde_json::{json, Value};

/// How a server answers; shared by every connection.
pub(crate) struct State {
    pub(crate) model: Arc<dyn Model + Send + Sync>,
    /// The same model, when it is a [`ScriptedModel`]: its plain turns
    /// are written straight from their messages.
    pub(crate) scripted: Option<Arc<ScriptedModel>>,
    pub(crate) steps: Vec<Step>,
    /// The rules, tried before the ordered turns.
    pub(crate) rules: Rules,
    /// What plays a rule's turn: the scripted model, or one of no turns.
    pub(crate) player: Arc<ScriptedModel>,
    /// A call no rule or turn answers gets [`State::unmatched`].
    pub(crate) strict: bool,
    /// How many turns the scripted model had when the server started.
    pub(crate) scripted_turns: usize,
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
    /// The calls no rule answered: the index of the next ordered element.
    pub(crate) ordered: usize,
    /// Each rule's counters.
    pub(crate) rule_counts: Vec<Counts>,
    pub(crate) log: RequestLog,
}

impl Calls {
    /// Numbers the next call and records `request` (given the number);
    /// the number.
    pub(crate) fn number(
        &mut self,
        request: impl FnOnce(usize) -> Kept,
    ) -> Result<usize, ApiError> {
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

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("model_name", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl State {
    pub(crate) fn calls(&self) -> MutexGuard<'_, Calls> {
        // A panic elsewhere while holding the lock leaves consistent data.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the log keeps of a request, given its call number.
    pub(crate) fn keeping(
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

    /// How many ordered elements the script has: its steps, or the
    /// scripted model's turns.
    fn ordered_len(&self) -> usize {
        self.steps.len().max(self.scripted_turns)
    }

    /// The error of a call no rule or turn answers, under `--strict`:
    /// the nearest rule and its first difference.
    pub(crate) fn unmatched(&self, request: &DecodedRequest, calls: &Calls) -> ApiError {
        let turns = match self.ordered_len() {
            0 => "the script has no ordered turns".to_owned(),
            1 => "its one ordered turn was played".to_owned(),
            n => format!("its {n} ordered turns were all played"),
        };
        let message = if self.rules.is_empty() {
            format!("agentstream serve (strict): no turn answers this request: {turns}")
        } else {
            let facts = Facts::of(request);
            let nearest = self
                .rules
                .nearest(&facts, &calls.rule_counts)
                .unwrap_or_default();
            format!(
                "agentstream serve (strict): no rule or turn answers this request ({turns}); nearest rule {nearest}"
            )
        };
        ApiError::new(EXHAUSTED_STATUS, message).with_code(UNMATCHED_CODE)
    }

    /// `GET /v1/unused`: the rules that never answered and the ordered
    /// elements no call reached.
    pub(crate) fn unused(&self) -> Value {
        let calls = self.calls();
        let rules = self.rules.unused(&calls.rule_counts);
        let turns: Vec<usize> = (calls.ordered..self.ordered_len()).collect();
        json!({"rules": rules, "turns": turns})
    }

    /// The requests kept, oldest first, and how many were dropped.
    pub(crate) fn kept(&self) -> (Vec<Kept>, usize) {
        let calls = self.calls();
        (calls.log.snapshot(), calls.log.dropped())
    }
}
