//! The recording proxy: each request goes on to the upstream endpoint,
//! its answer streams back to the client as it arrives, unchanged, and the
//! exchange is saved as a cassette (see [`crate::cassette`]). A redirect
//! is never followed: it is the answer, passed on and recorded as it is.

use std::borrow::Cow;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::mpsc;

use agentstream_beneath::RootDir;

use crate::cassette::{
    headers_json, is_secret_header, length_line, next_number, response_json, Redactor, Writer,
};
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

/// Whether a header belongs to the exchange (not [`HOP_BY_HOP`]): the
/// proxy forwards and records only these, and replay sends only these of
/// a cassette's (a hand-edited one may list any).
pub(crate) fn forwarded(name: &HeaderName) -> bool {
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
/// or any name the header rules call secret, once percent-decoded; pairs
/// split at `&` or `;`) replaced by [`REDACTED`](crate::cassette::REDACTED).
fn redacted_query(query: Option<&str>) -> Option<String> {
    let query = query.filter(|q| !q.is_empty())?;
    let mut out = String::with_capacity(query.len());
    let mut rest = query;
    loop {
        let end = rest.find(['&', ';']).unwrap_or(rest.len());
        let pair = &rest[..end];
        match pair.split_once('=') {
            Some((name, _)) if is_secret_header(&percent_decoded(name)) => {
                out.push_str(name);
                out.push('=');
                out.push_str(crate::cassette::REDACTED);
            }
            _ => out.push_str(pair),
        }
        // The separator, kept as it was.
        match rest[end..].chars().next() {
            Some(separator) => {
                out.push(separator);
                rest = &rest[end + 1..];
            }
            None => break,
        }
    }
    Some(out)
}

/// A query parameter's name percent-decoded (`%6Bey` is `key`; `+` is a
/// space) and in lower case, for the secret rules.
fn percent_decoded(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                at += 1;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_ascii_lowercase()
}

/// The path (and query) a call to `path` with `query` in `api` is sent
/// on upstream, after the upstream's origin and prefix:
/// - a protocol with a fixed [`call_path`](Api::call_path) (OpenAI,
///   Anthropic, Responses) goes on that path, whatever form of it
///   (with or without `/v1`) the client used;
/// - Gemini (the model in the path) and Azure (`/openai/v1/responses`
///   with its `?api-version=`) go as they came, query included (a
///   Gemini `?key=` is the upstream's; only the cassette redacts it);
/// - Mistral, which serve takes under `/mistral` since its path is
///   OpenAI's, goes on Mistral's own `/v1/chat/completions`, with any
///   query.
pub(crate) fn upstream_path(api: Api, path: &str, query: Option<&str>) -> Cow<'static, str> {
    let with_query = |path: &str| {
        let query = query.map(|q| format!("?{q}")).unwrap_or_default();
        Cow::Owned(format!("{path}{query}"))
    };
    match (api, api.call_path()) {
        (Api::Mistral, _) => with_query("/v1/chat/completions"),
        (Api::Azure, _) | (_, None) => with_query(path),
        (_, Some(call_path)) => Cow::Borrowed(call_path),
    }
}

/// The URL of a call going on `path` to an upstream whose origin and
/// prefix is `base`. Azure's path begins with its `/openai`, which an
/// upstream given as `https://NAME.openai.azure.com/openai/v1` (as Azure
/// documents its base URL) has already: it is not written twice.
fn upstream_url(base: &str, path: &str) -> String {
    let base = match path.strip_prefix("/openai/") {
        Some(_) => base.strip_suffix("/openai").unwrap_or(base),
        None => base,
    };
    format!("{base}{path}")
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
    /// `dir`'s handle: cassettes are created beneath it.
    root: RootDir,
    /// The number the next cassette tries first.
    next: AtomicUsize,
    /// How long to wait to connect and for each read.
    timeout: Duration,
    /// The proxies of the test ids seen, recording into `dir/<ID>`.
    tests: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<Proxy>>>,
    /// What is redacted from the bodies before they are written.
    redactor: Redactor,
}

