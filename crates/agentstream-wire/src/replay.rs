//! [`ReplayModel`]: a [`Model`] that answers each call with the next
//! recorded response body, decoded exactly as a live call decodes it.
//!
//! A [`Recording`] is a body in the pieces the HTTP client delivered
//! (recorded with a [`TapEndpoint`](crate::tap::TapEndpoint), for example
//! by `agentstream chat --record-raw`), or one payload per line as some
//! projects store their fixtures. The model runs each through the real
//! [`exchange`] and the real projector
//! ([`OpenAiStream`] or [`AnthropicStream`]), piece by piece, so tests run
//! on real provider output with no network, and a failure keeps its typed
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
use alloc::vec::Vec;
use core::fmt;
use core::future::{self, Future};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use agentstream::message::{assistant, Context, StopReason};
use agentstream::model::{ErrorReason, Model, ModelEvent, ModelStream, StreamOptions};

use crate::anthropic::AnthropicStream;
use crate::http::{exchange, ResponseBody, ResponseHead, TransportError};
use crate::limits::Limits;
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

/// A [`Model`] that answers call `n` with recording `n`, decoded through
/// the real exchange loop and projector, piece by piece; after the last
/// one, every call ends in `error` with [`REPLAY_EXHAUSTED_MESSAGE`].
///
/// The context is not looked at. Each recording's protocol is its
/// [`api`](Recording::api), or the one given to
/// [`with_api`](Self::with_api). The caller's signal aborts a replay like
/// a live call. See the [module documentation](self) for an example.
#[derive(Debug)]
pub struct ReplayModel {
    recordings: Arc<[Recording]>,
    next: AtomicUsize,
    api: Option<ReplayApi>,
    model: String,
    provider: String,
    limits: Limits,
    timestamp_ms: u64,
}

impl ReplayModel {
    /// A model answering with `recordings`, in order.
    pub fn new(recordings: impl IntoIterator<Item = Recording>) -> Self {
        Self {
            recordings: recordings.into_iter().collect(),
            next: AtomicUsize::new(0),
            api: None,
            model: RECORDED.into(),
            provider: RECORDED.into(),
            limits: Limits::DEFAULT,
            timestamp_ms: 0,
        }
    }

    /// Decodes every recording as `api`.
    #[must_use]
    pub fn with_api(mut self, api: ReplayApi) -> Self {
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
        self.timestamp_ms = timestamp_ms;
        self
    }

    /// How many recordings no call has used yet.
    pub fn remaining(&self) -> usize {
        self.recordings
            .len()
            .saturating_sub(self.next.load(Ordering::Relaxed))
    }
}

impl Model for ReplayModel {
    fn stream(&self, _context: &Context, options: StreamOptions) -> ModelStream {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(recording) = self.recordings.get(index) else {
            // Keep the counter from wrapping on endless calls.
            self.next.store(self.recordings.len(), Ordering::Relaxed);
            return ModelStream::driven(|mut producer| async move {
                let mut message = assistant([], StopReason::Error);
                message.error_message = Some(REPLAY_EXHAUSTED_MESSAGE.into());
                let _ = producer.push(ModelEvent::error(ErrorReason::Error, message));
            });
        };
        let pieces = recording.pieces.clone();
        let api = self.api.unwrap_or_else(|| recording.api());
        let signal = options.signal;
        let (model, provider, limits) = (self.model.clone(), self.provider.clone(), self.limits);
        let timestamp_ms = self.timestamp_ms;
        let response = future::ready(Ok((ResponseHead::new(200), Pieces { pieces, next: 0 })));
        ModelStream::driven(move |producer| async move {
            match api {
                ReplayApi::Anthropic => {
                    let stream = AnthropicStream::new(model, provider, signal.clone())
                        .with_limits(limits)
                        .with_timestamp(timestamp_ms);
                    exchange(producer, stream, signal, None, never, response).await;
                }
                ReplayApi::OpenAi => {
                    let stream = OpenAiStream::new(model, provider, signal.clone())
                        .with_limits(limits)
                        .with_timestamp(timestamp_ms);
                    exchange(producer, stream, signal, None, never, response).await;
                }
            }
        })
    }
}

/// The replay has no idle timeout: its timer never fires.
fn never(_: Duration) -> future::Pending<()> {
    future::pending()
}

/// A recording as a response body.
struct Pieces {
    pieces: Vec<Arc<[u8]>>,
    next: usize,
}

impl ResponseBody for Pieces {
    type Chunk = Arc<[u8]>;

    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Arc<[u8]>>, TransportError>> + Send {
        let piece = self.pieces.get(self.next).cloned();
        self.next = self.next.saturating_add(1);
        future::ready(Ok(piece))
    }
}
