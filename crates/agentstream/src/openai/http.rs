//! What every HTTP adapter shares, still without IO: the endpoint
//! configuration, the prepared request, the target URL, and [`exchange`],
//! the runtime-neutral loop that turns one HTTP response into events.
//!
//! An adapter supplies only what moves bytes: a future that sends the
//! request and resolves to the response head plus a [`ResponseBody`], and
//! its runtime's sleep for the idle timeout. Everything else (status
//! handling, `Retry-After`, error text, abort and timeout races, the SSE
//! decoding and projection) happens here, so every runtime behaves the
//! same.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::pin;
use core::time::Duration;

use futures_util::future::{self, Either};

use super::driver::OpenAiStream;
use super::request::{build_request, Compat, RequestError, RequestOptions};
use crate::message::Context;
use crate::model::{AbortSignal, AssistantMessageProducer};

/// How many bytes of a non-2xx response body are read to quote the
/// provider's message.
pub const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The configuration of an OpenAI-compatible endpoint, shared by every
/// adapter's `OpenAiCompatModel`.
///
/// The API key is never printed: [`Debug`](fmt::Debug) shows `<redacted>`
/// in its place.
///
/// ```
/// use agentstream::openai::http::OpenAiConfig;
///
/// let config = OpenAiConfig::new("https://api.example.com/v1/", "gpt-4o").with_api_key("sk-secret");
/// assert_eq!(config.endpoint_url(), "https://api.example.com/v1/chat/completions");
/// assert!(!format!("{config:?}").contains("sk-secret"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The base URL, such as `https://api.openai.com/v1`; the request goes
    /// to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The bearer token sent in `Authorization`, if any (local servers
    /// often need none).
    pub api_key: Option<String>,
    /// The model id, sent as `model` and recorded in the messages.
    pub model: String,
    /// The provider name recorded in the messages. Default: `openai`.
    pub provider: String,
    /// Provider differences in the request body.
    pub compat: Compat,
    /// The output token limit, if any.
    pub max_tokens: Option<u64>,
    /// The sampling temperature, if any.
    pub temperature: Option<f64>,
    /// How long establishing the connection (TCP and TLS) may take. When it
    /// passes, the call ends in `error(aborted)`.
    pub connect_timeout: Option<Duration>,
    /// How long the response may stay silent: waiting for the response
    /// head, then between two pieces of the body. When it passes, the call
    /// ends in `error(aborted)` with what was received so far.
    pub idle_timeout: Option<Duration>,
}

impl OpenAiConfig {
    /// A configuration for `model` at `base_url`, without API key or
    /// timeouts, with the default [`Compat`].
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            provider: "openai".to_owned(),
            compat: Compat::default(),
            max_tokens: None,
            temperature: None,
            connect_timeout: None,
            idle_timeout: None,
        }
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Sets the provider name recorded in the messages.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the provider differences.
    pub fn with_compat(mut self, compat: Compat) -> Self {
        self.compat = compat;
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the idle timeout.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// `{base_url}/chat/completions`, with a trailing `/` of the base URL
    /// dropped.
    pub fn endpoint_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    /// The request options [`build_request`] needs.
    pub fn request_options(&self) -> RequestOptions {
        let mut options = RequestOptions::new(self.model.clone()).with_compat(self.compat);
        options.max_tokens = self.max_tokens;
        options.temperature = self.temperature;
        options
    }

    /// The request for `context`: URL, headers and JSON body.
    ///
    /// # Errors
    /// The [`RequestError`] of [`build_request`] when the context's tool
    /// calls and results do not pair up.
    pub fn prepare(&self, context: &Context) -> Result<PreparedRequest, RequestError> {
        let body = build_request(context, &self.request_options())?;
        let mut headers = Vec::with_capacity(3);
        headers.push(("content-type", "application/json".to_owned()));
        headers.push(("accept", "text/event-stream".to_owned()));
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        Ok(PreparedRequest {
            url: self.endpoint_url(),
            headers,
            // Serializing a `Value` cannot fail.
            body: serde_json::to_vec(&body).unwrap_or_default(),
        })
    }

    /// A new [`OpenAiStream`] for one response of this endpoint.
    pub fn open_stream(&self, signal: Option<AbortSignal>) -> OpenAiStream {
        OpenAiStream::new(self.model.clone(), self.provider.clone(), signal)
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| Redacted))
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("compat", &self.compat)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// Prints `<redacted>` in place of a secret.
struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// One request, ready to send: `POST url` with `headers` and `body`.
///
/// [`Debug`](fmt::Debug) redacts the `authorization` header.
#[derive(Clone)]
pub struct PreparedRequest {
    /// The absolute URL to `POST` to.
    pub url: String,
    /// Header names (lower case) and values: `content-type`, `accept` and,
    /// with an API key, `authorization`.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Vec<u8>,
}

