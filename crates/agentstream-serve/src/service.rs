//! The hyper service: routing, reading the request, and writing the
//! model's events as the provider's response. The protocol work is in
//! [`crate::openai`] and [`crate::anthropic`].

use std::convert::Infallible;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::message::AssistantMessage;
use agentstream::model::{
    AbortController, AbortSignal, DoneReason, ModelEvent, ModelStream, EXHAUSTED_MESSAGE,
};
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::calls::{Answer, Call, Shared, Source, EXHAUSTED_CODE, EXHAUSTED_STATUS};
use crate::cassette::Recorded;
use crate::frames::{next_event, Pump, EVENTS_CAPACITY};
use crate::log::Kept;
use crate::response::{error_response, json_response, Body};
use crate::route::{decode, Target};
use crate::script::Step;
use agentstream_wire::server::{self, ApiError, Encoder, Events};
use agentstream_wire::Api;

/// Bodies larger than this are decoded on tokio's blocking pool, so a
/// heavy request never holds up the connections beside it.
const BLOCKING_BODY: usize = 64 << 10;

/// The size of the pieces `GET /v1/requests` is written in.
const LIST_PIECE: usize = 64 << 10;

/// The header of `GET /v1/requests` counting the requests dropped from
/// the memory log.
pub(crate) const DROPPED_HEADER: &str = "agentstream-dropped-requests";

pub(crate) async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = request.uri().path().to_owned();
    let route = path
        .strip_prefix("/v1")
        .unwrap_or(&path)
        .trim_end_matches('/');
    let method = request.method().clone();
    let anthropic_client = request.headers().contains_key("anthropic-version")
        || request.headers().contains_key("x-api-key");
    let not_allowed = |api, allow: &'static str| {
        let message = format!("Invalid method for URL ({method} {path})");
        let mut response = error_response(api, &ApiError::new(405, message));
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        response
    };
    let fallback = if path.starts_with("/v1beta/") {
        Api::Google
    } else if anthropic_client {
        Api::Anthropic
    } else {
        Api::OpenAi
    };
    if let Some(target) = Target::google(&path, request.uri().query()) {
        if method != Method::POST {
            return Ok(not_allowed(Api::Google, "POST"));
        }
        return Ok(call(&shared, target, request).await);
    }
    Ok(match (route, &method) {
        ("/chat/completions", &Method::POST) => {
            let target = Target::new(Api::OpenAi, "/v1/chat/completions");
            call(&shared, target, request).await
        }
        ("/messages", &Method::POST) => {
            call(
                &shared,
                Target::new(Api::Anthropic, "/v1/messages"),
                request,
            )
            .await
        }
        ("/responses", &Method::POST) => {
            call(
                &shared,
                Target::new(Api::Responses, "/v1/responses"),
                request,
            )
            .await
        }
        ("/models", &Method::GET) => json_response(StatusCode::OK, models(&shared.model_name)),
        ("/requests", &Method::GET) => requests(&shared),
        ("/chat/completions", _) => not_allowed(Api::OpenAi, "POST"),
        ("/messages", _) => not_allowed(Api::Anthropic, "POST"),
        ("/responses", _) => not_allowed(Api::Responses, "POST"),
        ("/models" | "/requests", _) => not_allowed(fallback, "GET"),
        _ => {
            let message = match fallback {
                Api::Anthropic => "Not Found".to_owned(),
                _ => format!("Invalid URL ({method} {path})"),
            };
            error_response(fallback, &ApiError::new(404, message))
        }
    })
}

