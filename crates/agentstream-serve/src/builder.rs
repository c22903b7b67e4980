//! [`ServerBuilder`]: what a server is set up with, and binding it.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use agentstream::model::{Model, ScriptStep, ScriptedModel};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;

use crate::accept;
use crate::cassette::{Player, Skipped};
use crate::error::BindError;
use crate::lanes::Play;
use crate::log::RequestLog;
use crate::proxy::Proxy;
use crate::rules::Rule;
use crate::script::Step;
use crate::server::Server;
use crate::state::{Calls, Misses, Source, State};

/// Sets up a [`Server`]; see [`Server::builder`].
pub struct ServerBuilder {
    pub(crate) model: Arc<dyn Model + Send + Sync>,
    pub(crate) scripted: Option<Arc<ScriptedModel>>,
    /// The script's turns as loaded, when the server was given a script.
    pub(crate) pristine: Option<Arc<[ScriptStep]>>,
    pub(crate) steps: crate::lanes::Steps,
    /// The ordered elements' timing and quirks (empty: none has any).
    pub(crate) manners: Vec<crate::manner::Manner>,
    /// The seed of jitter and chaos; `None`: one from the clock.
    pub(crate) seed: Option<u64>,
    pub(crate) chaos: crate::chaos::Chaos,
    pub(crate) rules: Vec<Rule>,
    pub(crate) strict: bool,
    pub(crate) max_test_ids: usize,
    pub(crate) chunks: usize,
    pub(crate) delay: Duration,
    pub(crate) pings: bool,
    pub(crate) model_name: String,
    pub(crate) max_request_bytes: usize,
    pub(crate) max_buffered_request_bytes: usize,
    pub(crate) requests_file: Option<PathBuf>,
    pub(crate) limits: Limits,
    pub(crate) source: SourceConfig,
    pub(crate) redactor: crate::cassette::Redactor,
}

/// Where a server's answers come from, before it binds.
#[derive(Debug)]
pub(crate) enum SourceConfig {
    Model,
    Upstream {
        url: String,
        dir: PathBuf,
    },
    Replay {
        /// The directory's index (bodies are read when played).
        player: Box<Player>,
        /// The directory.
        dir: PathBuf,
        /// Where the requests no cassette matches go, recorded into the
        /// directory ([`ServerBuilder::record_misses`]).
        upstream: Option<String>,
        /// The entries of the directory that are not cassettes.
        skipped: Vec<Skipped>,
    },
}

