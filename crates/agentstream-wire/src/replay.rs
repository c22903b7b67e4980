//! [`ReplayModel`]: a [`Model`] that answers each call with the next
//! recorded response body, decoded exactly as a live call decodes it.
//!
//! A [`Recording`] is a body in the pieces the HTTP client delivered
//! (recorded with a [`RecordingEndpoint`](crate::recording::RecordingEndpoint), for example
//! by `agentstream chat --record-raw`), or one payload per line as some
//! projects store their fixtures. A replay is a [`Host`] ([`ReplayHost`]),
//! so each recording runs through the one call path of a live call
//! ([`EndpointModel`]: the real [`exchange`](crate::http::exchange) and
//! the projector of the recording's protocol, from its
//! [configuration](crate::config::Protocol::projector): Chat Completions,
//! Anthropic Messages, OpenAI Responses or Gemini), piece by piece: tests run on real provider output with no network, and a
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
//! must cope with. [`Recording::with_lengths`] reads the pair back, and
//! [`Recording::from_cassette`] reads an exchange `agentstream serve
//! --record` saved (the same pair, with the request naming the protocol);
//! [`Recording::from_cassette_files`] also reads its `response.json`, so
//! an exchange recorded cut replays cut.
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
use alloc::vec::Vec;
use core::fmt;
use core::future::{self, Future};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use agentstream::message::{assistant, Context, StopReason};
use agentstream::model::{AbortSignal, ErrorReason, Model, ModelEvent, ModelStream, StreamOptions};

use serde_json::Value;

use crate::api::{Api, ProtocolVisitor};
use crate::config::{EndpointConfig, Protocol};
use crate::endpoint::{Endpoint, PreparedRequest};
use crate::host::{ClientError, Host};
use crate::http::{ResponseBody, ResponseHead, TransportError};
use crate::limits::Limits;
use crate::model::EndpointModel;
use crate::sse::SseStream;

mod whole;
pub use whole::whole_as_events;

/// The `errorMessage` of a call made after every recording was used.
pub const REPLAY_EXHAUSTED_MESSAGE: &str = "replay: every recorded response was already used";

/// The model and provider name a [`ReplayModel`] gives its messages unless
/// told otherwise, as `agentstream decode` does.
pub const RECORDED: &str = "recorded";

/// The protocol of a body whose first event's `data` is `payload`:
/// `choices` is Chat Completions; else a `type` naming a `response.`
/// event is Responses, any other `type` Anthropic; `candidates`,
/// `usageMetadata` or `promptFeedback` is Gemini; anything else (a chunk,
/// `[DONE]`, not JSON) `None`.
fn api_of_first_payload(payload: &str) -> Option<Api> {
    let Ok(Value::Object(event)) = serde_json::from_str::<Value>(payload) else {
        return None;
    };
    if event.contains_key("choices") {
        return Some(Api::OpenAi);
    }
    if let Some(kind) = event.get("type").and_then(Value::as_str) {
        return Some(if kind.starts_with("response.") {
            Api::Responses
        } else {
            Api::Anthropic
        });
    }
    ["candidates", "usageMetadata", "promptFeedback"]
        .iter()
        .any(|key| event.contains_key(*key))
        .then_some(Api::Gemini)
}

/// The `data` of the first event of an SSE `body` that has one (one
/// `data` line; a leading byte order mark skipped).
fn first_payload(body: &[u8]) -> Option<&str> {
    let body = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
    body.split(|byte| *byte == b'\n').find_map(|line| {
        let data = line.strip_prefix(b"data:")?;
        let data = data.strip_prefix(b" ").unwrap_or(data);
        let data = data.strip_suffix(b"\r").unwrap_or(data);
        core::str::from_utf8(data).ok()
    })
}

