//! The response bodies serve writes, and the JSON and error responses
//! every route shares.

use std::io;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::Value;

use agentstream_wire::server::ApiError;
use agentstream_wire::Api;

/// The response body type: whole JSON, or an SSE stream that may be cut.
pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub(crate) fn json_response(status: StatusCode, body: Value) -> Response<Body> {
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An error answer as `api`'s provider sends it: its body and its
/// headers (see [`error_headers`](crate::error_headers)).
pub(crate) fn error_response(api: Api, error: &ApiError) -> Response<Body> {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, error.body(api));
    crate::error_headers::add(api, error, response.headers_mut());
    response
}