/// `GET /v1/models`: one model, with the fields of both providers' lists.
fn models(name: &str) -> Value {
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

/// A body that fails at once: the connection is closed mid-response.
fn cut_body() -> Body {
    let items = [Err::<Frame<Bytes>, _>(io::Error::other(
        "the script cut the connection",
    ))];
    StreamBody::new(futures_util::stream::iter(items)).boxed_unsync()
}

/// Aborts the call's signal when the response is dropped (the client
/// went away) or finished.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The error answer for a model that failed before its first event: the
/// script ran out, or the model refused the call.
fn failed_call(event: &ModelEvent) -> ApiError {
    let error = match event.terminal_message() {
        Some(message) => ApiError::model_failure(message),
        None => ApiError::new(500, "the model failed"),
    };
    if error.message == EXHAUSTED_MESSAGE {
        ApiError::new(EXHAUSTED_STATUS, error.message).with_code(EXHAUSTED_CODE)
    } else {
        error
    }
}

/// `GET /v1/requests`: the kept requests as a JSON array, written piece
/// by piece as the client reads it: each request's line is written when
/// its piece is due (a large body decoded on tokio's blocking pool), so
/// the reply is never built whole.
fn requests(shared: &Shared) -> Response<Body> {
    let (kept, dropped) = shared.kept();
    let list = List {
        requests: kept.into_iter(),
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
                tokio::task::spawn_blocking(move || request.line())
                    .await
                    .unwrap_or_else(|_| Bytes::from_static(b"null"))
            } else {
                request.line()
            };
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

/// The answer to a request whose connection is being closed because its
/// headers came after the header timeout: 408, and the connection closes.
pub(crate) fn too_late() -> Response<Body> {
    let message = "the request's headers did not arrive within the header timeout";
    closing(Api::OpenAi, &ApiError::new(408, message))
}

/// An error answer after which the connection is closed (the request's
/// body was not read to its end).
fn closing(api: Api, error: &ApiError) -> Response<Body> {
    let mut response = error_response(api, error);
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Reads the body within the size and time limits.
async fn read_body(
    shared: &Shared,
    api: Api,
    headers: &hyper::HeaderMap,
    body: Incoming,
) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        let message = format!(
            "the request body is larger than this server's limit of {} bytes",
            shared.max_request_bytes
        );
        closing(api, &ApiError::new(413, message))
    };
    // A declared length past the limit is refused before the body is
    // read, so `Expect: 100-continue` gets the 413 instead of `100
    // Continue`.
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > shared.max_request_bytes as u64) {
        return Err(too_large());
    }
    let mut reading = std::pin::pin!(collect_within(shared, body));
    // A body that came with its headers needs no timer.
    let read = match (&mut reading).now_or_never() {
        Some(read) => Ok(read),
        None => tokio::time::timeout(shared.body_timeout, reading).await,
    };
    match read {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(Unread::TooLarge)) => Err(too_large()),
        Ok(Err(Unread::Busy)) => {
            let message = format!(
                "this server already holds {} bytes of request bodies still arriving; try again later",
                shared.max_buffered
            );
            Err(closing(api, &ApiError::new(503, message)))
        }
        Ok(Err(Unread::Failed(error))) => {
            let message = format!("cannot read the request body: {error}");
            Err(closing(api, &ApiError::new(400, message)))
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} ms",
                shared.body_timeout.as_millis()
            );
            Err(closing(api, &ApiError::new(408, message)))
        }
    }
}

/// Why a request body was not read.
enum Unread {
    /// Past the request limit.
    TooLarge,
    /// Past the bound on bodies being received across all connections.
    Busy,
    /// The connection's error.
    Failed(hyper::Error),
}

/// Bytes of [`Shared::buffered`] held by one body being read, given back
/// when it is dropped (read, refused, or its connection gone).
struct Reservation<'a> {
    buffered: &'a AtomicUsize,
    bytes: usize,
}

impl Reservation<'_> {
    /// Takes `more` bytes, unless the total would pass `max`.
    fn take(&mut self, more: usize, max: usize) -> bool {
        let taken = self
            .buffered
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(more).filter(|&total| total <= max)
            });
        if taken.is_ok() {
            self.bytes += more;
        }
        taken.is_ok()
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.buffered.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Reads `body` whole, within the request limit and the shared bound on
/// bodies being received (each frame is counted as it arrives).
async fn collect_within(shared: &Shared, mut body: Incoming) -> Result<Bytes, Unread> {
    let mut reservation = Reservation {
        buffered: &shared.buffered,
        bytes: 0,
    };
    let mut pieces: Vec<Bytes> = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(Unread::Failed)?.into_data() else {
            continue;
        };
        if reservation.bytes + data.len() > shared.max_request_bytes {
            return Err(Unread::TooLarge);
        }
        if !reservation.take(data.len(), shared.max_buffered) {
            return Err(Unread::Busy);
        }
        pieces.push(data);
    }
    Ok(match pieces.len() {
        0 => Bytes::new(),
        1 => pieces.swap_remove(0),
        _ => {
            let mut whole = BytesMut::with_capacity(reservation.bytes);
            for piece in &pieces {
                whole.extend_from_slice(piece);
            }
            whole.freeze()
        }
    })
}

