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

pub use crate::bedrock::auth::sigv4::SigningError;
use crate::http::ResponseStream;
pub use crate::options::SECRET_HEADERS;
use crate::options::{is_secret_header, Redacted};

/// One provider endpoint as the call path sees it: what
/// [`EndpointModel`](crate::model::EndpointModel) needs from a provider's
/// configuration, whatever the protocol and the runtime.
///
/// Every method is required: the per-call options and the call's
/// timestamp always reach the provider.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::endpoint::Endpoint;
/// use agentstream_wire::openai::OpenAiConfig;
///
/// fn url_of(endpoint: &impl Endpoint) -> String {
///     let context = Context::from_messages([user("hi").into()]);
///     let request = endpoint.prepare_call(&context, &StreamOptions::default());
///     request.map(|r| r.url).unwrap_or_default()
/// }
/// assert_eq!(url_of(&OpenAiConfig::new("http://h/v1", "m")), "http://h/v1/chat/completions");
/// ```
pub trait Endpoint {
    /// The decoder of one response.
    type Stream: ResponseStream + Send + 'static;
    /// Why a context cannot be sent.
    type Error: fmt::Display;

    /// The request for `context` with the per-call `options` (token limit,
    /// sampling, tool choice, reasoning, response format) over the
    /// configuration's defaults: URL, headers and JSON body.
    ///
    /// # Errors
    /// When the context cannot be turned into a valid request.
    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, Self::Error>;

    /// Signs `request`, complete as [`prepare_call`](Self::prepare_call)
    /// built it (URL, headers, body), at `now_ms` (Unix milliseconds, the
    /// host's wall clock at the start of the call): adds the headers that
    /// authenticate exactly these bytes, such as Bedrock's SigV4
    /// `authorization`, `x-amz-date` and `x-amz-content-sha256`. An
    /// endpoint whose key travels in a plain header leaves the request as
    /// it is; a wrapper forwards to the endpoint it wraps.
    ///
    /// # Errors
    /// A [`SigningError`] when the request cannot be signed (its URL, a
    /// header, the time).
    fn sign(&self, request: &mut PreparedRequest, now_ms: u64) -> Result<(), SigningError>;

    /// A new decoder for one response, observing `signal`, whose messages
    /// carry `timestamp_ms` (Unix milliseconds): the host's wall clock at
    /// the start of the call, as Pi stamps its messages.
    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> Self::Stream;

    /// How long establishing the connection may take.
    fn connect_timeout(&self) -> Option<Duration>;

    /// How long the response may stay silent.
    fn idle_timeout(&self) -> Option<Duration>;
}

/// One request, ready to send: `method url` (`POST`) with `headers` and
/// `body`.
///
/// [`Debug`](fmt::Debug) redacts the [secret headers](SECRET_HEADERS).
/// Built by an [`Endpoint`]'s [`prepare_call`](Endpoint::prepare_call).
#[derive(Clone)]
#[non_exhaustive]
pub struct PreparedRequest {
    /// The HTTP method: `POST`.
    pub method: &'static str,
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
            method: "POST",
            url,
            headers,
            body,
            extra_headers: Vec::new(),
        }
    }

    /// Every header to send, in order: the default ones, then the extra
    /// ones (which replaced defaults of the same name).
    pub fn headers_in_order(&self) -> impl Iterator<Item = (&str, &str)> {
        let defaults = self.headers.iter().map(|(n, v)| (*n, v.as_str()));
        let extra = self
            .extra_headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()));
        defaults.chain(extra)
    }

    /// Sets the default header `name` to `value`: any header of that name
    /// (a default or an extra one) is removed first, so the request sends
    /// `value` once.
    pub fn set_header(&mut self, name: &'static str, value: String) {
        self.headers.retain(|(n, _)| *n != name);
        self.extra_headers.retain(|(n, _)| n != name);
        self.headers.push((name, value));
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
                    if is_secret_header(name) {
                        list.entry(name, &Redacted);
                    } else {
                        list.entry(name, value);
                    }
                }
                list.finish()
            }
        }
        f.debug_struct("PreparedRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("extra_headers", &Extra(&self.extra_headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// How a provider reads the path of a base URL that is neither empty nor
/// ends in `/v1` (see
/// [`EndpointConfig::endpoint_url`](crate::config::EndpointConfig::endpoint_url)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BasePath {
    /// The path is the API root itself (OpenAI's SDKs: `…/openai`).
    Root,
    /// The path is a prefix before `/v1` (Anthropic's SDKs: a gateway).
    Prefix,
}

