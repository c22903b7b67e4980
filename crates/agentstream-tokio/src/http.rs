//! [`OpenAiCompatModel`] and [`AnthropicModel`] over reqwest, one
//! generic call path for both (`stream_from`).

use std::fmt;
use std::sync::Arc;

use agentstream::message::Context;
use agentstream::model::{Model, ModelStream, StreamOptions};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::endpoint::Endpoint;
use agentstream_wire::http::{
    exchange, push_all, ResponseBody, ResponseHead, ResponseStream, TransportError,
};
use agentstream_wire::openai::OpenAiConfig;

/// A [`Model`] that streams from an OpenAI-compatible Chat Completions
/// endpoint over [reqwest](https://docs.rs/reqwest) (HTTP/1.1, TLS through
/// rustls with Mozilla's root certificates).
///
/// Everything but the HTTP is
/// [`agentstream_wire::http::exchange`]: HTTP errors become one `error`
/// event naming the status and the provider's message, the call's
/// [`AbortSignal`](crate::AbortSignal) cancels the request mid-stream, and
/// the configured connect or idle timeout ends the call with
/// `error(aborted)`. A transport failure ends the call in `error` whose
/// message is reqwest's error followed by its causes.
///
/// The returned streams must be polled inside a tokio runtime with its
/// timer and IO enabled (or spawned with [`spawn`](crate::spawn)).
/// Dropping the stream and its result handles drops the request, which
/// closes the connection.
///
/// ```no_run
/// use agentstream_tokio::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = OpenAiConfig::new("https://api.openai.com/v1", "gpt-4o-mini")
///     .with_api_key(std::env::var("OPENAI_API_KEY")?);
/// let model = OpenAiCompatModel::new(config)?;
/// let context = Context::from_messages([user("Hello!").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
/// println!("{}", stream.result().await.text());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatModel {
    config: Arc<OpenAiConfig>,
    client: reqwest::Client,
}

/// [`OpenAiCompatModel::new`] could not build its HTTP client (TLS
/// initialisation failed). The client's error is the
/// [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct ClientError {
    source: reqwest::Error,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot build the HTTP client")
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl OpenAiCompatModel {
    /// A model for `config`, with its own client (the connect timeout is
    /// the client's).
    ///
    /// # Errors
    /// A [`ClientError`] when reqwest cannot build the client (TLS
    /// initialisation).
    pub fn new(config: OpenAiConfig) -> Result<Self, ClientError> {
        let client = client(config.connect_timeout)?;
        Ok(Self::with_client(config, client))
    }

    /// A model for `config` sending through `client`, for callers that
    /// share a client or need its other settings (proxies, extra roots).
    /// `config.connect_timeout` is then up to `client`.
    pub fn with_client(config: OpenAiConfig, client: reqwest::Client) -> Self {
        Self {
            config: Arc::new(config),
            client,
        }
    }

    /// The endpoint configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl Model for OpenAiCompatModel {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        stream_from(&*self.config, &self.client, context, options)
    }
}

/// A [`Model`] that streams from Anthropic's Messages API (or a server
/// that speaks it) over [reqwest](https://docs.rs/reqwest), with exactly
/// the behaviour of [`OpenAiCompatModel`]: the same exchange loop, error
/// events, abort and timeouts; only the request and the decoding differ
/// (see [`agentstream_wire::anthropic`]).
///
/// ```no_run
/// use agentstream_tokio::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = AnthropicConfig::new("claude-sonnet-4-5")
///     .with_api_key(std::env::var("ANTHROPIC_API_KEY")?)
///     .with_max_tokens(1024);
/// let model = AnthropicModel::new(config)?;
/// let context = Context::from_messages([user("Hello!").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
/// println!("{}", stream.result().await.text());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    config: Arc<AnthropicConfig>,
    client: reqwest::Client,
}

impl AnthropicModel {
    /// A model for `config`, with its own client (the connect timeout is
    /// the client's).
    ///
    /// # Errors
    /// A [`ClientError`] when reqwest cannot build the client (TLS
    /// initialisation).
    pub fn new(config: AnthropicConfig) -> Result<Self, ClientError> {
        let client = client(config.connect_timeout)?;
        Ok(Self::with_client(config, client))
    }

    /// A model for `config` sending through `client`.
    /// `config.connect_timeout` is then up to `client`.
    pub fn with_client(config: AnthropicConfig, client: reqwest::Client) -> Self {
        Self {
            config: Arc::new(config),
            client,
        }
    }

    /// The endpoint configuration.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

impl Model for AnthropicModel {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        stream_from(&*self.config, &self.client, context, options)
    }
}

/// A [`Model`] for any [`Endpoint`] over reqwest, with the behaviour of
/// [`OpenAiCompatModel`]: for an endpoint that wraps a provider's config,
/// such as a [`TapEndpoint`](agentstream_wire::tap::TapEndpoint) recording
/// the response bodies.
///
/// ```no_run
/// use std::sync::Arc;
/// use agentstream_tokio::prelude::*;
/// use agentstream_tokio::EndpointModel;
/// use agentstream_wire::tap::TapEndpoint;
///
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// let config = OpenAiConfig::new("https://api.openai.com/v1", "gpt-4o-mini");
/// let tapped = TapEndpoint::new(config, Arc::new(|piece: &[u8]| eprintln!("{} bytes", piece.len())));
/// let model = EndpointModel::new(tapped)?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct EndpointModel<E> {
    endpoint: Arc<E>,
    client: reqwest::Client,
}

