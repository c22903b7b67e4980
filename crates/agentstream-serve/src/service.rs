//! The hyper service: routing, reading the request, and writing the
//! model's events as the provider's response. The protocol work is in
//! [`crate::openai`] and [`crate::anthropic`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::model::{
    AbortController, ModelEvent, ModelStream, StreamOptions, EXHAUSTED_MESSAGE,
};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::error::{Api, ApiError};
use crate::request::DecodedRequest;
use crate::script::Step;
use crate::server::{Shared, EXHAUSTED_CODE, EXHAUSTED_STATUS};
use crate::{anthropic, openai};

/// The response body type: whole JSON, or an SSE stream that may be cut.
pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

/// SSE events buffered between the model's task and the connection.
const STREAM_BUFFER: usize = 64;

/// How long a cut waits for the events before it to be written.
const CUT_GRACE: std::time::Duration = std::time::Duration::from_millis(20);

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
    let fallback = if anthropic_client {
        Api::Anthropic
    } else {
        Api::OpenAi
    };
    Ok(match (route, &method) {
        ("/chat/completions", &Method::POST) => call(&shared, Api::OpenAi, request).await,
        ("/messages", &Method::POST) => call(&shared, Api::Anthropic, request).await,
        ("/models", &Method::GET) => json_response(StatusCode::OK, models(&shared.model_name)),
        ("/requests", &Method::GET) => {
            let requests: Vec<Value> = shared.requests().iter().map(|r| r.to_json()).collect();
            json_response(StatusCode::OK, Value::Array(requests))
        }
        ("/chat/completions", _) => not_allowed(Api::OpenAi, "POST"),
        ("/messages", _) => not_allowed(Api::Anthropic, "POST"),
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

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn json_response(status: StatusCode, body: Value) -> Response<Body> {
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn error_response(api: Api, error: &ApiError) -> Response<Body> {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, error.body(api));
    if let Some(value) = error
        .retry_after
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
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

async fn call(shared: &Shared, api: Api, request: Request<Incoming>) -> Response<Body> {
    let body = match Limited::new(request.into_body(), shared.max_request_bytes)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            let message = format!(
                "the request body is larger than this server's limit of {} bytes",
                shared.max_request_bytes
            );
            return error_response(api, &ApiError::new(413, message));
        }
        Err(error) => {
            let message = format!("cannot read the request body: {error}");
            return error_response(api, &ApiError::new(400, message));
        }
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(error) => {
            let message = format!("the request body is not valid JSON: {error}");
            return error_response(api, &ApiError::new(400, message));
        }
    };
    let decoded = match api {
        Api::Anthropic => anthropic::decode_request(&value),
        _ => openai::decode_request(&value),
    };
    let DecodedRequest {
        context,
        model,
        stream,
        include_usage,
        ..
    } = match decoded {
        Ok(decoded) => decoded,
        Err(error) => return error_response(api, &error),
    };
    let name = if model.is_empty() {
        shared.model_name.clone()
    } else {
        model.clone()
    };
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let call = match shared.take_call(api, model, stream, context, options) {
        Ok(call) => call,
        Err(error) => return error_response(api, &error),
    };
    let guard = AbortOnDrop(controller);
    let (step, mut events) = match (call.step, call.stream) {
        (Step::Http(error), _) => return error_response(api, &error),
        (step, Some(events)) => (step, events),
        (_, None) => return error_response(api, &ApiError::new(500, "no model stream")),
    };
    let first = match events.next().await {
        Some(event @ ModelEvent::Error { .. }) => return error_response(api, &failed_call(&event)),
        Some(event) => event,
        None => return error_response(api, &ApiError::new(500, "the model sent no events")),
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let id = match api {
        Api::Anthropic => format!("msg_agentstream_{:08}", call.index),
        _ => format!("chatcmpl-agentstream-{}", call.index),
    };
    if !stream {
        return whole(api, step, &id, &name, created, first, events).await;
    }
    let encoder = match api {
        Api::Anthropic => Encoder::Anthropic(
            anthropic::StreamEncoder::new(id, name)
                .with_chunks(shared.chunks)
                .with_ping(shared.pings),
        ),
        _ => Encoder::OpenAi(
            openai::StreamEncoder::new(id, name, created)
                .with_usage(include_usage)
                .with_chunks(shared.chunks),
        ),
    };
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    let pump = Pump {
        encoder,
        step,
        delay: shared.delay,
        tx,
        _guard: guard,
    };
    tokio::spawn(pump.run(first, events));
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
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
    events: ModelStream,
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
    let rest: Vec<ModelEvent> = events.collect().await;
    let terminal = rest.into_iter().last().unwrap_or(first);
    match &terminal {
        ModelEvent::Done { reason, message } => json_response(
            StatusCode::OK,
            match api {
                Api::Anthropic => anthropic::message(id, name, *reason, message),
                _ => openai::completion(id, name, created, *reason, message),
            },
        ),
        _ => error_response(api, &failed_call(&terminal)),
    }
}

/// The protocol a stream is encoded in.
enum Encoder {
    OpenAi(openai::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
}

impl Encoder {
    fn encode(&mut self, event: &ModelEvent, out: &mut Vec<String>) {
        match self {
            Encoder::OpenAi(e) => e.encode(event, out),
            Encoder::Anthropic(e) => e.encode(event, out),
        }
    }

    fn error(&mut self, error: &ApiError, out: &mut Vec<String>) {
        match self {
            Encoder::OpenAi(e) => e.error(error, out),
            Encoder::Anthropic(e) => e.error(error, out),
        }
    }
}

type Item = Result<Frame<Bytes>, io::Error>;

/// Moves one call's events onto its response body.
struct Pump {
    encoder: Encoder,
    step: Step,
    delay: std::time::Duration,
    tx: mpsc::Sender<Item>,
    /// Dropped with the pump: a client that went away aborts the call.
    _guard: AbortOnDrop,
}

impl Pump {
    async fn run(mut self, first: ModelEvent, mut events: ModelStream) {
        let mut pending: VecDeque<String> = VecDeque::new();
        let mut out = Vec::new();
        let mut finished = first.is_terminal();
        self.encoder.encode(&first, &mut out);
        pending.extend(out.drain(..));
        let mut sent = 0usize;
        loop {
            while let Some(frame) = pending.pop_front() {
                match &self.step {
                    Step::StreamError {
                        after_events,
                        error,
                    } if sent == *after_events => {
                        self.encoder.error(error, &mut out);
                        for frame in out.drain(..) {
                            if self.send(Ok(Frame::data(frame.into()))).await.is_err() {
                                return;
                            }
                        }
                        return;
                    }
                    Step::Cut { after_events } if sent == *after_events => {
                        self.flushed().await;
                        let _ = self
                            .send(Err(io::Error::other("the script cut the connection")))
                            .await;
                        return;
                    }
                    _ => {}
                }
                if sent > 0 && !self.delay.is_zero() {
                    tokio::select! {
                        () = tokio::time::sleep(self.delay) => {}
                        () = self.tx.closed() => return,
                    }
                }
                if self.send(Ok(Frame::data(frame.into()))).await.is_err() {
                    return;
                }
                sent += 1;
            }
            if finished {
                return;
            }
            let next = tokio::select! {
                next = events.next() => next,
                () = self.tx.closed() => return,
            };
            let Some(event) = next else {
                return;
            };
            finished = event.is_terminal();
            self.encoder.encode(&event, &mut out);
            pending.extend(out.drain(..));
        }
    }

    /// Waits until the connection has taken every event sent, and gives it
    /// a moment to write them out: hyper drops its write buffer when a body
    /// fails, so a cut must come after the events before it are on the
    /// wire.
    async fn flushed(&self) {
        while self.tx.capacity() < self.tx.max_capacity() && !self.tx.is_closed() {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(CUT_GRACE).await;
    }

    async fn send(&self, item: Item) -> Result<(), ()> {
        self.tx.send(item).await.map_err(|_| ())
    }
}
