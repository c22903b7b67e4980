//! The server's state, shared by every connection: how it answers, its
//! limits, and the calls so far (numbered and recorded).

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentstream::model::{Model, ScriptedModel};
use bytes::Bytes;

use crate::cassette::Player;
use crate::log::{Kept, Line, RequestLog};
use crate::proxy::Proxy;
use crate::route::Target;
use crate::script::Step;
use agentstream_wire::server::ApiError;
use agentstream_wire::server::DecodedRequest;

/// How a server answers; shared by every connection.
pub(crate) struct State {
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

    /// The requests kept, oldest first, and how many were dropped.
    pub(crate) fn kept(&self) -> (Vec<Kept>, usize) {
        let calls = self.calls();
        (calls.log.snapshot(), calls.log.dropped())
    }
}
