//! [`Hyper`]: the [`Host`] of the smol adapter (hyper's HTTP/1.1 client
//! connection on smol's networking), and the models on it.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::host::response_head;
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
use agentstream_wire::model::{parse_url, HttpUrl};
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::{gemini::GeminiConfig, responses::ResponsesConfig};
use bytes::Bytes;
use futures_rustls::pki_types::ServerName;
use futures_rustls::rustls::{self, ClientConfig, RootCertStore};
use futures_rustls::TlsConnector;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use smol::io::{AsyncRead, AsyncWrite};
use smol::net::TcpStream;
use smol::Timer;
use smol_hyper::rt::FuturesIo;

/// A [`Model`](agentstream::model::Model) that streams from an
/// OpenAI-compatible Chat Completions endpoint over
/// [hyper](https://docs.rs/hyper)'s HTTP/1.1 client, with smol's TCP and
/// timers and TLS through rustls (ring, Mozilla's root certificates): the
/// wire crate's one call path
/// ([`agentstream_wire::model::EndpointModel`]) on the [`Hyper`] host.
///
/// One connection per call, driven inside the call's own future: nothing
/// is spawned, so the streams run on any executor as long as smol's
/// reactor is available (it starts on its own), which is how
/// `agentstream-async-std` reuses this client. Dropping the stream and
/// its result handles drops the connection.
///
/// ```no_run
/// use agentstream_smol::prelude::*;
///
/// smol::block_on(async {
///     let config = OpenAiConfig::new("http://127.0.0.1:11434/v1", "llama3.2");
///     let model = OpenAiCompatModel::new(config).expect("the TLS client");
///     let context = Context::from_messages([user("Hello!").into()]);
///     let mut stream = model.stream(&context, StreamOptions::default());
///     println!("{}", stream.result().await.text());
/// });
/// ```
pub type OpenAiCompatModel = EndpointModel<OpenAiConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Anthropic's
/// Messages API (or a server that speaks it) over the same hyper client as
/// [`OpenAiCompatModel`], with exactly its behaviour.
///
/// ```no_run
/// use agentstream_smol::prelude::*;
///
/// smol::block_on(async {
///     let key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
///     let config = AnthropicConfig::new("claude-sonnet-4-5").with_api_key(key);
///     let model = AnthropicModel::new(config).expect("the TLS client");
///     let context = Context::from_messages([user("Hello!").into()]);
///     let mut stream = model.stream(&context, StreamOptions::default());
///     println!("{}", stream.result().await.text());
/// });
/// ```
pub type AnthropicModel = EndpointModel<AnthropicConfig>;

/// A [`Model`](agentstream::model::Model) that streams from an OpenAI
/// Responses endpoint (`POST {base}/responses`) over hyper, with the
/// behaviour of [`OpenAiCompatModel`].
pub type ResponsesModel = EndpointModel<ResponsesConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Amazon
/// Bedrock's `ConverseStream` (`POST {base}/model/{modelId}/converse-stream`,
/// event-stream frames) over hyper, with the behaviour of [`OpenAiCompatModel`];
/// signed with SigV4 when the configuration has credentials. `from_env`
/// reads pi-ai's variables (see [`agentstream_wire::env`]).
///
/// ```no_run
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// let model = agentstream_smol::BedrockModel::from_env("anthropic.claude-sonnet-4-5-20250929-v1:0")?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
pub type BedrockModel = EndpointModel<agentstream_wire::bedrock::BedrockConfig>;

/// A [`Model`](agentstream::model::Model) for Azure OpenAI Responses over
/// hyper; `from_env` reads pi-ai's `AZURE_OPENAI_*` variables.
pub type AzureModel = EndpointModel<agentstream_wire::azure::AzureConfig>;

/// A [`Model`](agentstream::model::Model) for Mistral over hyper;
/// `from_env` reads `MISTRAL_API_KEY`.
pub type MistralModel = EndpointModel<agentstream_wire::mistral::MistralConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Google Gemini
/// (the Gemini API, or Vertex AI with
/// [`GeminiConfig::vertex`](agentstream_wire::gemini::GeminiConfig::vertex))
/// over hyper, with the behaviour of [`OpenAiCompatModel`].
pub type GeminiModel = EndpointModel<GeminiConfig>;

/// A [`Model`](agentstream::model::Model) for any
/// [`Endpoint`](agentstream_wire::endpoint::Endpoint) over hyper, with the
/// behaviour of [`OpenAiCompatModel`]: for an endpoint that wraps a
/// provider's config, such as a
/// [`RecordingEndpoint`](agentstream_wire::recording::RecordingEndpoint).
pub type EndpointModel<E> = agentstream_wire::model::EndpointModel<E, Hyper>;

/// The smol [`Host`]: hyper's HTTP/1.1 client connection over smol's TCP,
/// TLS through futures-rustls, with [`Smol`](crate::Smol) as its timer and clock.
/// [`Host::for_endpoint`] trusts Mozilla's roots;
/// [`with_tls_config`](Self::with_tls_config) takes other roots or client
/// certificates (offer `http/1.1` in ALPN, or none: only HTTP/1.1 is
/// spoken).
#[derive(Clone)]
pub struct Hyper {
    tls: TlsConnector,
}

