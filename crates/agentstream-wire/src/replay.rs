//! [`ReplayModel`]: a [`Model`] that answers each call with the next
//! recorded response body, decoded exactly as a live call decodes it.
//!
//! A [`Recording`] is a body in the pieces the HTTP client delivered
//! (recorded with a [`TapEndpoint`](crate::tap::TapEndpoint), for example
//! by `agentstream chat --record-raw`), or one payload per line as some
//! projects store their fixtures. A replay is a [`Host`] ([`ReplayHost`]),
//! so each recording runs through the one call path of a live call
//! ([`EndpointModel`]: the real [`exchange`](crate::http::exchange) and
//! the real projector, [`OpenAiStream`] or [`AnthropicStream`]), piece by
//! piece: tests run on real provider output with no network, and a
//! failure keeps its typed
//! [`error_cause`](agentstream::model::ModelStream::error_cause).
//!
//! # The chunk-lengths sidecar
//!
//! `chat --record-raw FILE` writes the body to `FILE` byte for byte, so
//! any SSE tool (and `agentstream decode`) reads it as is, and the piece
//! lengths to `FILE.lengths`: one decimal byte count per line, in order,
//! summing to the size of `FILE`. The boundaries live beside the body
//! rather than inside a container because the body must stay exactly what
//! the server sent; they matter because pieces split lines, events and
//! UTF-8 characters wherever the network did, which is what the decoder
//! must cope with. [`Recording::with_lengths`] reads the pair back.
//!
//! ```
//! use agentstream::message::{user, Context, StopReason};
//! use agentstream::model::{Model, StreamOptions};
//! use agentstream_wire::replay::{Recording, ReplayModel};
//!
//! let body = concat!(
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n",
//!     "data: [DONE]\n\n",
//! );
//! // Split inside the first payload, as a network might.
//! let recording = Recording::with_lengths(body.as_bytes(), "20\n120\n14\n").unwrap();
//! let model = ReplayModel::new([recording]);
//! let context = Context::from_messages([user("hi").into()]);
//! let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
//! assert_eq!((message.text(), message.stop_reason), ("Hello".to_owned(), StopReason::Stop));
//! // One recording, one call: the next one is told so.
//! let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
//! assert_eq!(message.error_message.as_deref(), Some(agentstream_wire::replay::REPLAY_EXHAUSTED_MESSAGE));
//! ```

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::{Drain, Vec};
use core::fmt;
use core::future::{self, Future};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use agentstream::message::{assistant, Context, StopReason};
use agentstream::model::{
    AbortSignal, ErrorCause, ErrorReason, Model, ModelEvent, ModelStream, StreamOptions,
};

use crate::anthropic::AnthropicStream;
use crate::endpoint::{Endpoint, PreparedRequest};
use crate::host::{ClientError, Host};
use crate::http::{ResponseBody, ResponseHead, ResponseStream, TransportError};
use crate::limits::Limits;
use crate::model::EndpointModel;
use crate::openai::OpenAiStream;

/// The `errorMessage` of a call made after every recording was used.
pub const REPLAY_EXHAUSTED_MESSAGE: &str = "replay: every recorded response was already used";

/// The model and provider name a [`ReplayModel`] gives its messages unless
/// told otherwise, as `agentstream decode` does.
pub const RECORDED: &str = "recorded";

/// The wire protocol of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplayApi {
    /// OpenAI-compatible Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// One recorded response body, in the pieces it arrived in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pieces: Vec<Arc<[u8]>>,
    api: Option<ReplayApi>,
}

impl Recording {
    /// A body replayed as one piece.
    pub fn body(body: impl AsRef<[u8]>) -> Self {
        Self::pieces([body])
    }

    /// A body in these pieces, in order.
    pub fn pieces<P: AsRef<[u8]>>(pieces: impl IntoIterator<Item = P>) -> Self {
        Self {
            pieces: pieces.into_iter().map(|p| Arc::from(p.as_ref())).collect(),
            api: None,
        }
    }