impl<E: Endpoint> EndpointModel<E> {
    /// A model for `endpoint`, with its own client (the connect timeout is
    /// the client's).
    ///
    /// # Errors
    /// A [`ClientError`] when reqwest cannot build the client (TLS
    /// initialisation).
    pub fn new(endpoint: E) -> Result<Self, ClientError> {
        let client = client(endpoint.connect_timeout())?;
        Ok(Self::with_client(endpoint, client))
    }

    /// A model for `endpoint` sending through `client`.
    pub fn with_client(endpoint: E, client: reqwest::Client) -> Self {
        Self {
            endpoint: Arc::new(endpoint),
            client,
        }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &E {
        &self.endpoint
    }
}

impl<E: Endpoint> Model for EndpointModel<E> {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        stream_from(&*self.endpoint, &self.client, context, options)
    }
}

/// A client with `connect_timeout`.
fn client(connect_timeout: Option<std::time::Duration>) -> Result<reqwest::Client, ClientError> {
    let mut builder = reqwest::Client::builder();
    if let Some(timeout) = connect_timeout {
        builder = builder.connect_timeout(timeout);
    }
    builder.build().map_err(|source| ClientError { source })
}

/// The wall-clock time in Unix milliseconds, stamped on the call's
/// messages (0 before 1970, which a sane clock never reports).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One call to `endpoint` through `client`, whatever the protocol.
fn stream_from<E: Endpoint>(
    endpoint: &E,
    client: &reqwest::Client,
    context: &Context,
    options: StreamOptions,
) -> ModelStream {
    let signal = options.signal.clone();
    let mut stream = endpoint.open_stream_at(signal.clone(), now_ms());
    let prepared = endpoint
        .prepare_call(context, &options)
        .map_err(|e| e.to_string());
    let idle = endpoint.idle_timeout();
    let connect_timeout = endpoint.connect_timeout();
    let client = client.clone();
    ModelStream::driven(move |mut producer| async move {
        let request = match prepared {
            Ok(request) => request,
            Err(error) => {
                producer.set_error_cause(agentstream::model::ErrorCause::InvalidRequest);
                push_all(&mut producer, stream.fail(error));
                return;
            }
        };
        let response = async move {
            let url = endpoint_url(&request.url)?;
            let mut builder = client.post(url).body(request.body);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            for (name, value) in &request.extra_headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            let response = builder
                .send()
                .await
                .map_err(|error| match connect_timeout {
                    Some(after) if error.is_connect() && error.is_timeout() => {
                        TransportError::connect_timed_out(after).with_source(error)
                    }
                    _ => transport_error(error),
                })?;
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            let head = ResponseHead::new(response.status().as_u16()).with_retry_after(retry_after);
            Ok((head, Body(response)))
        };
        exchange(producer, stream, signal, idle, tokio::time::sleep, response).await;
    })
}

/// Parses the endpoint URL for reqwest, refusing one without a host.
fn endpoint_url(url: &str) -> Result<reqwest::Url, TransportError> {
    let no_host =
        || TransportError::failed(format!("invalid endpoint URL `{url}`: it has no host"));
    // The WHATWG parser reads `http:///v1` as the host `v1`: an empty
    // authority is refused before it gets there.
    if url
        .split_once("://")
        .is_some_and(|(_, rest)| rest.is_empty() || rest.starts_with(['/', '?', '#']))
    {
        return Err(no_host());
    }
    let parsed = reqwest::Url::parse(url).map_err(|error| {
        TransportError::failed(format!("invalid endpoint URL `{url}`")).with_source(error)
    })?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(no_host());
    }
    Ok(parsed)
}

/// A reqwest response body, read chunk by chunk.
struct Body(reqwest::Response);

impl ResponseBody for Body {
    type Chunk = bytes::Bytes;

    async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, TransportError> {
        self.0.chunk().await.map_err(transport_error)
    }
}

/// A reqwest error as a [`TransportError`] with the error as its source:
/// reqwest's timeouts are [timeouts](TransportError::timed_out); anything
/// else is the error itself, so the call's message is reqwest's text
/// followed by its causes.
fn transport_error(error: reqwest::Error) -> TransportError {
    if error.is_timeout() {
        TransportError::timed_out().with_source(error)
    } else {
        TransportError::from_source(error)
    }
}

#[cfg(test)]
mod tests {
    use agentstream_wire::http::error_report;

    use super::endpoint_url as endpoint;

    #[test]
    fn endpoints_without_a_host_are_refused() {
        for url in ["http://", "http:///v1", "https://?q=1", "http://#x"] {
            let error = endpoint(url).map(|u| u.to_string()).unwrap_err();
            let report = error_report(&error);
            assert!(report.contains("no host"), "{url}: {report}");
        }
        let error = endpoint("not a url").unwrap_err();
        assert!(std::error::Error::source(&error).is_some());
        assert!(error_report(&error).starts_with("invalid endpoint URL `not a url`: "));
        let url = endpoint("http://127.0.0.1:9/v1/chat/completions?api-version=1").unwrap();
        assert_eq!(url.path(), "/v1/chat/completions");
        assert_eq!(url.query(), Some("api-version=1"));
    }
}