/// A decoded call: what the response needs of the request, and the call.
struct Taken {
    model: String,
    stream: bool,
    include_usage: bool,
    call: Call,
}

/// Decodes the body and takes the call. The decoded context is dropped
/// here: the log holds a copy of the body (or its JSON line), the model
/// what it needs of the context.
fn take(
    shared: &Shared,
    target: &Target,
    body: &[u8],
    signal: AbortSignal,
) -> Result<Taken, ApiError> {
    let mut decoded = decode(target, body)?;
    let call = shared.take_call(target, body, &mut decoded, signal)?;
    Ok(Taken {
        model: decoded.model,
        stream: decoded.stream,
        include_usage: decoded.include_usage,
        call,
    })
}

/// Runs `work` on the body: on tokio's blocking pool when it is large.
async fn off_the_thread<T: Send + 'static>(
    body: &Bytes,
    work: impl FnOnce(&[u8]) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    if body.len() <= BLOCKING_BODY {
        return work(body);
    }
    let body = body.clone();
    tokio::task::spawn_blocking(move || work(&body))
        .await
        .unwrap_or_else(|_| Err(ApiError::new(500, "decoding the request failed")))
}

async fn call(shared: &Arc<Shared>, target: Target, request: Request<Incoming>) -> Response<Body> {
    let api = target.api;
    let (parts, body) = request.into_parts();
    let body = match read_body(shared, api, &parts.headers, body).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    match &shared.source {
        Source::Model => {}
        Source::Upstream(proxy) => {
            let decoding = target.clone();
            let decoded = off_the_thread(&body, move |body| decode(&decoding, body)).await;
            if let Ok(decoded) = &decoded {
                if let Err(error) = shared.record(&target, &body, decoded) {
                    return error_response(api, &error);
                }
            }
            return proxy
                .forward(api, &target.upstream, &parts, body, decoded.ok())
                .await;
        }
        Source::Replay(player) => {
            let decoding = target.clone();
            let decoded = match off_the_thread(&body, move |body| decode(&decoding, body)).await {
                Ok(decoded) => decoded,
                Err(error) => return error_response(api, &error),
            };
            if let Err(error) = shared.record(&target, &body, &decoded) {
                return error_response(api, &error);
            }
            return match player.pick(api, decoded.stream, &decoded.context) {
                Ok((cassette, answer)) => replayed(cassette, answer.clone()),
                Err(error) => error_response(api, &error),
            };
        }
    }
    let controller = AbortController::new();
    let taken = if body.len() > BLOCKING_BODY {
        let (shared, signal) = (shared.clone(), controller.signal());
        tokio::task::spawn_blocking(move || take(&shared, &target, &body, signal))
            .await
            .unwrap_or_else(|_| Err(ApiError::new(500, "decoding the request failed")))
    } else {
        take(shared, &target, &body, controller.signal())
    };
    let Taken {
        model,
        stream,
        include_usage,
        call,
    } = match taken {
        Ok(taken) => taken,
        Err(error) => return error_response(api, &error),
    };
    let name = if model.is_empty() {
        shared.model_name.clone()
    } else {
        model
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let id = server::answer_id(api, call.index);
    let (step, mut events) = match call.answer {
        Answer::Refused(error) => return error_response(api, &error),
        Answer::Events { events, step } => (step, events),
        Answer::Message {
            message,
            reason,
            full_sequence,
        } => {
            if !stream {
                return completed(api, &id, &name, created, reason, &message);
            }
            // The events the turn would play, encoded as the pump would
            // have encoded them, without the events. The pump too would
            // have sent them at once (in frames of up to 64 KiB; here one
            // frame).
            let mut encoder = encoder(shared, api, id, name, created, include_usage);
            let mut out = Events::with_capacity(EVENTS_CAPACITY);
            server::message_steps(&message, reason, full_sequence, |step| {
                encoder.encode(step, &mut out);
            });
            let frame = out.take(out.len());
            let frames = futures_util::stream::iter([Ok(Frame::data(frame))]);
            return event_stream(StreamBody::new(frames).boxed_unsync());
        }
    };
    let guard = AbortOnDrop(controller);
    let first = match next_event(&mut events).await {
        Some(event @ ModelEvent::Error { .. }) => return error_response(api, &failed_call(&event)),
        Some(event) => event,
        None => return error_response(api, &ApiError::new(500, "the model sent no events")),
    };
    if !stream {
        return whole(api, step, &id, &name, created, first, events).await;
    }
    let encoder = encoder(shared, api, id, name, created, include_usage);
    let frames = Pump::new(encoder, step, shared.delay, &first, events, guard).frames();
    event_stream(StreamBody::new(frames).boxed_unsync())
}

/// The encoder of a streamed answer in `api`'s protocol.
fn encoder(
    shared: &Shared,
    api: Api,
    id: String,
    name: String,
    created: u64,
    include_usage: bool,
) -> Encoder {
    Encoder::new(api, id, name, created)
        .with_chunks(shared.chunks)
        .with_ping(shared.pings)
        .with_usage(include_usage)
}

/// A streamed answer with `body`.
fn event_stream(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A cassette's answer: its status and headers, and its body in the
/// pieces it arrived in, each written on its own as a view of the one
/// copy of the body (a request holds no copy, whatever the pieces); a
/// cut cassette's body then breaks off, as it did when it was recorded.
fn replayed(cassette: &crate::cassette::Cassette, answer: Recorded) -> Response<Body> {
    let cut = cassette.cut;
    let frames = futures_util::stream::unfold(
        (answer, 0usize, 0usize),
        move |(answer, k, at)| async move {
            if k > answer.len() || (k == answer.len() && !cut) {
                return None;
            }
            // A pause between pieces lets the connection write each one
            // out (before a break too, which would drop what it holds).
            if k > 0 {
                tokio::task::yield_now().await;
            }
            if k == answer.len() {
                // A cut exchange breaks off here, as it did live: the
                // connection closes without the body's end.
                let error = std::io::Error::other("the recorded exchange was cut here");
                return Some((Err(error), (answer, k + 1, at)));
            }
            let piece = answer.piece(k, at);
            let next = at + piece.len();
            Some((Ok(Frame::data(piece)), (answer, k + 1, next)))
        },
    );
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    *response.status_mut() =
        StatusCode::from_u16(cassette.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &cassette.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            // The body's framing and the connection are this server's.
            if crate::proxy::forwarded(&name) {
                response.headers_mut().append(name, value);
            }
        }
    }
    response
}

/// The non-streaming answer: the whole message as one JSON body.
async fn whole(
    api: Api,
    step: Step,
    id: &str,
    name: &str,
    created: u64,
    first: ModelEvent,
    mut events: ModelStream,
) -> Response<Body> {
    match step {
        Step::Cut { .. } => {
            let mut response = Response::new(cut_body());
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return response;
        }
        Step::StreamError { error, .. } => return error_response(api, &error),
        _ => {}
    }
    let mut terminal = first;
    while let Some(event) = next_event(&mut events).await {
        terminal = event;
    }
    match &terminal {
        ModelEvent::Done { reason, message } => completed(api, id, name, created, *reason, message),
        _ => error_response(api, &failed_call(&terminal)),
    }
}

/// The non-streaming answer of a call that ended well.
fn completed(
    api: Api,
    id: &str,
    name: &str,
    created: u64,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Response<Body> {
    json_response(
        StatusCode::OK,
        server::whole_answer(api, id, name, created, reason, message),
    )
}