/// Appends `segment` as one URL path segment: every character but the
/// unreserved ones (RFC 3986: letters, digits, `-`, `.`, `_`, `~`)
/// percent-encoded as UTF-8 (a model id with `/` or `:`, such as a
/// Bedrock ARN, stays one segment).
pub(crate) fn push_path_segment(out: &mut String, segment: &str) {
    for c in segment.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~') {
            out.push(c);
        } else {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                out.push('%');
                for nibble in [byte >> 4, byte & 0xf] {
                    out.push(char::from(b"0123456789ABCDEF"[usize::from(nibble)]));
                }
            }
        }
    }
}

/// The URL of `endpoint` (such as `/chat/completions`) under `base_url`.
///
/// The same base means the same for every provider: a base with no path
/// (`http://host:port`, a trailing `/` or not) and one whose path ends in
/// `/v1` both have the API root `/v1`; another path is read as `other`
/// says. The base's query string is kept after the endpoint; its
/// fragment is dropped (it is never sent), and so is an empty query.
pub(crate) fn api_url(base_url: &str, other: BasePath, endpoint: &str) -> String {
    api_url_at(base_url, other, "/v1", endpoint, "")
}

/// [`api_url`] with the API root `version` for a base without a path (and,
/// for [`BasePath::Prefix`], one not ending in it), and `query` (without
/// `?`) before the base's own query string.
pub(crate) fn api_url_at(
    base_url: &str,
    other: BasePath,
    version: &str,
    endpoint: &str,
    query: &str,
) -> String {
    let first_query = query;
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
    let rest = rest.trim_end_matches('/');
    let path_start = rest.find('/').unwrap_or(rest.len());
    let root = &rest[path_start..];
    let add_version = root.is_empty() || (other == BasePath::Prefix && !root.ends_with(version));
    let mut url = String::with_capacity(base.len() + endpoint.len() + first_query.len() + 8);
    url.push_str(scheme);
    url.push_str(rest);
    if add_version {
        url.push_str(version);
    }
    url.push_str(endpoint);
    let mut separator = '?';
    for part in [first_query, query] {
        if !part.is_empty() {
            url.push(separator);
            url.push_str(part);
            separator = '&';
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::{api_url, BasePath};

    #[test]
    fn a_bare_base_and_one_ending_in_v1_mean_the_same_for_every_provider() {
        for other in [BasePath::Root, BasePath::Prefix] {
            for base in [
                "http://127.0.0.1:8080",
                "http://127.0.0.1:8080/",
                "http://127.0.0.1:8080/v1",
                "http://127.0.0.1:8080/v1/",
            ] {
                assert_eq!(
                    api_url(base, other, "/messages"),
                    "http://127.0.0.1:8080/v1/messages",
                    "{base} {other:?}"
                );
            }
        }
        assert_eq!(
            api_url("https://h/openai", BasePath::Root, "/chat/completions"),
            "https://h/openai/chat/completions"
        );
        assert_eq!(
            api_url("https://gw/anthropic/", BasePath::Prefix, "/messages"),
            "https://gw/anthropic/v1/messages"
        );
        assert_eq!(
            api_url("http://h:8080?x=y", BasePath::Root, "/chat/completions"),
            "http://h:8080/v1/chat/completions?x=y"
        );
    }
}
