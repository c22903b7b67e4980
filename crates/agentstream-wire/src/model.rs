//! [`EndpointModel`]: the one call path from a [`Context`] to events, for
//! every provider ([`Endpoint`]) on every runtime ([`Host`]).
//!
//! One call: the wall clock stamps the messages, the endpoint builds the
//! request with the call's [`StreamOptions`] over its defaults and signs
//! it at that time (a request it cannot build or sign ends the call in
//! `error` with [`ErrorCause::InvalidRequest`]), the URL is checked, the host sends it,
//! and [`exchange`](crate::http::exchange) turns the response into events with the endpoint's
//! idle timeout on the host's timer. An adapter only supplies the host,
//! so no runtime can forget an option, a header or the timestamp.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use core::fmt;

use agentstream::message::Context;
use agentstream::model::{ErrorCause, Model, ModelStream, StreamOptions};
use agentstream::rt::Timer;

use crate::anthropic::AnthropicConfig;
use crate::azure::AzureConfig;
use crate::bedrock::BedrockConfig;
use crate::endpoint::Endpoint;
use crate::gemini::GeminiConfig;
use crate::host::{ClientError, Host};
use crate::http::{exchange_at, push_all, ResponseStream, TransportError};
use crate::mistral::MistralConfig;
use crate::openai::OpenAiConfig;
use crate::responses::ResponsesConfig;

/// A [`Model`] that streams from one provider's endpoint `E` through the
/// runtime host `H`.
///
/// Everything but moving bytes happens here, the same on every host: HTTP
/// errors become one `error` event naming the status and the provider's
/// message (and, for a 404, the URL), the call's
/// [`AbortSignal`](agentstream::model::AbortSignal) cancels the request
/// mid-stream, and the endpoint's connect or idle timeout ends the call
/// with `error(aborted)`. A transport failure ends the call in `error`
/// naming the URL, followed by the client's error and its causes. Each
/// adapter names this type for its host (`agentstream_tokio::OpenAiCompatModel`,
/// say); see [`Host`] for a host of your own.
pub struct EndpointModel<E, H> {
    endpoint: Arc<E>,
    host: Arc<H>,
}

/// An OpenAI-compatible Chat Completions model on the host `H`.
pub type OpenAiCompatModel<H> = EndpointModel<OpenAiConfig, H>;

/// An Anthropic Messages model on the host `H`.
pub type AnthropicModel<H> = EndpointModel<AnthropicConfig, H>;

/// An OpenAI Responses model on the host `H`.
pub type ResponsesModel<H> = EndpointModel<ResponsesConfig, H>;

/// An Azure OpenAI Responses model on the host `H`.
pub type AzureModel<H> = EndpointModel<AzureConfig, H>;

/// A Mistral model on the host `H`.
pub type MistralModel<H> = EndpointModel<MistralConfig, H>;

/// A Google Gemini model (the Gemini API or Vertex AI) on the host `H`.
pub type GeminiModel<H> = EndpointModel<GeminiConfig, H>;

/// An Amazon Bedrock `ConverseStream` model on the host `H`.
pub type BedrockModel<H> = EndpointModel<BedrockConfig, H>;

/// The old name of [`GeminiModel`].
#[deprecated(note = "renamed to `GeminiModel`")]
pub type GoogleModel<H> = EndpointModel<GeminiConfig, H>;

impl<E: Endpoint, H: Host> EndpointModel<E, H> {
    /// A model for `endpoint` with the host's own client, which connects
    /// within the endpoint's connect timeout.
    ///
    /// # Errors
    /// A [`ClientError`] when the host cannot build its client.
    pub fn new(endpoint: E) -> Result<Self, ClientError> {
        let host = H::for_endpoint(endpoint.connect_timeout())?;
        Ok(Self::with_host(endpoint, host))
    }

    /// A model for `endpoint` sending through `host` (a client shared by
    /// several models, or one with other settings: proxies, roots). A
    /// host whose client takes the connect timeout when it is built keeps
    /// its own.
    pub fn with_host(endpoint: E, host: H) -> Self {
        Self {
            endpoint: Arc::new(endpoint),
            host: Arc::new(host),
        }
    }
}

impl<E, H> EndpointModel<E, H> {
    /// The endpoint configuration.
    pub fn endpoint(&self) -> &E {
        &self.endpoint
    }

    /// The host the requests go through.
    pub fn host(&self) -> &H {
        &self.host
    }
}

impl<E, H> Clone for EndpointModel<E, H> {
    fn clone(&self) -> Self {
        Self {
            endpoint: Arc::clone(&self.endpoint),
            host: Arc::clone(&self.host),
        }
    }
}

