//! The recording proxy: each request goes on to the upstream endpoint,
//! its answer streams back to the client as it arrives, unchanged, and the
//! exchange is saved as a cassette (see [`crate::cassette`]).

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::mpsc;

use crate::cassette::{headers_json, is_secret_header, Writer};
use crate::response::{error_response, Body};
use agentstream_wire::server::options_json;
use agentstream_wire::server::ApiError;
use agentstream_wire::server::DecodedRequest;
use agentstream_wire::Api;

/// Headers that belong to one connection, not to the exchange: never
/// forwarded either way, never recorded.
const HOP_BY_HOP: [&str; 11] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
    "expect",
    // The body is recorded as sent: ask for it unencoded.
    "accept-encoding",
];

fn forwarded(name: &HeaderName) -> bool {
    !HOP_BY_HOP.contains(&name.as_str())
}

/// The headers of a cassette: those forwarded, secrets redacted.
fn header_object(headers: &hyper::HeaderMap) -> serde_json::Value {
    headers_json(
        headers
            .iter()
            .filter(|(name, _)| forwarded(name))
            .map(|(name, value)| (name.as_str(), value.as_bytes())),
    )
}

/// A request's query as a cassette records it: `None` without one, each
/// secret parameter's value (`key`, as the Gemini API takes its API key,
/// or any name the header rules call secret) replaced by
/// [`REDACTED`](crate::cassette::REDACTED).
fn redacted_query(query: Option<&str>) -> Option<String> {
    let query = query.filter(|q| !q.is_empty())?;
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name == "key" || is_secret_header(name) => {
                format!("{name}={}", crate::cassette::REDACTED)
            }
            _ => pair.to_owned(),
        })
        .collect();
    Some(pairs.join("&"))
}

/// Says on stderr that a cassette could not be saved (the exchange itself
/// goes on).
fn cannot_save(path: &std::path::Path, error: &io::Error) {
    eprintln!(
        "agentstream proxy: cannot save the cassette {}: {error}",
        path.display()
    );
}

fn only_forwarded(headers: &hyper::HeaderMap) -> hyper::HeaderMap {
    headers
        .iter()
        .filter(|(name, _)| forwarded(name))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// Where a recording server sends its requests and saves its cassettes.
pub(crate) struct Proxy {
    client: reqwest::Client,
    /// The upstream's origin and path prefix, without a trailing `/v1`.
    base: String,
    dir: PathBuf,
    next: AtomicUsize,
}

impl Proxy {
    /// A proxy to `upstream` (with or without its `/v1`) recording into
    /// `dir` (created; new exchanges are numbered after those already
    /// there).
    pub(crate) fn new(upstream: &str, dir: PathBuf) -> io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        let existing = std::fs::read_dir(&dir)?
            .filter_map(Result::ok)
            .filter(|e| e.path().join("request.json").is_file())
            .count();
        let client = reqwest::Client::builder()
            .build()
            .map_err(io::Error::other)?;
        let base = upstream.trim_end_matches('/');
        Ok(Self {
            client,
            base: base.strip_suffix("/v1").unwrap_or(base).to_owned(),
            dir,
            next: AtomicUsize::new(existing),
        })
    }

    /// Sends the request on (to the upstream's origin and prefix, then
    /// `upstream_path`: the route's path and query) and streams the answer back, saving the
    /// exchange when the answer has ended. A request that could not be
    /// decoded is forwarded (the upstream says what is wrong with it) and
    /// not saved: a replay could never match it.
    pub(crate) async fn forward(
        &self,
        api: Api,
        upstream_path: &str,
        parts: &Parts,
        body: Bytes,
        decoded: Option<DecodedRequest>,
    ) -> Response<Body> {
        let url = format!("{}{upstream_path}", self.base);
        let headers = only_forwarded(&parts.headers);
        let sent = self
            .client
            .request(parts.method.clone(), &url)
            .headers(headers)
            .body(body.clone())
            .send()
            .await;
        let mut upstream = match sent {
            Ok(response) => response,
            Err(error) => {
                let message = format!("agentstream proxy: cannot reach {url}: {error}");
                return error_response(api, &ApiError::new(502, message));
            }
        };
        let status = upstream.status();
        let response_headers = only_forwarded(upstream.headers());
        let recorded = decoded.map(|decoded| {
            let name = format!("{:04}", self.next.fetch_add(1, Ordering::Relaxed));
            let request = json!({
                "api": api.pi_api(),
                "method": parts.method.as_str(),
                "path": parts.uri.path(),
                "query": redacted_query(parts.uri.query()),
                "headers": header_object(&parts.headers),
                "model": decoded.model,
                "stream": decoded.stream,
                "context": decoded.context,
                "options": options_json(&decoded.options),
            });
            let path = self.dir.join(&name);
            Writer::begin(
                &self.dir,
                &name,
                &request,
                &body,
                status.as_u16(),
                header_object(&response_headers),
            )
            .map_err(|e| cannot_save(&path, &e))
            .ok()
            .map(|writer| (writer, path))
        });
        let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, io::Error>>(64);
        tokio::spawn(async move {
            let mut recorded = recorded.flatten();
            let mut client_gone = false;
            loop {
                match upstream.chunk().await {
                    Ok(Some(piece)) => {
                        if let Some((writer, path)) = &mut recorded {
                            if let Err(error) = writer.piece(&piece) {
                                cannot_save(path, &error);
                                recorded = None;
                            }
                        }
                        // The client going away does not stop the
                        // recording: the upstream's answer is saved whole.
                        if !client_gone {
                            client_gone = tx.send(Ok(Frame::data(piece))).await.is_err();
                        }
                    }
                    Ok(None) => break,
                    Err(error) => {
                        let _ = tx.send(Err(io::Error::other(error))).await;
                        break;
                    }
                }
            }
        });
        let frames = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
        *response.status_mut() =
            StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        for (name, value) in &response_headers {
            if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
                response.headers_mut().append(name.clone(), value);
            }
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::redacted_query;

    #[test]
    fn query_secrets_are_redacted() {
        assert_eq!(
            redacted_query(Some("alt=sse&key=AIza-secret&x=1")).as_deref(),
            Some("alt=sse&key=[redacted]&x=1")
        );
        assert_eq!(
            redacted_query(Some("api_key=s&access_token=t")).as_deref(),
            Some("api_key=[redacted]&access_token=[redacted]")
        );
        assert_eq!(redacted_query(None), None);
        assert_eq!(redacted_query(Some("")), None);
    }
}
