//! The HTTP edge: a request's route and method, its body read within the
//! size and time limits, and the answers that need no call (`GET
//! /v1/models`, `GET /v1/requests`, `GET /v1/unused`, `POST /v1/script`,
//! `POST /v1/reset`, 404, 405, 408, 413, 503). Which
//! protocol a path speaks is the wire crate's [`Route`]; what answers a
//! call is [`crate::answer`].

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONNECTION, CONTENT_LENGTH};
use hyper::{Method, Request, Response, StatusCode};

use crate::answer::answer;
use crate::control::{post_reset, post_script};
use crate::lanes::{test_id, TEST_HEADER};
use crate::listing::{models, requests};
use crate::response::{error_response, json_response, Body};
use crate::route::Target;
use crate::state::State;
use agentstream_wire::server::{answering_api, route_name, ApiError, Route};
use agentstream_wire::Api;

/// Answers one request: a call on a protocol's route, the server's own
/// lists, or the error of a route or method it does not take.
pub(crate) async fn handle(
    shared: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    let not_allowed = |api, allow: &'static str| {
        let error = ApiError::method_not_allowed(method.as_str(), &path);
        let mut response = error_response(api, &error);
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        response
    };
    let headers = request.headers();
    let fallback = || answering_api(&path, |name| headers.contains_key(name));
    let call = Route::of_call(&path);
    // A bad test id is refused before anything else, in the shape of the
    // protocol the call speaks.
    let test = match test_id(headers) {
        Ok(test) => test,
        Err(error) => {
            let api = call.as_ref().map_or_else(fallback, |r| r.api);
            return Ok(error_response(api, &error));
        }
    };
    if let Some(route) = call {
        if method != Method::POST {
            return Ok(not_allowed(route.api, route.api.call_methods()));
        }
        // Kept as the header's value (a shared view of its bytes).
        let test = test.and_then(|_| request.headers().get(TEST_HEADER).cloned());
        let target = Target::new(route, &path, request.uri().query());
        let (parts, body) = request.into_parts();
        let body = match read_body(&shared, target.api, &parts.headers, body).await {
            Ok(body) => body,
            Err(response) => return Ok(response),
        };
        return Ok(answer(&shared, target, parts, body, test).await);
    }
    let fallback = fallback();
    Ok(match (route_name(&path), &method) {
        ("/models", &Method::GET) => json_response(StatusCode::OK, models(&shared.model_name)),
        ("/requests", &Method::GET) => {
            let raw = request
                .uri()
                .query()
                .is_some_and(|query| query.split('&').any(|pair| pair == "raw=1"));
            requests(&shared, test, raw)
        }
        ("/unused", &Method::GET) => json_response(StatusCode::OK, shared.unused(test)),
        ("/reset", &Method::POST) => post_reset(&shared, fallback, test),
        ("/script", &Method::POST) => {
            let (parts, body) = request.into_parts();
            let body = match read_body(&shared, fallback, &parts.headers, body).await {
                Ok(body) => body,
                Err(response) => return Ok(response),
            };
            let test = test_id(&parts.headers).ok().flatten();
            post_script(&shared, fallback, &parts, test, &body)
        }
        ("/models" | "/requests" | "/unused", _) => not_allowed(fallback, "GET"),
        ("/reset" | "/script", _) => not_allowed(fallback, "POST"),
        _ => error_response(
            fallback,
            &ApiError::not_found(fallback, method.as_str(), &path),
        ),
    })
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
pub(crate) async fn read_body(
    shared: &State,
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

/// Bytes of [`State::buffered`] held by one body being read, given back
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
async fn collect_within(shared: &State, mut body: Incoming) -> Result<Bytes, Unread> {
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