/// The bounds a server keeps against clients that misbehave.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) upstream_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) kept_requests: usize,
    pub(crate) kept_bytes: usize,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("steps", &self.steps)
            .field("rules", &self.rules.len())
            .field("strict", &self.strict)
            .field("chunks", &self.chunks)
            .field("delay", &self.delay)
            .field("pings", &self.pings)
            .field("model_name", &self.model_name)
            .field("max_request_bytes", &self.max_request_bytes)
            .field(
                "max_buffered_request_bytes",
                &self.max_buffered_request_bytes,
            )
            .field("requests_file", &self.requests_file)
            .field("limits", &self.limits)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// The entries of a replaying server's directory that are not
    /// cassettes and were passed over (a file, or a directory without a
    /// `request.json`), each with the reason; empty for any other server.
    pub fn skipped_cassettes(&self) -> &[Skipped] {
        match &self.source {
            SourceConfig::Replay { skipped, .. } => skipped,
            _ => &[],
        }
    }

    /// Record on miss, for a replaying server ([`Server::replay`]): a
    /// request no cassette matches goes on to `upstream` (a base URL, as
    /// [`Server::proxy`] takes it) and the exchange is saved in the
    /// replay directory, whose index is then read again, so the next
    /// identical request replays it (an exchange that was cut is not
    /// indexed until the directory is indexed again). No effect on any
    /// other server.
    #[must_use]
    pub fn record_misses(mut self, upstream: impl Into<String>) -> Self {
        if let SourceConfig::Replay { upstream: to, .. } = &mut self.source {
            *to = Some(upstream.into());
        }
        self
    }

    /// Redacts the matches of `redactor`'s patterns (`--redact REGEX`)
    /// from what a recording server writes: the request and response
    /// bodies of its cassettes, every string of their `request.json`, and
    /// the raw bodies (and decoded requests) of its request log, each
    /// replaced with [`REDACTED_BODY`](crate::cassette::REDACTED_BODY)
    /// before anything is written (see [`Redactor`](crate::cassette::Redactor)).
    /// A replay matches on the redacted context: a request replayed
    /// against such cassettes matches when it holds the redacted text.
    #[must_use]
    pub fn redact(mut self, redactor: crate::cassette::Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    /// The pace of a replaying server ([`Server::replay`]): `0` (the
    /// default) sends each cassette's pieces as fast as possible, `1` at
    /// the pace they arrived when recorded (the cassette's
    /// `response.body.times`), `2` twice as fast, `0.5` half as fast. A
    /// cassette without arrival times (recorded before they were) plays
    /// without pauses. A speed that is not finite and positive is `0`.
    /// No effect on any other server.
    #[must_use]
    pub fn replay_speed(mut self, speed: f64) -> Self {
        if let SourceConfig::Replay { player, .. } = &mut self.source {
            player.set_speed(speed);
        }
        self
    }

    /// The server's steps by call number, counting the calls no rule
    /// answered (see [`Step`]); calls past the end, and every call without
    /// steps, go to the model unchanged.
    #[must_use]
    pub fn steps(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.steps = steps.into_iter().collect();
        self
    }

    /// The rules, tried in order before the steps and the model's turns
    /// (see [`rules`](crate::rules)): a call a rule answers takes no step
    /// and no turn.
    #[must_use]
    pub fn rules(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.rules = rules.into_iter().collect();
        self
    }

    /// Strict: a call no rule answers, when the scripted model has no turn
    /// left for it, fails with HTTP [`EXHAUSTED_STATUS`](crate::EXHAUSTED_STATUS)
    /// in the provider's error shape, the message naming the nearest rule
    /// and its first difference (OpenAI `code`
    /// [`UNMATCHED_CODE`](crate::UNMATCHED_CODE)), instead of the plain
    /// past-the-end answer. Default off. A model that is not a
    /// `ScriptedModel` answers every call the rules leave, strict or not.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// How many test ids (the [`TEST_HEADER`](crate::TEST_HEADER) of a
    /// request; see [`lanes`](crate#per-test-isolation)) the server keeps
    /// at once (default [`MAX_TEST_IDS`](crate::MAX_TEST_IDS), at least
    /// 1); past it the least recently used id is dropped with its
    /// requests.
    #[must_use]
    pub fn max_test_ids(mut self, ids: usize) -> Self {
        self.max_test_ids = ids.max(1);
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

    /// The seed of the turns' jitter ([`timing`](crate::timing)) and of
    /// [chaos](crate::Chaos): the same seed, script and requests give the
    /// same waits and the same injections. Without it, a seed is drawn
    /// from the clock ([`Server::seed`] tells which).
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Chaos for every streamed answer of the model (see [`Chaos`](crate::Chaos));
    /// a request's [`CHAOS_HEADER`](crate::CHAOS_HEADER) replaces it.
    #[must_use]
    pub fn chaos(mut self, chaos: crate::chaos::Chaos) -> Self {
        self.chaos = chaos;
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

    /// The largest request body accepted (default [`MAX_REQUEST_BYTES`](crate::MAX_REQUEST_BYTES)).
    #[must_use]
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// The most bytes of request bodies still arriving held across all
    /// connections at once (default [`MAX_BUFFERED_REQUEST_BYTES`](crate::MAX_BUFFERED_REQUEST_BYTES)): a
    /// request whose body would go past it gets HTTP 503 and its
    /// connection is closed, so many clients each sending part of a large
    /// body cannot hold more than this.
    #[must_use]
    pub fn max_buffered_request_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_request_bytes = bytes;
        self
    }

    /// Appends every recorded request to `path` as a JSON line
    /// ([`RecordedRequest::to_json`](crate::RecordedRequest::to_json)), as it arrives: the file keeps every
    /// request, the memory log only the newest (see
    /// [`kept_requests`](Self::kept_requests)).
    #[must_use]
    pub fn requests_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.requests_file = Some(path.into());
        self
    }

    /// How many requests, and how many bytes of them, the memory log
    /// keeps for [`Server::requests`] and `GET /v1/requests` (default
    /// [`MAX_KEPT_REQUESTS`](crate::MAX_KEPT_REQUESTS) and [`MAX_KEPT_BYTES`](crate::MAX_KEPT_BYTES)); older requests are
    /// dropped and counted ([`Server::dropped_requests`]). A request
    /// counts its body as it came; with a
    /// [`requests_file`](Self::requests_file), its JSON line.
    #[must_use]
    pub fn kept_requests(mut self, count: usize, bytes: usize) -> Self {
        self.limits.kept_requests = count;
        self.limits.kept_bytes = bytes;
        self
    }

    /// How long a connection may wait for a request's headers, idle
    /// keep-alive time included (default [`HEADER_TIMEOUT`](crate::HEADER_TIMEOUT)); then it is
    /// closed. Connections are checked every sixteenth of `timeout`
    /// (between 1 ms and 1 s), so one is closed at most that much later.
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's body (default
    /// [`BODY_TIMEOUT`](crate::BODY_TIMEOUT)); then it gets HTTP 408 and the connection is
    /// closed.
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout;
        self
    }

    /// How long the recording proxy ([`Server::proxy`]) waits for the
    /// upstream (default [`UPSTREAM_TIMEOUT`](crate::UPSTREAM_TIMEOUT)): to connect, and for each
    /// read of its answer. An upstream that does not answer in time gets
    /// the client HTTP 504; one that stalls in the middle of its body ends
    /// the body there.
    #[must_use]
    pub fn upstream_timeout(mut self, timeout: Duration) -> Self {
        self.limits.upstream_timeout = timeout;
        self
    }

    /// The most connections open at once (default [`MAX_CONNECTIONS`](crate::MAX_CONNECTIONS), at
    /// least 1): past it, the oldest connection not being answered (idle,
    /// or still sending its headers) is closed to make room for the new
    /// one; when every connection is being answered, new clients wait in
    /// the listen backlog.
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.limits.max_connections = connections.max(1);
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
        let source = match self.source {
            SourceConfig::Model => Source::Model,
            SourceConfig::Upstream { url, dir } => Source::Upstream(
                Proxy::new(
                    &url,
                    dir.clone(),
                    self.limits.upstream_timeout,
                    self.redactor.clone(),
                )
                .map_err(|e| BindError::new(dir.display().to_string(), e))?,
            ),
            SourceConfig::Replay {
                player,
                upstream: None,
                ..
            } => Source::Replay(*player),
            SourceConfig::Replay {
                player,
                dir,
                upstream: Some(url),
                ..
            } => Source::ReplayOrRecord(Box::new(Misses {
                player: RwLock::new(Arc::from(player)),
                proxy: Proxy::new(
                    &url,
                    dir.clone(),
                    self.limits.upstream_timeout,
                    self.redactor.clone(),
                )
                .map_err(|e| BindError::new(dir.display().to_string(), e))?,
            })),
        };
        let listener = TcpListener::bind(address)
            .await
            .map_err(|e| BindError::new(name.clone(), e))?;
        let local_addr = listener.local_addr().map_err(|e| BindError::new(name, e))?;
        let limits = self.limits;
        let ruled = !self.rules.is_empty();
        let play = Play::new(
            self.model,
            self.scripted,
            self.steps,
            self.manners,
            self.rules,
            self.pristine,
        );
        let shared = Arc::new(State {
            strict: self.strict,
            chunks: self.chunks,
            delay: self.delay,
            pings: self.pings,
            seed: self.seed.unwrap_or_else(crate::timing::clock_seed),
            chaos: self.chaos,
            injected: Mutex::default(),
            model_name: self.model_name,
            max_request_bytes: self.max_request_bytes,
            buffered: AtomicUsize::new(0),
            max_buffered: self.max_buffered_request_bytes,
            body_timeout: limits.body_timeout,
            lines_at_once: file.is_some(),
            redactor: self.redactor,
            source,
            calls: Mutex::new(Calls::new(
                play,
                self.max_test_ids,
                RequestLog::new(limits.kept_requests, limits.kept_bytes, file),
            )),
            test_players: Mutex::new(std::collections::HashMap::new()),
            ruled: std::sync::atomic::AtomicBool::new(ruled),
            templates: crate::template::Templates::default(),
        });
        let (stop, stopped) = oneshot::channel();
        let accepting = accept::Limits {
            header_timeout: limits.header_timeout,
            max_connections: limits.max_connections,
        };
        let task = tokio::spawn(accept::accept(listener, shared.clone(), accepting, stopped));
        Ok(Server {
            local_addr,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }
}