/// One recorded response body, in the pieces it arrived in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pieces: Vec<Arc<[u8]>>,
    api: Option<Api>,
    cut: bool,
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
            cut: false,
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
    pub fn with_api(mut self, api: Api) -> Self {
        self.api = Some(api);
        self
    }

    /// A cassette's exchange (the directory `serve --record` writes per
    /// exchange): `response.body` cut as `response.body.lengths` says (see
    /// [`with_lengths`](Self::with_lengths)), with the protocol of the
    /// `path` in `request.json`. When `request.json` says `"stream":
    /// false`, the whole answer is read as the event stream it would have
    /// been (see [`whole_as_events`]), so the recorded message is replayed.
    ///
    /// ```
    /// use agentstream_wire::replay::Recording;
    /// use agentstream_wire::Api;
    ///
    /// let request = r#"{"api": "openai-responses", "method": "POST", "path": "/v1/responses"}"#;
    /// let body = b"data: {\"type\":\"response.created\"}\n\n";
    /// let recording = Recording::from_cassette(request, body, "10\n25\n").unwrap();
    /// assert_eq!(recording.api(), Api::Responses);
    /// ```
    ///
    /// # Errors
    /// [`RecordingError::BadRequest`] when `request.json` is not an object
    /// with a `path` of one of the protocols (see [`Api::from_path`]),
    /// and the errors of [`with_lengths`](Self::with_lengths).
    pub fn from_cassette(
        request_json: &str,
        body: &[u8],
        lengths: &str,
    ) -> Result<Self, RecordingError> {
        let request: Value =
            serde_json::from_str(request_json).map_err(|_| RecordingError::BadRequest)?;
        let api = request
            .get("path")
            .and_then(Value::as_str)
            .and_then(Api::from_path)
            .ok_or(RecordingError::BadRequest)?;
        let recording = Self::with_lengths(body, lengths)?.with_api(api);
        // A call that did not stream: its whole answer read as the
        // stream it would have been (an error body stays as it is).
        if request.get("stream") == Some(&Value::Bool(false)) {
            if let Some(events) = whole_as_events(api, body) {
                return Ok(Self::body(events).with_api(api));
            }
        }
        Ok(recording)
    }

    /// A cassette's exchange as [`from_cassette`](Self::from_cassette)
    /// reads it, and cut when its `response.json` says `"cut": true` (the
    /// client left or the upstream's body broke off while it was
    /// recorded): the replayed body then breaks off after its pieces, as
    /// it did live, instead of ending as if complete.
    ///
    /// ```
    /// use agentstream_wire::replay::Recording;
    ///
    /// let request = r#"{"path": "/v1/chat/completions"}"#;
    /// let response = r#"{"status": 200, "headers": {}, "cut": true}"#;
    /// let recording = Recording::from_cassette_files(request, response, b"data: {}\n\n", "10\n").unwrap();
    /// assert!(recording.is_cut());
    /// ```
    ///
    /// # Errors
    /// Those of [`from_cassette`](Self::from_cassette), and
    /// [`RecordingError::BadResponse`] when `response.json` is not a JSON
    /// object or its `cut` is not a boolean.
    pub fn from_cassette_files(
        request_json: &str,
        response_json: &str,
        body: &[u8],
        lengths: &str,
    ) -> Result<Self, RecordingError> {
        let response: Value =
            serde_json::from_str(response_json).map_err(|_| RecordingError::BadResponse)?;
        let cut = match response.as_object().map(|head| head.get("cut")) {
            Some(None) => false,
            Some(Some(Value::Bool(cut))) => *cut,
            _ => return Err(RecordingError::BadResponse),
        };
        Ok(Self::from_cassette(request_json, body, lengths)?.with_cut(cut))
    }

    /// Marks the body cut (or not): a cut body breaks off after its last
    /// piece with a transport error, as a connection closed without the
    /// body's end does, so the call ends in `error`.
    #[must_use]
    pub fn with_cut(mut self, cut: bool) -> Self {
        self.cut = cut;
        self
    }

    /// Whether the body breaks off after its pieces (see
    /// [`with_cut`](Self::with_cut)).
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    /// The protocol: the one given, else the one the first event's `data`
    /// names (a Responses or Anthropic `type`, Gemini's `candidates`),
    /// else Anthropic when the body holds a `message_start` event, else
    /// OpenAI.
    pub fn api(&self) -> Api {
        self.api.unwrap_or_else(|| {
            let body = self.to_body();
            if let Some(api) = first_payload(&body).and_then(api_of_first_payload) {
                return api;
            }
            let needle = b"message_start";
            let found = self
                .pieces
                .iter()
                .any(|piece| piece.windows(needle.len()).any(|w| w == needle));
            // A piece boundary inside the name: look at the joined body.
            if found || body.windows(needle.len()).any(|w| w == needle) {
                Api::Anthropic
            } else {
                Api::OpenAi
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
    /// A cassette's `request.json` is not JSON naming the `path` of a
    /// protocol a replay knows.
    BadRequest,
    /// A cassette's `response.json` is not a JSON object, or its `cut`
    /// is not `true` or `false`.
    BadResponse,
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadLength { line } => write!(f, "chunk lengths: line {line} is not a byte count"),
            Self::LengthMismatch { body } => write!(
                f,
                "chunk lengths: they do not add up to the body's {body} bytes"
            ),
            Self::BadRequest => f.write_str(
                "cassette request: not a JSON object whose path is a chat completions, messages, responses or Gemini endpoint",
            ),
            Self::BadResponse => f.write_str(
                "cassette response: not a JSON object whose \"cut\", when present, is true or false",
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
/// recording, the typed error cause). [`ReplayModel`] uses it for bodies of
/// any protocol without building a request; pair it with a real
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

    type Timer = Self;

    fn timer(&self) -> &Self {
        self
    }
}

/// A replay's timer: sleeps that never end (a replay has no idle timeout)
/// and a clock that reads the timestamp set with
/// [`with_timestamp`](ReplayHost::with_timestamp).
impl agentstream::rt::Timer for ReplayHost {
    type Sleep = future::Pending<()>;

    fn sleep(&self, _duration: Duration) -> future::Pending<()> {
        future::pending()
    }

    fn now_unix_ms(&self) -> u64 {
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
    api: Option<Api>,
    model: String,
    provider: String,
    limits: Limits,
}

impl ReplayModel {
    /// A model answering with `recordings`, in order.
    pub fn new(recordings: impl IntoIterator<Item = Recording>) -> Self {
        Self {
            host: ReplayHost::new(recordings),
            api: None,
            model: RECORDED.into(),
            provider: RECORDED.into(),
            limits: Limits::DEFAULT,
        }
    }

    /// Decodes every recording as `api`.
    #[must_use]
    pub fn with_api(mut self, api: Api) -> Self {
        self.api = Some(api);
        self
    }

    /// The model id and provider name of the messages (default
    /// [`RECORDED`] for both).
    #[must_use]
    pub fn with_names(mut self, model: impl Into<String>, provider: impl Into<String>) -> Self {
        self.model = model.into();
        self.provider = provider.into();
        self
    }

    /// The response limits (default [`Limits::DEFAULT`]).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
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
        // The call's own host (its body), so concurrent calls cannot take
        // each other's recording, and the configuration of its protocol.
        let host = ReplayHost::new([recording.clone()]).with_timestamp(self.host.timestamp_ms);
        let call = Call {
            model: self,
            host,
            context,
            options,
        };
        self.api.unwrap_or_else(|| recording.api()).visit(call)
    }
}

/// One call of a [`ReplayModel`], before its protocol is known.
struct Call<'a> {
    model: &'a ReplayModel,
    host: ReplayHost,
    context: &'a Context,
    options: StreamOptions,
}

impl ProtocolVisitor for Call<'_> {
    type Output = ModelStream;

    /// The call through [`EndpointModel`], decoded by `protocol`'s
    /// configuration with the model's names and limits.
    fn visit<P: Protocol + Send + Sync + 'static>(self, protocol: P) -> ModelStream {
        let mut config = EndpointConfig::with_protocol(RECORDED_URL, "", protocol);
        config.model.clone_from(&self.model.model);
        config.provider.clone_from(&self.model.provider);
        config.limits = self.model.limits;
        EndpointModel::with_host(Recorded { config }, self.host).stream(self.context, self.options)
    }
}

/// The [`Endpoint`] of a [`ReplayModel`]'s call: a request nobody reads,
/// and the response decoded by the configuration of the recording's
/// protocol (its projector, the names and limits), with no timeouts.
#[derive(Debug)]
struct Recorded<P> {
    config: EndpointConfig<P>,
}

/// The URL a [`ReplayModel`]'s requests name (nothing is sent there).
const RECORDED_URL: &str = "http://recorded.invalid/";

impl<P: Protocol> Endpoint for Recorded<P> {
    type Stream = SseStream<P::Projector>;
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

    /// Nothing is sent, so nothing is signed.
    fn sign(
        &self,
        _request: &mut PreparedRequest,
        _now_ms: u64,
    ) -> Result<(), crate::endpoint::SigningError> {
        Ok(())
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> Self::Stream {
        self.config.open_stream(signal).with_timestamp(timestamp_ms)
    }

    fn connect_timeout(&self) -> Option<Duration> {
        None
    }

    fn idle_timeout(&self) -> Option<Duration> {
        None
    }
}

/// A recording as the response body of a [`ReplayHost`]: its pieces, in
/// order.
pub struct ReplayBody {
    pieces: Vec<Arc<[u8]>>,
    next: usize,
    cut: bool,
}

/// The error a cut recording's body ends with.
const CUT_MESSAGE: &str = "replay: the recorded body was cut here";

impl ReplayBody {
    fn of(recording: &Recording) -> Self {
        Self {
            pieces: recording.pieces.clone(),
            next: 0,
            cut: recording.cut,
        }
    }
}

impl fmt::Debug for ReplayBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayBody")
            .field("pieces", &self.pieces.len())
            .field("next", &self.next)
            .field("cut", &self.cut)
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
        future::ready(match piece {
            None if self.cut => Err(TransportError::failed(CUT_MESSAGE)),
            piece => Ok(piece),
        })
    }
}