    /// `body` cut into the pieces that `lengths` lists (the
    /// [sidecar](self#the-chunk-lengths-sidecar) format: one decimal byte
    /// count per line; blank lines are skipped).
    ///
    /// # Errors
    /// A line that is not a number, or lengths whose sum is not the size of
    /// `body`.
    pub fn with_lengths(body: &[u8], lengths: &str) -> Result<Self, RecordingError> {
        let mut pieces = Vec::new();
        let mut at = 0usize;
        for (index, line) in lengths.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let length: usize = line
                .parse()
                .map_err(|_| RecordingError::BadLength { line: index + 1 })?;
            let end = at
                .checked_add(length)
                .filter(|end| *end <= body.len())
                .ok_or(RecordingError::LengthMismatch { body: body.len() })?;
            pieces.push(&body[at..end]);
            at = end;
        }
        if at != body.len() {
            return Err(RecordingError::LengthMismatch { body: body.len() });
        }
        Ok(Self::pieces(pieces))
    }

    /// Event payloads (the `data` of each SSE event: a
    /// `chat.completion.chunk` or `[DONE]`, an Anthropic event's JSON),
    /// each replayed as its own piece `data: PAYLOAD\n\n`.
    pub fn payloads<P: AsRef<str>>(payloads: impl IntoIterator<Item = P>) -> Self {
        let pieces = payloads.into_iter().map(|payload| {
            let mut piece = Vec::from(&b"data: "[..]);
            piece.extend_from_slice(payload.as_ref().as_bytes());
            piece.extend_from_slice(b"\n\n");
            piece
        });
        Self::pieces(pieces)
    }

    /// One payload per line (a `.chunks.jsonl` fixture): each non-blank
    /// line, trimmed, is a payload for [`payloads`](Self::payloads).
    pub fn jsonl(text: &str) -> Self {
        Self::payloads(
            text.lines()
                .map(|line| line.trim_matches(['\u{feff}', ' ', '\t', '\r']))
                .filter(|line| !line.is_empty()),
        )
    }

    /// Fixes the protocol instead of detecting it.
    #[must_use]
    pub fn with_api(mut self, api: ReplayApi) -> Self {
        self.api = Some(api);
        self
    }

    /// The protocol: the one given, else Anthropic when the body holds a
    /// `message_start` event, else OpenAI.
    pub fn api(&self) -> ReplayApi {
        self.api.unwrap_or_else(|| {
            let needle = b"message_start";
            let found = self
                .pieces
                .iter()
                .any(|piece| piece.windows(needle.len()).any(|w| w == needle));
            // A piece boundary inside the name: look at the joined body.
            if found || self.to_body().windows(needle.len()).any(|w| w == needle) {
                ReplayApi::Anthropic
            } else {
                ReplayApi::OpenAi
            }
        })
    }

    /// The whole body, the pieces joined.
    pub fn to_body(&self) -> Vec<u8> {
        self.pieces.concat()
    }

    /// The pieces.
    pub fn piece_lengths(&self) -> impl Iterator<Item = usize> + '_ {
        self.pieces.iter().map(|piece| piece.len())
    }
}

/// Why [`Recording::with_lengths`] refused its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordingError {
    /// Line `line` of the lengths is not a byte count.
    BadLength {
        /// 1-based.
        line: usize,
    },
    /// The lengths do not add up to the body's size.
    LengthMismatch {
        /// The body's size.
        body: usize,
    },
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadLength { line } => write!(f, "chunk lengths: line {line} is not a byte count"),
            Self::LengthMismatch { body } => write!(
                f,
                "chunk lengths: they do not add up to the body's {body} bytes"
            ),
        }
    }
}

impl core::error::Error for RecordingError {}

/// A [`Host`] whose response to request `n` is recording `n` (status 200,
/// its body in the recorded pieces), whatever was asked; after the last
/// one, every request fails with [`REPLAY_EXHAUSTED_MESSAGE`]. It has no
/// timer (a pause never ends, so an idle timeout never fires) and its
/// clock stands still at [`with_timestamp`](Self::with_timestamp).
///
/// A replay is a host like any other, so it runs the one call path of a
/// live call ([`EndpointModel`]: per-call options, the exchange loop, the
/// tap, the typed error cause). [`ReplayModel`] uses it for bodies of
/// either protocol without building a request; pair it with a real
/// provider configuration to replay through that provider's request
/// building too:
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream::model::{Model, StreamOptions};
/// use agentstream_wire::model::OpenAiCompatModel;
/// use agentstream_wire::openai::OpenAiConfig;
/// use agentstream_wire::replay::{Recording, ReplayHost};
///
/// let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n";
/// let host = ReplayHost::new([Recording::body(body)]).with_timestamp(1_700_000_000_000);
/// let model = OpenAiCompatModel::with_host(OpenAiConfig::new("http://127.0.0.1:9/v1", "m"), host);
/// let context = Context::from_messages([user("hello").into()]);
/// let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
/// assert_eq!((message.text().as_str(), message.timestamp), ("hi", 1_700_000_000_000));
/// assert_eq!(model.host().remaining(), 0);
/// ```
#[derive(Debug)]
pub struct ReplayHost {
    recordings: Arc<[Recording]>,
    next: AtomicUsize,
    timestamp_ms: u64,
}

