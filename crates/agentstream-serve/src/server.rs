//! The server: a builder, the listening task, and the calls it records.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentstream::message::Context;
use agentstream::model::{Model, ModelStream, ScriptedModel, ScriptedReply, StreamOptions};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::error::{Api, ApiError, BindError};
use crate::script::{ServeTurn, Step};
use crate::service;

/// The largest request body read by default: 32 MiB (Anthropic's own
/// request limit). A larger body gets HTTP 413 with the provider's error
/// body. See [`ServerBuilder::max_request_bytes`].
pub const MAX_REQUEST_BYTES: usize = 32 << 20;

/// The status of a call made after a [`ScriptedModel`] ran out of turns.
pub const EXHAUSTED_STATUS: u16 = 500;

/// The OpenAI `code` of that answer (Anthropic's type is `api_error`); the
/// message is [`agentstream::model::EXHAUSTED_MESSAGE`].
pub const EXHAUSTED_CODE: &str = "script_exhausted";

/// One call as the server received it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The call's number, from 0, in arrival order.
    pub call: usize,
    /// The protocol it spoke.
    pub api: Api,
    /// The request's `model`.
    pub model: String,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// The request decoded into Pi's context.
    pub context: Context,
}

impl RecordedRequest {
    /// `{"call", "api", "model", "stream", "context"}`, the line
    /// `--requests` writes and an element of `GET /v1/requests`.
    pub fn to_json(&self) -> Value {
        json!({
            "call": self.call,
            "api": self.api.as_str(),
            "model": self.model,
            "stream": self.stream,
            "context": self.context,
        })
    }
}

/// How a server answers; shared by every connection.
pub(crate) struct Shared {
    model: Arc<dyn Model + Send + Sync>,
    steps: Vec<Step>,
    pub(crate) chunks: usize,
    pub(crate) delay: Duration,
    pub(crate) pings: bool,
    pub(crate) model_name: String,
    pub(crate) max_request_bytes: usize,
    calls: Mutex<Calls>,
}

struct Calls {
    next: usize,
    requests: Vec<RecordedRequest>,
    file: Option<File>,
}

/// What a call gets: its number, step, and the model's stream (none for
/// an HTTP-error step).
pub(crate) struct Call {
    pub(crate) index: usize,
    pub(crate) step: Step,
    pub(crate) stream: Option<ModelStream>,
}

impl Shared {
    fn calls(&self) -> MutexGuard<'_, Calls> {
        // A panic elsewhere while holding the lock leaves consistent data.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the request and takes the next step, under one lock so the
    /// call numbers, the recordings and the model's turns share one order.
    pub(crate) fn take_call(
        &self,
        api: Api,
        model: String,
        stream: bool,
        context: Context,
        options: StreamOptions,
    ) -> Result<Call, ApiError> {
        let mut calls = self.calls();
        let index = calls.next;
        let record = RecordedRequest {
            call: index,
            api,
            model,
            stream,
            context,
        };
        if let Some(file) = &mut calls.file {
            let mut line = record.to_json().to_string();
            line.push('\n');
            file.write_all(line.as_bytes()).map_err(|e| {
                ApiError::new(
                    500,
                    format!("agentstream serve cannot record the request: {e}"),
                )
            })?;
        }
        calls.next += 1;
        let step = self.steps.get(index).cloned().unwrap_or(Step::Model);
        let stream = match step {
            Step::Http(_) => None,
            _ => Some(self.model.stream(&record.context, options)),
        };
        calls.requests.push(record);
        Ok(Call {
            index,
            step,
            stream,
        })
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.calls().requests.clone()
    }
}

/// Sets up a [`Server`]; see [`Server::builder`].
pub struct ServerBuilder {
    model: Arc<dyn Model + Send + Sync>,
    steps: Vec<Step>,
    chunks: usize,
    delay: Duration,
    pings: bool,
    model_name: String,
    max_request_bytes: usize,
    requests_file: Option<PathBuf>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("steps", &self.steps)
            .field("chunks", &self.chunks)
            .field("delay", &self.delay)
            .field("pings", &self.pings)
            .field("model_name", &self.model_name)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("requests_file", &self.requests_file)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// The server's steps by call number (see [`Step`]); calls past the
    /// end, and every call without steps, go to the model unchanged.
    #[must_use]
    pub fn steps(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.steps = steps.into_iter().collect();
        self
    }

    /// Splits every text, thinking and tool-argument delta into up to `n`
    /// SSE chunks (default 1: one chunk per model delta).
    #[must_use]
    pub fn chunks(mut self, n: usize) -> Self {
        self.chunks = n.max(1);
        self
    }

