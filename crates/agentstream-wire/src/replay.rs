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

use crate::api::{Api, ProtocolVisitor};
use crate::config::{EndpointConfig, Protocol};
use crate::endpoint::{Endpoint, PreparedRequest};
use crate::host::{ClientError, Host};
use crate::http::{ResponseBody, ResponseHead, TransportError};
use crate::limits::Limits;
use crate::model::EndpointModel;
use crate::sse::SseStream;

mod recording;
mod whole;
pub use recording::{Recording, RecordingError};
pub use whole::whole_as_events;

/// The `errorMessage` of a call made after every recording was used.
pub const REPLAY_EXHAUSTED_MESSAGE: &str = "replay: every recorded response was already used";

/// The model and provider name a [`ReplayModel`] gives its messages unless
/// told otherwise, as `agentstream decode` does.
pub const RECORDED: &str = "recorded";

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
