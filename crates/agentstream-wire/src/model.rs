//! [`EndpointModel`]: the one call path from a [`Context`] to events, for
//! every provider ([`Endpoint`]) on every runtime ([`Host`]).
//!
//! One call: the wall clock stamps the messages, the endpoint builds the
//! request with the call's [`StreamOptions`] over its defaults (a request
//! it cannot build ends the call in `error` with
//! [`ErrorCause::InvalidRequest`]), the URL is checked, the host sends it,
//! and [`exchange`] turns the response into events with the endpoint's
//! idle timeout on the host's timer. An adapter only supplies the host,
//! so no runtime can forget an option, a header or the timestamp.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use core::fmt;

use agentstream::message::Context;
use agentstream::model::{ErrorCause, Model, ModelStream, StreamOptions};

use crate::anthropic::AnthropicConfig;
use crate::endpoint::Endpoint;
use crate::host::{ClientError, Host};
use crate::http::{exchange_at, push_all, ResponseStream, TransportError};
use crate::openai::OpenAiConfig;

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
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        let signal = options.signal.clone();
        let mut stream = self
            .endpoint
            .open_stream_at(signal.clone(), self.host.now_ms());
        let prepared = self
            .endpoint
            .prepare_call(context, &options)
            .map_err(|e| e.to_string());
        let idle = self.endpoint.idle_timeout();
        let connect = self.endpoint.connect_timeout();
        let host = Arc::clone(&self.host);
        ModelStream::driven(move |mut producer| async move {
            let request = match prepared {
                Ok(request) => request,
                Err(error) => {
                    producer.set_error_cause(ErrorCause::InvalidRequest);
                    push_all(&mut producer, stream.fail(error));
                    return;
                }
            };
            let url = request.url.clone();
            let response = async {
                check_url(&request.url)?;
                let url = request.url.clone();
                host.send(request, connect)
                    .await
                    .map_err(|error| name_the_url(error, &url))
            };
            let sleep = |duration| host.sleep(duration);
            exchange_at(producer, stream, signal, idle, sleep, response, Some(&url)).await;
        })
    }
}

/// Checks that `url` is one every host can send to: an `http` or `https`
/// scheme and a host.
///
/// ```
/// use agentstream_wire::model::check_url;
///
/// assert!(check_url("http://127.0.0.1:8080/v1/chat/completions").is_ok());
/// let error = check_url("http:///v1").unwrap_err();
/// assert_eq!(error.to_string(), "invalid endpoint URL `http:///v1`: it has no host");
/// assert!(check_url("ftp://h/x").unwrap_err().to_string().contains("http or https"));
/// ```
///
/// # Errors
/// A [`TransportError`] naming the URL and what is wrong with it.
pub fn check_url(url: &str) -> Result<(), TransportError> {
    let invalid =
        |why: &str| TransportError::failed(format!("invalid endpoint URL `{url}`: {why}"));
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid("it has no scheme (http:// or https://)"));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(invalid("the scheme must be http or https"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host_end = if host.starts_with('[') {
        host.find(']').map_or(host.len(), |end| end + 1)
    } else {
        host.find(':').unwrap_or(host.len())
    };
    if host[..host_end].is_empty() {
        return Err(invalid("it has no host"));
    }
    Ok(())
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