    /// Waits `delay` before every SSE event but the first (default none).
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sends a `ping` event in Anthropic streams, after the first
    /// `content_block_start`.
    #[must_use]
    pub fn pings(mut self, pings: bool) -> Self {
        self.pings = pings;
        self
    }

    /// The model name `GET /v1/models` lists, and responses carry when the
    /// request names none (default: the script's, else `scripted`).
    #[must_use]
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = name.into();
        self
    }

    /// The largest request body accepted (default [`MAX_REQUEST_BYTES`]).
    #[must_use]
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// Appends every recorded request to `path` as a JSON line
    /// ([`RecordedRequest::to_json`]).
    #[must_use]
    pub fn requests_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.requests_file = Some(path.into());
        self
    }

    /// Listens on `address` (port 0 picks a free port) and starts serving
    /// on the current tokio runtime.
    ///
    /// # Errors
    /// A [`BindError`] when the address cannot be bound or the requests
    /// file cannot be opened.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub async fn bind(
        self,
        address: impl ToSocketAddrs + std::fmt::Display,
    ) -> Result<Server, BindError> {
        let name = address.to_string();
        let file = match &self.requests_file {
            Some(path) => Some(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| BindError::new(path.display().to_string(), e))?,
            ),
            None => None,
        };
        let listener = TcpListener::bind(address)
            .await
            .map_err(|e| BindError::new(name.clone(), e))?;
        let local_addr = listener.local_addr().map_err(|e| BindError::new(name, e))?;
        let shared = Arc::new(Shared {
            model: self.model,
            steps: self.steps,
            chunks: self.chunks,
            delay: self.delay,
            pings: self.pings,
            model_name: self.model_name,
            max_request_bytes: self.max_request_bytes,
            calls: Mutex::new(Calls {
                next: 0,
                requests: Vec::new(),
                file,
            }),
        });
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept(listener, shared.clone(), stopped));
        Ok(Server {
            local_addr,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }
}

/// Accepts connections until told to stop; dropping the set aborts the
/// connections still open.
async fn accept(listener: TcpListener, shared: Arc<Shared>, mut stopped: oneshot::Receiver<()>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of file descriptors and the like: try again soon.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        service::handle(shared.clone(), request)
                    });
                    // A connection error (client gone) ends this connection only.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// An OpenAI- and Anthropic-compatible endpoint serving a [`Model`].
///
/// Every `POST /v1/chat/completions` and `POST /v1/messages` is decoded
/// into a Pi [`Context`], recorded, numbered in arrival order, and handed
/// to the model; its events go back as the provider's SSE (or one JSON
/// body). Clients are served concurrently. A client that disconnects
/// aborts its call's signal and drops its stream.
///
/// Routes: `POST /v1/chat/completions`, `POST /v1/messages`,
/// `GET /v1/models`, and `GET /v1/requests` (the recorded requests as a
/// JSON array). The `/v1` prefix is optional.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::ScriptedModel;
/// use agentstream_serve::Server;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let server = Server::builder(model).chunks(2).bind("127.0.0.1:0").await?;
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// // ... point the code under test at server.url() ...
/// assert!(server.requests().is_empty());
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("model_name", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A builder serving `model`.
    pub fn builder<M: Model + Send + Sync + 'static>(model: M) -> ServerBuilder {
        ServerBuilder {
            model: Arc::new(model),
            steps: Vec::new(),
            chunks: 1,
            delay: Duration::ZERO,
            pings: false,
            model_name: "scripted".into(),
            max_request_bytes: MAX_REQUEST_BYTES,
            requests_file: None,
        }
    }

    /// A builder serving a script: the turns go to a [`ScriptedModel`],
    /// the steps to the server. The model name is the first message
    /// turn's `model`.
    pub fn from_script(script: impl IntoIterator<Item = ServeTurn>) -> ServerBuilder {
        let (mut turns, mut steps, mut name) = (Vec::new(), Vec::new(), None);
        for element in script {
            let played = element
                .turn
                .iter()
                .chain(element.alternatives.iter().map(|a| &a.turn));
            for turn in played {
                if let (None, ScriptedReply::Message(message)) = (&name, turn.reply()) {
                    name = Some(message.model.clone());
                }
            }
            turns.extend(element.model_step());
            steps.push(element.step);
        }
        let builder = Self::builder(ScriptedModel::new(turns)).steps(steps);
        match name {
            Some(name) => builder.model_name(name),
            None => builder,
        }
    }

    /// The base URL clients use: `http://ADDRESS:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.local_addr)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Stops listening and closes every open connection.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
