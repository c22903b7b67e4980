//! What an HTTP adapter needs from a provider's configuration, whatever
//! the protocol: the [`PreparedRequest`] to send, the [`ResponseStream`]
//! that decodes the answer, and the timeouts. [`Endpoint`] is implemented
//! by [`OpenAiConfig`](crate::openai::OpenAiConfig) and
//! [`AnthropicConfig`](crate::anthropic::AnthropicConfig); an adapter
//! writes its HTTP model once, generic over it, and hands the response to
//! [`exchange`](crate::http::exchange).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use agentstream::message::Context;
use agentstream::model::{AbortSignal, StreamOptions};

use crate::http::ResponseStream;

/// Header names whose values are secrets: [`PreparedRequest`]'s
/// [`Debug`](fmt::Debug) prints `<redacted>` for them.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// One provider endpoint as an HTTP adapter sees it.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::endpoint::Endpoint;
/// use agentstream_wire::openai::OpenAiConfig;
///
/// fn url_of(endpoint: &impl Endpoint) -> String {
///     let context = Context::from_messages([user("hi").into()]);
///     endpoint.prepare(&context).map(|r| r.url).unwrap_or_default()
/// }
/// assert_eq!(url_of(&OpenAiConfig::new("http://h/v1", "m")), "http://h/v1/chat/completions");
/// ```
pub trait Endpoint {
    /// The decoder of one response.
    type Stream: ResponseStream + Send + 'static;
    /// Why a context cannot be sent.
    type Error: fmt::Display;

    /// The request for `context`: URL, headers and JSON body.
    ///
    /// # Errors
    /// When the context cannot be turned into a valid request.
    fn prepare(&self, context: &Context) -> Result<PreparedRequest, Self::Error>;

    /// A new decoder for one response, observing `signal`.
    fn open_stream(&self, signal: Option<AbortSignal>) -> Self::Stream;

    /// A new decoder whose messages carry `timestamp_ms` (Unix
    /// milliseconds): the adapters pass the wall-clock time at the start of
    /// the call, as Pi stamps its messages; the wire crate has no clock.
    /// The default ignores the time (messages keep timestamp 0).
    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> Self::Stream {
        let _ = timestamp_ms;
        self.open_stream(signal)
    }

    /// The request for `context` with the per-call `options` (token limit,
    /// sampling, tool choice, reasoning, response format) over the
    /// configuration's defaults. The default ignores the options and calls
    /// [`prepare`](Self::prepare).
    ///
    /// # Errors
    /// When the context cannot be turned into a valid request.
    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, Self::Error> {
        let _ = options;
        self.prepare(context)
    }

    /// How long establishing the connection may take.
    fn connect_timeout(&self) -> Option<Duration>;

    /// How long the response may stay silent.
    fn idle_timeout(&self) -> Option<Duration>;
}

/// Prints `<redacted>` in place of a secret.
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// One request, ready to send: `POST url` with `headers` and `body`.
///
/// [`Debug`](fmt::Debug) redacts the [secret headers](SECRET_HEADERS).
/// Built by an [`Endpoint`]'s [`prepare`](Endpoint::prepare).
#[derive(Clone)]
#[non_exhaustive]
pub struct PreparedRequest {
    /// The absolute URL to `POST` to.
    pub url: String,
    /// Header names (lower case) and values, such as `content-type`,
    /// `accept` and the provider's authentication header.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Vec<u8>,
    /// The configuration's extra headers (see
    /// [`ExtraHeaders`](crate::options::ExtraHeaders)), validated, names in
    /// lower case, sent after [`headers`](Self::headers). A default header
    /// with the same name is left out of `headers`, so an extra header
    /// replaces it.
    pub extra_headers: Vec<(String, String)>,
}

impl PreparedRequest {
    /// A request to `url` with `headers` and `body`.
    pub fn new(url: String, headers: Vec<(&'static str, String)>, body: Vec<u8>) -> Self {
        Self {
            url,
            headers,
            body,
            extra_headers: Vec::new(),
        }
    }

    /// The value of the header `name` (lower case), if present: an extra
    /// header first, else a default one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.extra_headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                self.headers
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.as_str())
            })
    }
}

impl fmt::Debug for PreparedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(&'static str, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_map();
                for (name, value) in self.0 {
                    if SECRET_HEADERS.contains(name) {
                        list.entry(name, &Redacted);
                    } else {
                        list.entry(name, value);
                    }
                }
                list.finish()
            }
        }
        struct Extra<'a>(&'a [(String, String)]);
        impl fmt::Debug for Extra<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_map();
                for (name, value) in self.0 {
                    if crate::options::is_secret_header(name) {
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
            .field("extra_headers", &Extra(&self.extra_headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// The end of a base URL for `path`: `path` appended to the URL's path (a
/// trailing `/` dropped), with the base's query string kept after it and
/// its fragment dropped.
pub(crate) fn join_url(base_url: &str, suffix: &str) -> String {
    let base = match base_url.split_once('#') {
        Some((before, _fragment)) => before,
        None => base_url,
    };
    let (path, query) = match base.split_once('?') {
        Some((path, query)) => (path, query),
        None => (base, ""),
    };
    // Trailing slashes of the path go, never those of `scheme://`.
    let authority_start = path.find("://").map_or(0, |at| at + "://".len());
    let (scheme, rest) = path.split_at(authority_start);
    let mut url = String::with_capacity(base.len() + suffix.len() + 1);
    url.push_str(scheme);
    url.push_str(rest.trim_end_matches('/'));
    url.push_str(suffix);
    if !query.is_empty() {
        url.push('?');
        url.push_str(query);
    }
    url
}