impl ReplayHost {
    /// A host answering with `recordings`, in order.
    pub fn new(recordings: impl IntoIterator<Item = Recording>) -> Self {
        Self {
            recordings: recordings.into_iter().collect(),
            next: AtomicUsize::new(0),
            timestamp_ms: 0,
        }
    }

    /// The clock's time (Unix milliseconds; default 0: a replay does not
    /// read the clock, so its output is the same on every run).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp_ms: u64) -> Self {
        self.timestamp_ms = timestamp_ms;
        self
    }

    /// How many recordings no request has used yet.
    pub fn remaining(&self) -> usize {
        self.recordings
            .len()
            .saturating_sub(self.next.load(Ordering::Relaxed))
    }

    /// The next recording, if any is left.
    fn take(&self) -> Option<&Recording> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let recording = self.recordings.get(index);
        if recording.is_none() {
            // Keep the counter from wrapping on endless calls.
            self.next.store(self.recordings.len(), Ordering::Relaxed);
        }
        recording
    }
}

impl Host for ReplayHost {
    type Body = ReplayBody;

    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        Ok(Self::new([]))
    }

    fn send(
        &self,
        _request: PreparedRequest,
        _connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, ReplayBody), TransportError>> + Send {
        future::ready(match self.take() {
            Some(recording) => Ok((ResponseHead::new(200), ReplayBody::of(recording))),
            None => Err(TransportError::failed(REPLAY_EXHAUSTED_MESSAGE)),
        })
    }

    fn sleep(&self, _duration: Duration) -> impl Future<Output = ()> + Send {
        future::pending()
    }

    fn now_ms(&self) -> u64 {
        self.timestamp_ms
    }
}

/// A [`Model`] that answers call `n` with recording `n`, decoded through
/// the one call path of a live call ([`EndpointModel`] on a
/// [`ReplayHost`]: the real exchange loop and projector), piece by piece;
/// after the last one, every call ends in `error` with
/// [`REPLAY_EXHAUSTED_MESSAGE`].
///
/// The context is not looked at. Each recording's protocol is its
/// [`api`](Recording::api), or the one given to
/// [`with_api`](Self::with_api). The caller's signal aborts a replay like
/// a live call. See the [module documentation](self) for an example.
#[derive(Debug)]
pub struct ReplayModel {
    host: ReplayHost,
    endpoint: Recorded,
}

impl ReplayModel {
    /// A model answering with `recordings`, in order.
    pub fn new(recordings: impl IntoIterator<Item = Recording>) -> Self {
        Self {
            host: ReplayHost::new(recordings),
            endpoint: Recorded {
                api: None,
                model: RECORDED.into(),
                provider: RECORDED.into(),
                limits: Limits::DEFAULT,
            },
        }
    }

    /// Decodes every recording as `api`.
    #[must_use]
    pub fn with_api(mut self, api: ReplayApi) -> Self {
        self.endpoint.api = Some(api);
        self
    }

    /// The model id and provider name of the messages (default
    /// [`RECORDED`] for both).
    #[must_use]
    pub fn with_names(mut self, model: impl Into<String>, provider: impl Into<String>) -> Self {
        self.endpoint.model = model.into();
        self.endpoint.provider = provider.into();
        self
    }

    /// The response limits (default [`Limits::DEFAULT`]).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.endpoint.limits = limits;
        self
    }

    /// The timestamp (Unix milliseconds) of the messages (default 0: a
    /// replay does not read the clock, so its output is the same on every
    /// run; pass the recorded call's time to reproduce it exactly).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp_ms: u64) -> Self {
        self.host.timestamp_ms = timestamp_ms;
        self
    }

    /// How many recordings no call has used yet.
    pub fn remaining(&self) -> usize {
        self.host.remaining()
    }
}