impl fmt::Debug for PreparedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(&'static str, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_map();
                for (name, value) in self.0 {
                    if *name == "authorization" {
                        list.entry(name, &Redacted);
                    } else {
                        list.entry(name, value);
                    }
                }
                list.finish()
            }
        }
        f.debug_struct("PreparedRequest")
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// An `http://` or `https://` URL split into what a hand-rolled client
/// needs to connect and to write the request line.
///
/// ```
/// use agentstream::openai::http::HttpTarget;
///
/// let target = HttpTarget::parse("https://api.example.com/v1/chat/completions").unwrap();
/// assert!(target.tls);
/// assert_eq!((target.host.as_str(), target.port), ("api.example.com", 443));
/// assert_eq!(target.path, "/v1/chat/completions");
/// assert_eq!(target.authority(), "api.example.com");
///
/// let local = HttpTarget::parse("http://[::1]:8080").unwrap();
/// assert_eq!((local.host.as_str(), local.port, local.path.as_str()), ("::1", 8080, "/"));
/// assert_eq!(local.authority(), "[::1]:8080");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// `https`.
    pub tls: bool,
    /// The host name or IP address, without IPv6 brackets.
    pub host: String,
    /// The port, defaulted from the scheme.
    pub port: u16,
    /// The path and query, starting with `/`.
    pub path: String,
}

impl HttpTarget {
    /// Parses `url`.
    ///
    /// # Errors
    /// A message naming the problem: a scheme other than `http` or
    /// `https`, user info, an empty host or a bad port.
    pub fn parse(url: &str) -> Result<Self, String> {
        let (tls, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
            (true, rest)
        } else if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
            (false, rest)
        } else {
            return Err(format!(
                "unsupported URL (expected http:// or https://): {url}"
            ));
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        let path = path.split('#').next().unwrap_or("");
        if authority.contains('@') {
            return Err(format!("user info in URLs is not supported: {url}"));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let close = bracketed
                .find(']')
                .ok_or_else(|| format!("unclosed IPv6 address in URL: {url}"))?;
            let port = match &bracketed[close + 1..] {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| format!("bad URL: {url}"))?,
                ),
            };
            (&bracketed[..close], port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("no host in URL: {url}"));
        }
        let port = match port {
            None | Some("") => default_port,
            Some(port) => port
                .parse()
                .map_err(|_| format!("bad port in URL: {url}"))?,
        };
        let path = if path.is_empty() {
            "/".to_owned()
        } else if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        Ok(Self {
            tls,
            host: host.to_owned(),
            port,
            path,
        })
    }

    /// The `Host` header value: the host, bracketed if IPv6, with the port
    /// unless it is the scheme's default.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Why an adapter's HTTP client could not deliver (more of) a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The connect timeout (or a timeout of the client itself) passed: the
    /// call ends in `error(aborted)`.
    TimedOut,
    /// Anything else (refused connection, TLS failure, reset, a body cut
    /// off mid-stream): the call ends in `error` with this message.
    Failed(String),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            Self::Failed(message) => f.write_str(message),
        }
    }
}

/// The head of a response, as an adapter's client reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code.
    pub status: u16,
    /// The `Retry-After` header, if present.
    pub retry_after: Option<String>,
}

/// The body of a response, read piece by piece. Implemented by each
/// adapter over its HTTP client.
pub trait ResponseBody: Send {
    /// One piece of the body.
    type Chunk: AsRef<[u8]> + Send;

    /// The next piece; `Ok(None)` at the end of the body.
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Self::Chunk>, TransportError>> + Send;
}

/// What one step waited for.
enum Step<T> {
    Ready(T),
    Aborted,
    Idle,
}

/// Waits for `work`, unless the signal aborts or the idle timeout passes
/// first.
async fn step<T, S>(
    work: impl Future<Output = T>,
    signal: Option<&AbortSignal>,
    idle: Option<Duration>,
    sleep: &impl Fn(Duration) -> S,
) -> Step<T>
where
    S: Future<Output = ()>,
{
    let aborted = async {
        match signal {
            Some(signal) => signal.aborted().await,
            None => future::pending().await,
        }
    };
    let idle = async {
        match idle {
            Some(duration) => sleep(duration).await,
            None => future::pending().await,
        }
    };
    // The abort and the timer are polled first, so an abort that already
    // happened wins over data that is ready.
    let interrupt = async {
        match future::select(pin!(aborted), pin!(idle)).await {
            Either::Left(_) => Step::<T>::Aborted,
            Either::Right(_) => Step::Idle,
        }
    };
    match future::select(pin!(interrupt), pin!(work)).await {
        Either::Left((interrupt, _)) => interrupt,
        Either::Right((value, _)) => Step::Ready(value),
    }
}