impl std::fmt::Debug for Hyper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hyper").finish_non_exhaustive()
    }
}

impl Hyper {
    /// A host using `tls` for `https` endpoints.
    pub fn with_tls_config(tls: Arc<ClientConfig>) -> Self {
        Self {
            tls: TlsConnector::from(tls),
        }
    }
}

impl Host for Hyper {
    type Body = HyperBody;

    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(ClientError::new)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self::with_tls_config(Arc::new(tls)))
    }

    fn send(
        &self,
        request: PreparedRequest,
        connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, HyperBody), TransportError>> + Send {
        send(self.tls.clone(), connect_timeout, request)
    }

    type Timer = crate::Smol;

    fn timer(&self) -> &crate::Smol {
        &crate::Smol
    }
}

/// A connection, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

type Conn = Connection<FuturesIo<Box<dyn Io>>, Full<Bytes>>;

/// A failure described by `what`, caused by `error`.
fn failed(
    what: impl Into<String>,
    error: impl std::error::Error + Send + Sync + 'static,
) -> TransportError {
    TransportError::failed(what.into()).with_source(error)
}

/// Opens the TCP (and TLS) connection to `target`.
async fn connect(tls: &TlsConnector, target: &HttpUrl) -> Result<Box<dyn Io>, TransportError> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| failed(format!("cannot connect to {}", target.authority), e))?;
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok(Box::new(tcp));
    }
    let name = ServerName::try_from(target.host.clone())
        .map_err(|e| failed(format!("bad TLS server name {}", target.host), e))?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| failed(format!("TLS handshake with {} failed", target.authority), e))?;
    Ok(Box::new(stream))
}

/// Connects, sends `request` and waits for the response head.
async fn send(
    tls: TlsConnector,
    connect_timeout: Option<Duration>,
    request: PreparedRequest,
) -> Result<(ResponseHead, HyperBody), TransportError> {
    let target = parse_url(&request.url)?;
    let io = match connect_timeout {
        None => connect(&tls, &target).await?,
        Some(timeout) => {
            let timer = async {
                Timer::after(timeout).await;
                Err(TransportError::connect_timed_out(timeout))
            };
            smol::future::or(connect(&tls, &target), timer).await?
        }
    };
    let (sender, conn) = http1::handshake(FuturesIo::new(io))
        .await
        .map_err(|e| failed("HTTP handshake failed", e))?;
    let mut builder = hyper::Request::builder()
        .method(request.method)
        .uri(target.target.as_str())
        .header(hyper::header::HOST, target.authority.as_str())
        .header(hyper::header::CONTENT_LENGTH, request.body.len());
    for (name, value) in request.headers_in_order() {
        builder = builder.header(name, value);
    }
    let http_request = builder
        .body(Full::new(Bytes::from(request.body)))
        .map_err(|e| failed("cannot build the request", e))?;
    let mut body = HyperBody {
        conn: Some(Box::pin(conn)),
        sender,
        body: None,
    };
    let response = {
        let mut sending = pin!(body.sender.send_request(http_request));
        let conn = &mut body.conn;
        poll_fn(|cx| {
            poll_conn(conn, cx);
            sending.as_mut().poll(cx)
        })
        .await
        .map_err(|e| failed("the request failed", e))?
    };
    let headers = response.headers();
    let head = response_head(response.status().as_u16(), |name| {
        Some(headers.get(name)?.to_str().ok()?.to_owned())
    });
    body.body = Some(response.into_body());
    Ok((head, body))
}

/// Drives the connection task; once it is done (closed or failed) it is
/// dropped, and the body reports what happened.
fn poll_conn(conn: &mut Option<Pin<Box<Conn>>>, cx: &mut TaskContext<'_>) {
    if let Some(future) = conn {
        if future.as_mut().poll(cx).is_ready() {
            *conn = None;
        }
    }
}

/// The response body, with the connection that feeds it.
pub struct HyperBody {
    conn: Option<Pin<Box<Conn>>>,
    /// Kept so the connection is not told to close early.
    sender: SendRequest<Full<Bytes>>,
    body: Option<Incoming>,
}

impl ResponseBody for HyperBody {
    type Chunk = Bytes;

    fn next_chunk(&mut self) -> impl Future<Output = Result<Option<Bytes>, TransportError>> + Send {
        poll_fn(|cx| {
            poll_conn(&mut self.conn, cx);
            let Some(body) = &mut self.body else {
                return Poll::Ready(Ok(None));
            };
            loop {
                match Pin::new(&mut *body).poll_frame(cx) {
                    Poll::Ready(Some(Ok(frame))) => {
                        if let Ok(data) = frame.into_data() {
                            return Poll::Ready(Ok(Some(data)));
                        }
                        // Trailers: nothing to feed.
                    }
                    Poll::Ready(Some(Err(error))) => {
                        return Poll::Ready(Err(TransportError::from_source(error)))
                    }
                    Poll::Ready(None) => return Poll::Ready(Ok(None)),
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
    }
}
