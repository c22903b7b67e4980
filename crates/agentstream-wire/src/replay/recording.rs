//! [`Recording`]: one recorded response body in the pieces it arrived
//! in, read from a body, its lengths sidecar, payload lines or a
//! cassette (see the [module documentation](super)).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use serde_json::Value;

use super::whole_as_events;
use crate::api::Api;

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
    pub(super) pieces: Vec<Arc<[u8]>>,
    api: Option<Api>,
    pub(super) cut: bool,
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
    /// [sidecar](super#the-chunk-lengths-sidecar) format: one decimal byte
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