/// Runs one HTTP exchange: awaits `response` (the adapter's client sending
/// the request), then feeds the body to `stream` and pushes every event
/// into `producer`, until the stream has its terminal event.
///
/// - A status outside 2xx: up to [`ERROR_BODY_LIMIT`] bytes of the body are
///   read and the call ends with [`OpenAiStream::http_error`], naming the
///   status, the provider's message and `Retry-After`.
/// - A 2xx body is decoded as it arrives; a body that is not an event
///   stream (a JSON error with status 200) ends in `error` quoting it.
/// - `signal` aborting, or `idle_timeout` passing with nothing received
///   (measured with `sleep`, the runtime's timer), ends the call in
///   `error(aborted)` with what was received so far; the request is
///   dropped, which closes the connection.
/// - [`TransportError::TimedOut`] is an abort too;
///   [`TransportError::Failed`] ends in `error` with its message.
///
/// It returns early when nobody listens to the stream any more.
pub async fn exchange<B, R, S>(
    mut producer: AssistantMessageProducer,
    mut stream: OpenAiStream,
    signal: Option<AbortSignal>,
    idle_timeout: Option<Duration>,
    sleep: impl Fn(Duration) -> S,
    response: R,
) where
    B: ResponseBody,
    R: Future<Output = Result<(ResponseHead, B), TransportError>>,
    S: Future<Output = ()>,
{
    if signal.as_ref().is_some_and(AbortSignal::is_aborted) {
        OpenAiStream::push_all(&mut producer, stream.abort());
        return;
    }
    let (head, mut body) = match step(response, signal.as_ref(), idle_timeout, &sleep).await {
        Step::Ready(Ok(response)) => response,
        Step::Ready(Err(TransportError::TimedOut)) | Step::Aborted | Step::Idle => {
            OpenAiStream::push_all(&mut producer, stream.abort());
            return;
        }
        Step::Ready(Err(TransportError::Failed(message))) => {
            OpenAiStream::push_all(&mut producer, stream.fail(message));
            return;
        }
    };
    if !(200..300).contains(&head.status) {
        let mut text = Vec::new();
        while text.len() < ERROR_BODY_LIMIT {
            match step(body.next_chunk(), signal.as_ref(), idle_timeout, &sleep).await {
                Step::Ready(Ok(Some(chunk))) => {
                    let chunk = chunk.as_ref();
                    let room = ERROR_BODY_LIMIT - text.len();
                    text.extend_from_slice(&chunk[..room.min(chunk.len())]);
                }
                // The status is what matters: report it with what was read.
                Step::Ready(Ok(None) | Err(_)) | Step::Idle => break,
                Step::Aborted => {
                    OpenAiStream::push_all(&mut producer, stream.abort());
                    return;
                }
            }
        }
        OpenAiStream::push_all(
            &mut producer,
            stream.http_error(head.status, &text, head.retry_after.as_deref()),
        );
        return;
    }
    loop {
        let events = match step(body.next_chunk(), signal.as_ref(), idle_timeout, &sleep).await {
            Step::Ready(Ok(Some(chunk))) => stream.feed(chunk.as_ref()),
            Step::Ready(Ok(None)) => stream.finish_input(),
            Step::Ready(Err(TransportError::TimedOut)) | Step::Aborted | Step::Idle => {
                stream.abort()
            }
            Step::Ready(Err(TransportError::Failed(message))) => {
                stream.fail(format!("the response body broke off: {message}"))
            }
        };
        if !OpenAiStream::push_all(&mut producer, events) || stream.is_finished() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        let t = HttpTarget::parse("http://127.0.0.1:9/v1/chat/completions?x=1#frag").unwrap();
        assert_eq!(
            t,
            HttpTarget {
                tls: false,
                host: "127.0.0.1".into(),
                port: 9,
                path: "/v1/chat/completions?x=1".into(),
            }
        );
        assert_eq!(t.authority(), "127.0.0.1:9");
        assert_eq!(HttpTarget::parse("HTTP://h?q").unwrap().path, "/?q");
        assert!(HttpTarget::parse("ftp://h/").is_err());
        assert!(HttpTarget::parse("http://u:p@h/").is_err());
        assert!(HttpTarget::parse("http://h:99999/").is_err());
        assert!(HttpTarget::parse("http:///x").is_err());
    }

    #[test]
    fn the_key_is_redacted() {
        let config = OpenAiConfig::new("http://h/v1", "m").with_api_key("sk-123");
        let request = config
            .prepare(&Context::from_messages([crate::message::user("hi").into()]))
            .unwrap();
        assert!(request
            .headers
            .contains(&("authorization", "Bearer sk-123".into())));
        let printed = format!("{config:?} {request:?}");
        assert!(!printed.contains("sk-123"), "{printed}");
        assert!(printed.contains("<redacted>"));
    }
}