impl Model for ReplayModel {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        let Some(recording) = self.host.take() else {
            return ModelStream::driven(|mut producer| async move {
                let mut message = assistant([], StopReason::Error);
                message.error_message = Some(REPLAY_EXHAUSTED_MESSAGE.into());
                let _ = producer.push(ModelEvent::error(ErrorReason::Error, message));
            });
        };
        // The call's own endpoint (the recording's protocol) and host (its
        // body), so concurrent calls cannot take each other's recording.
        let mut endpoint = self.endpoint.clone();
        endpoint.api = Some(endpoint.api.unwrap_or_else(|| recording.api()));
        let host = ReplayHost::new([recording.clone()]).with_timestamp(self.host.timestamp_ms);
        EndpointModel::with_host(endpoint, host).stream(context, options)
    }
}

/// The [`Endpoint`] of a [`ReplayModel`]: a request nobody reads, and the
/// decoder of the recording's protocol, with no timeouts.
#[derive(Debug, Clone)]
struct Recorded {
    api: Option<ReplayApi>,
    model: String,
    provider: String,
    limits: Limits,
}

/// The URL a [`ReplayModel`]'s requests name (nothing is sent there).
const RECORDED_URL: &str = "http://recorded.invalid/";

impl Endpoint for Recorded {
    type Stream = RecordedStream;
    type Error = core::convert::Infallible;

    fn prepare_call(
        &self,
        _context: &Context,
        _options: &StreamOptions,
    ) -> Result<PreparedRequest, Self::Error> {
        Ok(PreparedRequest::new(
            RECORDED_URL.into(),
            Vec::new(),
            Vec::new(),
        ))
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> RecordedStream {
        let (model, provider) = (self.model.clone(), self.provider.clone());
        match self.api.unwrap_or(ReplayApi::OpenAi) {
            ReplayApi::Anthropic => RecordedStream::Anthropic(
                AnthropicStream::new(model, provider, signal)
                    .with_limits(self.limits)
                    .with_timestamp(timestamp_ms),
            ),
            ReplayApi::OpenAi => RecordedStream::OpenAi(
                OpenAiStream::new(model, provider, signal)
                    .with_limits(self.limits)
                    .with_timestamp(timestamp_ms),
            ),
        }
    }

    fn connect_timeout(&self) -> Option<Duration> {
        None
    }

    fn idle_timeout(&self) -> Option<Duration> {
        None
    }
}

/// The decoder of a recording: the projector of its protocol.
enum RecordedStream {
    OpenAi(OpenAiStream),
    Anthropic(AnthropicStream),
}

/// Calls `$method` on the stream of either protocol.
macro_rules! either {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            RecordedStream::OpenAi(stream) => ResponseStream::$method(stream, $($arg),*),
            RecordedStream::Anthropic(stream) => ResponseStream::$method(stream, $($arg),*),
        }
    };
}

impl ResponseStream for RecordedStream {
    fn is_finished(&self) -> bool {
        either!(self.is_finished())
    }

    fn error_cause(&self) -> Option<ErrorCause> {
        either!(self.error_cause())
    }

    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        either!(self.feed(bytes))
    }

    fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        either!(self.finish_input())
    }

    fn abort(&mut self) -> Drain<'_, ModelEvent> {
        either!(self.abort())
    }

    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        either!(self.interrupt(message))
    }

    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        either!(self.fail(message))
    }

    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        either!(self.http_error(status, body, retry_after))
    }
}

/// A recording as the response body of a [`ReplayHost`]: its pieces, in
/// order.
pub struct ReplayBody {
    pieces: Vec<Arc<[u8]>>,
    next: usize,
}

impl ReplayBody {
    fn of(recording: &Recording) -> Self {
        Self {
            pieces: recording.pieces.clone(),
            next: 0,
        }
    }
}

impl fmt::Debug for ReplayBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayBody")
            .field("pieces", &self.pieces.len())
            .field("next", &self.next)
            .finish()
    }
}

impl ResponseBody for ReplayBody {
    type Chunk = Arc<[u8]>;

    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Arc<[u8]>>, TransportError>> + Send {
        let piece = self.pieces.get(self.next).cloned();
        self.next = self.next.saturating_add(1);
        future::ready(Ok(piece))
    }
}
