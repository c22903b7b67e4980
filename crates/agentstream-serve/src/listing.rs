//! What the server lists: `GET /v1/models` (the one model it plays) and
//! `GET /v1/requests` (the calls it kept, written piece by piece).

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::Response;
use serde_json::{json, Value};

use crate::limits::BLOCKING_BODY;
use crate::log::Kept;
use crate::response::Body;
use crate::state::State;

/// The size of the pieces `GET /v1/requests` is written in.
const LIST_PIECE: usize = 64 << 10;

/// The header of `GET /v1/requests` counting the requests dropped from
/// the memory log.
pub(crate) const DROPPED_HEADER: &str = "agentstream-dropped-requests";

/// `GET /v1/models`: one model, with the fields of both providers' lists.
pub(crate) fn models(name: &str) -> Value {
    json!({
        "object": "list",
        "data": [{
            "id": name,
            "object": "model",
            "created": 0,
            "owned_by": "agentstream",
            "type": "model",
            "display_name": name,
            "created_at": "1970-01-01T00:00:00Z",
        }],
        "has_more": false,
        "first_id": name,
        "last_id": name,
    })
}

/// `GET /v1/requests`: the kept requests as a JSON array, written piece
/// by piece as the client reads it: each request's line is written when
/// its piece is due (a large body decoded on tokio's blocking pool), so
/// the reply is never built whole.
pub(crate) fn requests(shared: &State, test: Option<&str>, raw: bool) -> Response<Body> {
    let (kept, dropped) = shared.kept(test);
    let list = List {
        requests: kept.into_iter(),
        test: test.map(Arc::from),
        raw,
        chaos: Arc::new(shared.chaos_snapshot(test)),
        piece: BytesMut::from(&b"["[..]),
        first: true,
        ended: false,
    };
    let frames = futures_util::stream::unfold(list, List::next)
        .flat_map(|pieces| futures_util::stream::iter(pieces.into_iter().map(Frame::data).map(Ok)));
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(DROPPED_HEADER, HeaderValue::from(dropped));
    response
}

/// The JSON array of `GET /v1/requests`, on its way out.
struct List {
    requests: std::vec::IntoIter<Kept>,
    /// The test id whose requests they are.
    test: Option<Arc<str>>,
    /// Whether each carries its body as received.
    raw: bool,
    /// What chaos injected, as it stood when the list was asked for.
    chaos: Arc<crate::chaos::Ledger>,
    /// The piece being gathered.
    piece: BytesMut,
    /// No request was written yet.
    first: bool,
    /// The closing `]` was written.
    ended: bool,
}

impl List {
    /// The next pieces: up to [`LIST_PIECE`] bytes of lines (or of bodies
    /// decoded for them), or the lines before a large one and that line
    /// (sent as it is, without a copy).
    async fn next(mut self) -> Option<(Vec<Bytes>, Self)> {
        if self.ended {
            return None;
        }
        let mut pieces = Vec::new();
        let mut decoded = 0;
        while let Some(request) = self.requests.next() {
            let to_decode = request.to_decode();
            let line = if to_decode > BLOCKING_BODY {
                // `null` only if the pool is gone (the runtime shutting
                // down): writing a line does not panic.
                let (test, raw) = (self.test.clone(), self.raw);
                tokio::task::spawn_blocking(move || request.line_as(test.as_deref(), raw))
                    .await
                    .unwrap_or_else(|_| Bytes::from_static(b"null"))
            } else {
                request.line_as(self.test.as_deref(), self.raw)
            };
            let line = self.chaos.splice(self.test.as_deref(), line);
            if !std::mem::take(&mut self.first) {
                self.piece.extend_from_slice(b",");
            }
            if line.len() >= LIST_PIECE {
                pieces.push(self.piece.split().freeze());
                pieces.push(line);
                return Some((pieces, self));
            }
            self.piece.extend_from_slice(&line);
            decoded += to_decode;
            if self.piece.len() >= LIST_PIECE || decoded >= LIST_PIECE {
                pieces.push(self.piece.split().freeze());
                return Some((pieces, self));
            }
        }
        self.piece.extend_from_slice(b"]");
        self.ended = true;
        pieces.push(self.piece.split().freeze());
        Some((pieces, self))
    }
}