impl<E: fmt::Debug, H> fmt::Debug for EndpointModel<E, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointModel")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl<E, H> Model for EndpointModel<E, H>
where
    E: Endpoint + Send + Sync + 'static,
    H: Host,
{
    /// The host runtime's wall clock.
    fn clock(&self) -> Option<agentstream::rt::Clock> {
        let host = Arc::clone(&self.host);
        Some(agentstream::rt::Clock::from_fn(move || {
            host.timer().now_unix_ms()
        }))
    }

    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        let signal = options.signal.clone();
        let now_ms = self.host.timer().now_unix_ms();
        let mut stream = self.endpoint.open_stream_at(signal.clone(), now_ms);
        let prepared = self
            .endpoint
            .prepare_call(context, &options)
            .map_err(|e| e.to_string())
            .and_then(|mut request| {
                self.endpoint
                    .sign(&mut request, now_ms)
                    .map_err(|e| e.to_string())?;
                Ok(request)
            });
        let idle = self.endpoint.idle_timeout();
        let connect = self.endpoint.connect_timeout();
        let host = Arc::clone(&self.host);
        ModelStream::driven(move |mut producer| async move {
            let request = match prepared {
                Ok(request) => request,
                Err(error) => {
                    let events = stream.fail(error);
                    let events = events.map(|event| event.with_cause(ErrorCause::InvalidRequest));
                    push_all(&mut producer, events);
                    return;
                }
            };
            let url = request.url.clone();
            let response = async {
                parse_url(&request.url)?;
                let url = request.url.clone();
                host.send(request, connect)
                    .await
                    .map_err(|error| name_the_url(error, &url))
            };
            let timer = host.timer();
            let sleep = |duration| timer.sleep(duration);
            exchange_at(producer, stream, signal, idle, sleep, response, Some(&url)).await;
        })
    }
}

/// An `http` or `https` URL taken apart for a host that opens its own
/// connections, as [`parse_url`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpUrl {
    /// `https`.
    pub tls: bool,
    /// The host to connect to, without the brackets of an IPv6 address.
    pub host: String,
    /// The port, defaulted from the scheme.
    pub port: u16,
    /// The `Host` header: the URL's authority.
    pub authority: String,
    /// The request target: the path and query, starting with `/` (the
    /// fragment, never sent, is dropped).
    pub target: String,
}

/// Reads `url` as every host must be able to send to it: an `http` or
/// `https` scheme, a host, no user info, a port that fits. The call path
/// checks every request's URL with it before a host sees it.
///
/// ```
/// use agentstream_wire::model::parse_url;
///
/// let url = parse_url("https://api.example.com/v1/chat/completions?api-version=1").unwrap();
/// assert_eq!((url.tls, url.host.as_str(), url.port), (true, "api.example.com", 443));
/// assert_eq!(url.target, "/v1/chat/completions?api-version=1");
/// let local = parse_url("http://[::1]:8080").unwrap();
/// assert_eq!((local.host.as_str(), local.authority.as_str(), local.target.as_str()), ("::1", "[::1]:8080", "/"));
/// let error = parse_url("http:///v1").unwrap_err();
/// assert_eq!(error.to_string(), "invalid endpoint URL `http:///v1`: it has no host");
/// ```
///
/// # Errors
/// A [`TransportError`] naming the URL and what is wrong with it.
pub fn parse_url(url: &str) -> Result<HttpUrl, TransportError> {
    let invalid =
        |why: &str| TransportError::failed(format!("invalid endpoint URL `{url}`: {why}"));
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid("it has no scheme (http:// or https://)"));
    };
    let tls = if scheme.eq_ignore_ascii_case("https") {
        true
    } else if scheme.eq_ignore_ascii_case("http") {
        false
    } else {
        return Err(invalid("the scheme must be http or https"));
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, target) = rest.split_at(end);
    if authority.contains('@') {
        return Err(invalid("user info is not supported"));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, port)) => (host, port),
            None => return Err(invalid("an IPv6 address lacks its `]`")),
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, port),
            None => (authority, ""),
        },
    };
    if host.is_empty() {
        return Err(invalid("it has no host"));
    }
    let port = match port.strip_prefix(':').unwrap_or(port) {
        "" if tls => 443,
        "" => 80,
        digits => match digits.parse::<u16>() {
            Ok(port) if digits.bytes().all(|b| b.is_ascii_digit()) => port,
            _ => return Err(invalid("bad port")),
        },
    };
    let target = match target {
        "" => String::from("/"),
        query if query.starts_with('?') => format!("/{query}"),
        path => String::from(path),
    };
    Ok(HttpUrl {
        tls,
        host: String::from(host),
        port,
        authority: String::from(authority),
        target,
    })
}

/// A transport failure before the response, with the URL named unless
/// the client's message already names it.
fn name_the_url(error: TransportError, url: &str) -> TransportError {
    if error.is_timeout() || crate::http::error_report(&error).contains(url) {
        return error;
    }
    let message: String = format!("the request to {url} failed");
    TransportError::failed(message).with_source(error)
}

#[cfg(test)]
mod tests {
    use super::parse_url;
    use crate::http::error_report;

    fn refusal(url: &str) -> alloc::string::String {
        match parse_url(url) {
            Ok(parsed) => panic!("{url} was accepted: {parsed:?}"),
            Err(error) => error_report(&error),
        }
    }

    #[test]
    fn urls_are_taken_apart() {
        let url = parse_url("HTTP://h?q").unwrap();
        assert_eq!((url.tls, url.port, url.target.as_str()), (false, 80, "/?q"));
        assert_eq!(parse_url("http://127.0.0.1:9/x#frag").unwrap().port, 9);
        assert_eq!(parse_url("http://127.0.0.1:9/x#frag").unwrap().target, "/x");
    }

    #[test]
    fn unusable_urls_are_refused() {
        for url in [
            "http://",
            "http:///v1",
            "https://?q",
            "http://#x",
            "http://:80/v1",
        ] {
            assert!(refusal(url).contains("no host"), "{url}");
        }
        assert!(refusal("ftp://h/").contains("scheme"));
        assert!(refusal("not a url").contains("no scheme"));
        assert!(refusal("http://u:p@h/").contains("user info"));
        assert!(refusal("http://h:99999/").contains("bad port"));
        assert!(refusal("http://h:+80/").contains("bad port"));
        assert!(refusal("http://[::1/").contains("IPv6"));
    }
}
