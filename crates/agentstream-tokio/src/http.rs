//! [`Reqwest`]: the [`Host`] of the tokio adapter, and the models on it.

use std::time::Duration;

use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::gemini::GeminiConfig;
use agentstream_wire::host::response_head;
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::responses::ResponsesConfig;

/// A [`Model`](agentstream::model::Model) that streams from an
/// OpenAI-compatible Chat Completions endpoint over
/// [reqwest](https://docs.rs/reqwest) (HTTP/1.1, TLS through rustls with
/// Mozilla's root certificates): the wire crate's one call path
/// ([`agentstream_wire::model::EndpointModel`]) on the [`Reqwest`] host.
///
/// The returned streams must be polled inside a tokio runtime with its
/// timer and IO enabled (or spawned with
/// [`Tokio.spawn_stream`](crate::Runtime::spawn_stream)).
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
pub type OpenAiCompatModel = EndpointModel<OpenAiConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Anthropic's
/// Messages API (or a server that speaks it) over reqwest, with exactly
/// the behaviour of [`OpenAiCompatModel`].
///
/// ```no_run
/// use agentstream_tokio::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = AnthropicConfig::new("claude-sonnet-4-5")
///     .with_api_key(std::env::var("ANTHROPIC_API_KEY")?)
///     .with_defaults(StreamOptions::default().with_max_tokens(1024));
/// let model = AnthropicModel::new(config)?;
/// let context = Context::from_messages([user("Hello!").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
/// println!("{}", stream.result().await.text());
/// # Ok(())
/// # }
/// ```
pub type AnthropicModel = EndpointModel<AnthropicConfig>;

/// A [`Model`](agentstream::model::Model) that streams from an OpenAI
/// Responses endpoint (`POST {base}/responses`) over reqwest, with the
/// behaviour of [`OpenAiCompatModel`].
pub type ResponsesModel = EndpointModel<ResponsesConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Amazon
/// Bedrock's `ConverseStream` (`POST {base}/model/{modelId}/converse-stream`,
/// event-stream frames) over reqwest, with the behaviour of [`OpenAiCompatModel`];
/// signed with SigV4 when the configuration has credentials. `from_env`
/// reads pi-ai's variables (see [`agentstream_wire::env`]).
///
/// ```no_run
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// let model = agentstream_tokio::BedrockModel::from_env("anthropic.claude-sonnet-4-5-20250929-v1:0")?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
pub type BedrockModel = EndpointModel<agentstream_wire::bedrock::BedrockConfig>;

/// A [`Model`](agentstream::model::Model) for Azure OpenAI Responses over
/// reqwest; `from_env` reads pi-ai's `AZURE_OPENAI_*` variables.
pub type AzureModel = EndpointModel<agentstream_wire::azure::AzureConfig>;

/// A [`Model`](agentstream::model::Model) for Mistral over reqwest;
/// `from_env` reads `MISTRAL_API_KEY`.
pub type MistralModel = EndpointModel<agentstream_wire::mistral::MistralConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Google Gemini
/// (the Gemini API, or Vertex AI with
/// [`GeminiConfig::vertex`](agentstream_wire::gemini::GeminiConfig::vertex))
/// over reqwest, with the behaviour of [`OpenAiCompatModel`].
pub type GeminiModel = EndpointModel<GeminiConfig>;

/// A [`Model`](agentstream::model::Model) for any
/// [`Endpoint`](agentstream_wire::endpoint::Endpoint) over reqwest, with
/// the behaviour of [`OpenAiCompatModel`]: for an endpoint that wraps a
/// provider's config, such as a
/// [`RecordingEndpoint`](agentstream_wire::recording::RecordingEndpoint) recording the
/// response bodies.
///
/// ```no_run
/// use std::sync::Arc;
/// use agentstream_tokio::prelude::*;
/// use agentstream_tokio::EndpointModel;
/// use agentstream_wire::recording::RecordingEndpoint;
///
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// let config = OpenAiConfig::new("https://api.openai.com/v1", "gpt-4o-mini");
/// let recording = RecordingEndpoint::new(config, Arc::new(|piece: &[u8]| eprintln!("{} bytes", piece.len())));
/// let model = EndpointModel::new(recording)?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
pub type EndpointModel<E> = agentstream_wire::model::EndpointModel<E, Reqwest>;

/// The tokio [`Host`]: a [`reqwest::Client`], with [`Tokio`](crate::Tokio)
/// as its timer and clock. [`Host::for_endpoint`] builds a client with the
/// endpoint's connect timeout that follows a redirect only to the origin
/// the request was sent to (a redirect elsewhere is the call's answer: an
/// HTTP error, so no key reaches another origin) and sends no `Referer`;
/// [`From<reqwest::Client>`] takes one of your own (proxies, extra roots),
/// whose connect timeout and redirect policy are then its own.
#[derive(Debug, Clone)]
pub struct Reqwest {
    client: reqwest::Client,
}

impl From<reqwest::Client> for Reqwest {
    fn from(client: reqwest::Client) -> Self {
        Self { client }
    }
}

impl Host for Reqwest {
    type Body = Body;

    fn for_endpoint(connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        let mut builder = reqwest::Client::builder()
            .redirect(same_origin_redirects())
            .referer(false);
        if let Some(timeout) = connect_timeout {
            builder = builder.connect_timeout(timeout);
        }
        builder.build().map(Self::from).map_err(ClientError::new)
    }

    async fn send(
        &self,
        request: PreparedRequest,
        connect_timeout: Option<Duration>,
    ) -> Result<(ResponseHead, Body), TransportError> {
        let url = reqwest::Url::parse(&request.url).map_err(|error| {
            let message = format!("invalid endpoint URL `{}`", request.url);
            TransportError::failed(message).with_source(error)
        })?;
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|error| TransportError::failed("invalid method").with_source(error))?;
        let mut builder = self.client.request(method, url);
        for (name, value) in request.headers_in_order() {
            builder = builder.header(name, value);
        }
        let response =
            builder
                .body(request.body)
                .send()
                .await
                .map_err(|error| match connect_timeout {
                    Some(after) if error.is_connect() && error.is_timeout() => {
                        TransportError::connect_timed_out(after).with_source(error)
                    }
                    _ => transport_error(error),
                })?;
        let headers = response.headers();
        let head = response_head(response.status().as_u16(), |name| {
            Some(headers.get(name)?.to_str().ok()?.to_owned())
        });
        Ok((head, Body(response)))
    }

    type Timer = crate::Tokio;

    fn timer(&self) -> &crate::Tokio {
        &crate::Tokio
    }
}

/// The most redirects [`same_origin_redirects`] follows for one request.
const MAX_REDIRECTS: usize = 10;

/// The redirect policy of the clients [`Host::for_endpoint`] builds: a
/// redirect is followed only when its target has the origin (scheme, host
/// and port) the request was first sent to, at most [`MAX_REDIRECTS`]
/// times. A redirect to any other origin is not followed: its 3xx is the
/// answer (an HTTP error for the call), so the API key, whether in a
/// header (`x-api-key`, `x-goog-api-key`, `api-key`, a custom one) or in
/// the query (`?key=`), never reaches an origin it was not configured for.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let hops = attempt.previous().len();
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if hops > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A reqwest response body, read chunk by chunk.
#[derive(Debug)]
pub struct Body(reqwest::Response);

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