impl Proxy {
    /// A proxy to `upstream` (with or without its `/v1`) recording into
    /// `dir` (created; new exchanges are numbered after the highest
    /// number there, and skip any number taken meanwhile), waiting at
    /// most `timeout` to connect and for each read of an answer.
    pub(crate) fn new(
        upstream: &str,
        dir: PathBuf,
        timeout: Duration,
        redactor: Redactor,
    ) -> io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        let root = RootDir::open(&dir)?;
        let next = next_number(&root)?;
        // A redirect is the upstream's answer, passed to the client and
        // recorded as it is: followed, it would carry the client's keys to
        // an origin they were not meant for (and record that origin's
        // answer). No `Referer` either: its URL can hold Gemini's `?key=`.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .build()
            .map_err(io::Error::other)?;
        let base = upstream.trim_end_matches('/');
        Ok(Self {
            client,
            base: base.strip_suffix("/v1").unwrap_or(base).to_owned(),
            dir,
            root,
            next: AtomicUsize::new(next),
            timeout,
            tests: Default::default(),
            redactor,
        })
    }

    /// The proxy recording the exchanges of test id `name` (a checked
    /// [`cassette_subdir`](crate::lanes::cassette_subdir)) into
    /// `dir/<name>`, created beneath `dir` (an entry there that is not a
    /// directory itself, a symlink included, is refused).
    pub(crate) fn for_test(&self, name: &str) -> io::Result<std::sync::Arc<Proxy>> {
        let mut tests = self.tests.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(proxy) = tests.get(name) {
            return Ok(proxy.clone());
        }
        let dir = self.dir.join(name);
        let root = match agentstream_beneath::create_dir(&self.root, name) {
            Ok(root) => root,
            Err(agentstream_beneath::Refusal::Io(e))
                if e.kind() == io::ErrorKind::AlreadyExists =>
            {
                if !crate::lanes::is_real_dir(&dir) {
                    return Err(io::Error::other(format!(
                        "{} is not a directory (a symlink is never followed)",
                        dir.display()
                    )));
                }
                RootDir::open(&dir)?
            }
            Err(refusal) => return Err(refusal.into()),
        };
        let next = next_number(&root)?;
        let proxy = std::sync::Arc::new(Proxy {
            client: self.client.clone(),
            base: self.base.clone(),
            dir,
            root,
            next: AtomicUsize::new(next),
            timeout: self.timeout,
            tests: Default::default(),
            redactor: self.redactor.clone(),
        });
        tests.insert(name.to_owned(), proxy.clone());
        Ok(proxy)
    }

    /// Sends the request on (to the upstream's origin and prefix, then
    /// `upstream_path`: the route's path and query) and streams the answer back, saving the
    /// exchange when the answer has ended. A request that could not be
    /// decoded is forwarded (the upstream says what is wrong with it) and
    /// not saved: a replay could never match it. `saved`, if given, is
    /// called once the exchange is saved whole (not cut, every piece
    /// written).
    pub(crate) async fn forward(
        &self,
        api: Api,
        upstream_path: &str,
        parts: &Parts,
        body: Bytes,
        decoded: Option<DecodedRequest>,
        saved: Option<Box<dyn FnOnce() + Send>>,
    ) -> Response<Body> {
        let url = upstream_url(&self.base, upstream_path);
        let mut headers = only_forwarded(&parts.headers);
        // The test id is this server's business, not the provider's.
        headers.remove(crate::lanes::TEST_HEADER);
        // The pieces' arrival times are counted from here.
        let start = std::time::Instant::now();
        let sent = self
            .client
            .request(parts.method.clone(), &url)
            .headers(headers)
            .body(body.clone())
            .send()
            .await;
        let mut upstream = match sent {
            Ok(response) => response,
            Err(error) if error.is_timeout() => {
                let message = format!(
                    "agentstream proxy: {url} did not answer within {} ms",
                    self.timeout.as_millis()
                );
                return error_response(api, &ApiError::new(504, message));
            }
            Err(error) => {
                let message = format!("agentstream proxy: cannot reach {url}: {error}");
                return error_response(api, &ApiError::new(502, message));
            }
        };
        let status = upstream.status();
        let response_headers = only_forwarded(upstream.headers());
        let redactor = self.redactor.clone();
        let recorded = decoded.map(|decoded| {
            let mut request = json!({
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
            redactor.value(&mut request);
            Writer::begin(
                &self.root,
                &self.next,
                &request,
                &redactor.bytes(&body),
                status.as_u16(),
                header_object(&response_headers),
                &redactor,
            )
            .map_err(|e| cannot_save(&self.dir, &e))
            .ok()
            .map(|(writer, name)| (writer, self.dir.join(name)))
        });
        let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, io::Error>>(64);
        tokio::spawn(async move {
            let mut recorded = recorded.flatten();
            // Whether the exchange ended before the upstream's answer did:
            // the client left, or the upstream's body broke off.
            let mut cut = false;
            loop {
                match upstream.chunk().await {
                    Ok(Some(piece)) => {
                        if let Some((writer, path)) = &mut recorded {
                            let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                            if let Err(error) = writer.piece(&piece, ms) {
                                cannot_save(path, &error);
                                recorded = None;
                            }
                        }
                        // The client went away: the upstream's answer is
                        // dropped (its connection closed) and the cassette
                        // keeps what the client was sent. Read on, an
                        // endless body would fill the disk.
                        if tx.send(Ok(Frame::data(piece))).await.is_err() {
                            cut = true;
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(error) => {
                        cut = true;
                        let _ = tx.send(Err(io::Error::other(error))).await;
                        break;
                    }
                }
            }
            // The pieces `--redact` held back, written before the client's
            // answer ends.
            if let Some((writer, path)) = &mut recorded {
                if let Err(error) = writer.finish() {
                    cannot_save(path, &error);
                    recorded = None;
                }
            }
            // Marked, so that replay ends the answer early as it ended
            // here, rather than playing it as complete.
            if let (true, Some((writer, path))) = (cut, &mut recorded) {
                if let Err(error) = writer.cut() {
                    cannot_save(path, &error);
                }
            }
            // Before the client's body ends (with `tx`): a client that
            // has read its answer finds the exchange indexed.
            if let (false, Some(_), Some(saved)) = (cut, &recorded, saved) {
                drop(recorded);
                saved();
            }
            drop(tx);
        });
        let frames = futures_util::stream::unfold(rx, |mut rx| async move {
            let item = rx.recv().await?;
            if item.is_err() {
                // The server writes out the pieces it holds before the
                // break: without the pause it would drop them with the
                // connection, and the client would get less than the
                // cassette keeps.
                tokio::task::yield_now().await;
            }
            Some((item, rx))
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

/// The files the recorder writes for an upstream answer of `status` with
/// `headers` and a body in `pieces` (`cut` when it broke off), without a
/// socket or a directory: `response.json` and `response.body.lengths`,
/// as [`Writer`] writes them. `None` for what no upstream can send (a
/// status outside 100–999; headers hyper would not parse are left out).
#[doc(hidden)]
pub fn recorded_answer(
    status: u16,
    headers: &[(&[u8], &[u8])],
    pieces: &[&[u8]],
    cut: bool,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let status = StatusCode::from_u16(status).ok()?;
    let mut map = hyper::HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            map.append(name, value);
        }
    }
    let mut head =
        json!({"status": status.as_u16(), "headers": header_object(&only_forwarded(&map))});
    if cut {
        head["cut"] = serde_json::Value::Bool(true);
    }
    let lengths = pieces
        .iter()
        .map(|p| length_line(p.len()))
        .collect::<String>();
    Some((response_json(&head), lengths.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::{redacted_query, upstream_path, upstream_url};
    use agentstream_wire::Api;

    #[test]
    fn azure_s_openai_prefix_is_not_written_twice() {
        let path = "/openai/v1/responses?api-version=preview";
        let want = "https://x.openai.azure.com/openai/v1/responses?api-version=preview";
        // `Proxy::new` strips a trailing `/v1` from the upstream it is given.
        for base in [
            "https://x.openai.azure.com",
            "https://x.openai.azure.com/openai",
        ] {
            assert_eq!(upstream_url(base, path), want, "{base}");
        }
        // A prefix ending in `openai` on another path is kept.
        assert_eq!(
            upstream_url("https://gw.example/openai", "/v1/chat/completions"),
            "https://gw.example/openai/v1/chat/completions"
        );
    }

    #[test]
    fn each_protocol_goes_upstream_on_its_provider_s_path() {
        let azure = upstream_path(
            Api::Azure,
            "/openai/v1/responses",
            Some("api-version=preview"),
        );
        assert_eq!(azure, "/openai/v1/responses?api-version=preview");
        let mistral = upstream_path(Api::Mistral, "/mistral/v1/chat/completions", None);
        assert_eq!(mistral, "/v1/chat/completions");
        let chat = upstream_path(Api::OpenAi, "/chat/completions", Some("x=1"));
        assert_eq!(chat, "/v1/chat/completions");
        let gemini = "/v1beta/models/m:streamGenerateContent";
        assert_eq!(
            upstream_path(Api::Gemini, gemini, Some("alt=sse")),
            format!("{gemini}?alt=sse")
        );
    }

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

    #[test]
    fn query_secrets_hidden_by_encoding_or_separators_are_redacted() {
        assert_eq!(
            redacted_query(Some("alt=sse;key=s1&%6Bey=s2&API%5FKEY=s3&x=1")).as_deref(),
            Some("alt=sse;key=[redacted]&%6Bey=[redacted]&API%5FKEY=[redacted]&x=1")
        );
        assert_eq!(
            redacted_query(Some("x-password=p&sig=1&x-signature=s&apikey=k")).as_deref(),
            Some("x-password=[redacted]&sig=1&x-signature=[redacted]&apikey=[redacted]")
        );
    }
}
