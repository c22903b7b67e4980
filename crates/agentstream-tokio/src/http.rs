//! [`OpenAiCompatModel`] over reqwest.

use std::error::Error as _;
use std::sync::Arc;

use agentstream::message::Context;
use agentstream::model::{Model, ModelStream, StreamOptions};
use agentstream::openai::http::{exchange, ResponseBody, ResponseHead, TransportError};
use agentstream::openai::{OpenAiConfig, OpenAiStream};

/// A [`Model`] that streams from an OpenAI-compatible Chat Completions
/// endpoint over [reqwest](https://docs.rs/reqwest) (HTTP/1.1, TLS through
/// rustls with Mozilla's root certificates).
///
/// Everything but the HTTP is the core's
/// [`openai::http::exchange`](agentstream::openai::http::exchange): HTTP
/// errors become one `error` event naming the status and the provider's
/// message, the call's [`AbortSignal`](crate::AbortSignal) cancels the
/// request mid-stream, and the configured connect or idle timeout ends the
/// call with `error(aborted)`.
///
/// The returned streams must be polled inside a tokio runtime with its
/// timer and IO enabled (or spawned with [`spawn`](crate::spawn)).
/// Dropping the stream and its result handles drops the request, which
/// closes the connection.
///
/// ```no_run
/// use agentstream_tokio::agentstream::message::{user, Context};
/// use agentstream_tokio::agentstream::openai::OpenAiConfig;
/// use agentstream_tokio::{Model, OpenAiCompatModel, StreamOptions};
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

impl OpenAiCompatModel {
    /// A model for `config`, with its own client (the connect timeout is
    /// the client's).
    ///
    /// # Errors
    /// When reqwest cannot build the client (TLS initialisation).
    pub fn new(config: OpenAiConfig) -> Result<Self, reqwest::Error> {
        let mut builder = reqwest::Client::builder();
        if let Some(timeout) = config.connect_timeout {
            builder = builder.connect_timeout(timeout);
        }
        Ok(Self::with_client(config, builder.build()?))
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
        let signal = options.signal;
        let mut stream = self.config.open_stream(signal.clone());
        let prepared = self.config.prepare(context);
        let idle = self.config.idle_timeout;
        let client = self.client.clone();
        ModelStream::driven(move |mut producer| async move {
            let request = match prepared {
                Ok(request) => request,
                Err(error) => {
                    OpenAiStream::push_all(&mut producer, stream.fail(error.to_string()));
                    return;
                }
            };
            let mut builder = client.post(&request.url).body(request.body);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            let response = async move {
                let response = builder.send().await.map_err(transport_error)?;
                let head = ResponseHead {
                    status: response.status().as_u16(),
                    retry_after: response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_owned),
                };
                Ok((head, Body(response)))
            };
            exchange(producer, stream, signal, idle, tokio::time::sleep, response).await;
        })
    }
}

/// A reqwest response body, read chunk by chunk.
struct Body(reqwest::Response);

impl ResponseBody for Body {
    type Chunk = bytes::Bytes;

    async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, TransportError> {
        self.0.chunk().await.map_err(transport_error)
    }
}

/// A reqwest error as a [`TransportError`]: its timeouts are
/// [`TimedOut`](TransportError::TimedOut); otherwise the message with its
/// causes.
fn transport_error(error: reqwest::Error) -> TransportError {
    if error.is_timeout() {
        return TransportError::TimedOut;
    }
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    TransportError::Failed(message)
}
