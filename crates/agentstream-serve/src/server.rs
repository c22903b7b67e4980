//! The server: a builder, the listening task, and the calls it records.

use std::any::Any;
use std::fs::OpenOptions;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use agentstream::model::{Model, ScriptStep, ScriptedModel, ScriptedReply, ScriptedTurn};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::accept;
use crate::cassette::{CassetteError, Match, Player, Skipped};
use crate::error::BindError;
use crate::full_script::Script;
use crate::lanes::{split_script, Play, MAX_TEST_IDS};
use crate::limits::{
    BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BUFFERED_REQUEST_BYTES, MAX_CONNECTIONS, MAX_REQUEST_BYTES,
    UPSTREAM_TIMEOUT,
};
use crate::log::{RecordedRequest, RequestLog, MAX_KEPT_BYTES, MAX_KEPT_REQUESTS};
use crate::proxy::Proxy;
use crate::rules::Rule;
use crate::script::{ServeTurn, Step};
use crate::state::{Calls, Misses, Source, State};

/// Sets up a [`Server`]; see [`Server::builder`].
pub struct ServerBuilder {
    model: Arc<dyn Model + Send + Sync>,
    scripted: Option<Arc<ScriptedModel>>,
    /// The script's turns as loaded, when the server was given a script.
    pristine: Option<Arc<[ScriptStep]>>,
    steps: crate::lanes::Steps,
    /// The ordered elements' timing and quirks (empty: none has any).
    manners: Vec<crate::manner::Manner>,
    /// The seed of jitter and chaos; `None`: one from the clock.
    seed: Option<u64>,
    chaos: crate::chaos::Chaos,
    rules: Vec<Rule>,
    strict: bool,
    max_test_ids: usize,
    chunks: usize,
    delay: Duration,
    pings: bool,
    model_name: String,
    max_request_bytes: usize,
    max_buffered_request_bytes: usize,
    requests_file: Option<PathBuf>,
    limits: Limits,
    source: SourceConfig,
    redactor: crate::cassette::Redactor,
}

/// Where a server's answers come from, before it binds.
#[derive(Debug)]
enum SourceConfig {
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
struct Limits {
    header_timeout: Duration,
    body_timeout: Duration,
    upstream_timeout: Duration,
    max_connections: usize,
    kept_requests: usize,
    kept_bytes: usize,
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

    /// The largest request body accepted (default [`MAX_REQUEST_BYTES`]).
    #[must_use]
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// The most bytes of request bodies still arriving held across all
    /// connections at once (default [`MAX_BUFFERED_REQUEST_BYTES`]): a
    /// request whose body would go past it gets HTTP 503 and its
    /// connection is closed, so many clients each sending part of a large
    /// body cannot hold more than this.
    #[must_use]
    pub fn max_buffered_request_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_request_bytes = bytes;
        self
    }

    /// Appends every recorded request to `path` as a JSON line
    /// ([`RecordedRequest::to_json`]), as it arrives: the file keeps every
    /// request, the memory log only the newest (see
    /// [`kept_requests`](Self::kept_requests)).
    #[must_use]
    pub fn requests_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.requests_file = Some(path.into());
        self
    }

    /// How many requests, and how many bytes of them, the memory log
    /// keeps for [`Server::requests`] and `GET /v1/requests` (default
    /// [`MAX_KEPT_REQUESTS`] and [`MAX_KEPT_BYTES`]); older requests are
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
    /// keep-alive time included (default [`HEADER_TIMEOUT`]); then it is
    /// closed. Connections are checked every sixteenth of `timeout`
    /// (between 1 ms and 1 s), so one is closed at most that much later.
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's body (default
    /// [`BODY_TIMEOUT`]); then it gets HTTP 408 and the connection is
    /// closed.
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout;
        self
    }

    /// How long the recording proxy ([`Server::proxy`]) waits for the
    /// upstream (default [`UPSTREAM_TIMEOUT`]): to connect, and for each
    /// read of its answer. An upstream that does not answer in time gets
    /// the client HTTP 504; one that stalls in the middle of its body ends
    /// the body there.
    #[must_use]
    pub fn upstream_timeout(mut self, timeout: Duration) -> Self {
        self.limits.upstream_timeout = timeout;
        self
    }

    /// The most connections open at once (default [`MAX_CONNECTIONS`], at
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

/// An OpenAI- and Anthropic-compatible endpoint serving a [`Model`].
///
/// Every `POST /v1/chat/completions` and `POST /v1/messages` is decoded
/// into a Pi [`Context`](agentstream::message::Context), recorded, numbered in arrival order, and handed
/// to the model; its events go back as the provider's SSE (or one JSON
/// body). Clients are served concurrently. A client that disconnects
/// aborts its call's signal and drops its stream.
///
/// Routes: `POST /v1/chat/completions`, `POST /v1/messages`,
/// `POST /v1/responses`, Gemini's model methods, Azure's
/// `POST /openai/v1/responses` and Mistral's
/// `POST /mistral/v1/chat/completions` (a Mistral client's base URL is
/// `http://HOST/mistral`: OpenAI's Chat Completions has the unprefixed
/// path),
/// `GET /v1/models`, `GET /v1/unused` (see [`Server::unused`]), and
/// `GET /v1/requests` (the recorded requests as a
/// JSON array; see [the request log](crate#the-request-log)),
/// `POST /v1/script` and `POST /v1/reset` (see [control at run
/// time](crate#control-at-run-time)). The `/v1` prefix is optional. A
/// request's [`TEST_HEADER`](crate::TEST_HEADER) picks its test's own
/// script and log (see [per-test isolation](crate#per-test-isolation)).
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
    shared: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Server {
    /// A builder serving `model`.
    pub fn builder<M: Model + Send + Sync + 'static>(model: M) -> ServerBuilder {
        let model = Arc::new(model);
        // The same model seen as a `ScriptedModel`, if it is one.
        let scripted = (Arc::clone(&model) as Arc<dyn Any + Send + Sync>)
            .downcast::<ScriptedModel>()
            .ok();
        ServerBuilder {
            model,
            scripted,
            pristine: None,
            steps: crate::lanes::Steps::default(),
            manners: Vec::new(),
            seed: None,
            chaos: crate::chaos::Chaos::default(),
            rules: Vec::new(),
            strict: false,
            max_test_ids: MAX_TEST_IDS,
            chunks: 1,
            delay: Duration::ZERO,
            pings: false,
            model_name: "scripted".into(),
            max_request_bytes: MAX_REQUEST_BYTES,
            max_buffered_request_bytes: MAX_BUFFERED_REQUEST_BYTES,
            requests_file: None,
            limits: Limits {
                header_timeout: HEADER_TIMEOUT,
                body_timeout: BODY_TIMEOUT,
                upstream_timeout: UPSTREAM_TIMEOUT,
                max_connections: MAX_CONNECTIONS,
                kept_requests: MAX_KEPT_REQUESTS,
                kept_bytes: MAX_KEPT_BYTES,
            },
            source: SourceConfig::Model,
            redactor: crate::cassette::Redactor::default(),
        }
    }

    /// A builder for a recording proxy: every `POST /v1/chat/completions`
    /// and `POST /v1/messages` goes on to `upstream` (a base URL, with or
    /// without its `/v1`, `http` or `https`), its answer streams back to
    /// the client live and unchanged, and the exchange is saved as a
    /// cassette in `dir` (created; see [`cassette`](crate::cassette) for
    /// the files). Secret headers never reach the cassette. A request the
    /// server cannot decode is forwarded but not saved.
    pub fn proxy(upstream: impl Into<String>, dir: impl Into<PathBuf>) -> ServerBuilder {
        let mut builder = Self::builder(ScriptedModel::new(Vec::<ScriptedTurn>::new()));
        builder.source = SourceConfig::Upstream {
            url: upstream.into(),
            dir: dir.into(),
        };
        builder
    }

    /// A builder answering from the cassettes in `dir`, picked by `mode`
    /// (see [`cassette`](crate::cassette)); a request without a matching
    /// cassette gets HTTP 500 naming the closest one and where it differs.
    /// The entries of `dir` that are not cassettes are passed over and
    /// listed by [`ServerBuilder::skipped_cassettes`].
    ///
    /// # Errors
    /// A cassette that cannot be read.
    pub fn replay(dir: impl Into<PathBuf>, mode: Match) -> Result<ServerBuilder, CassetteError> {
        let dir = dir.into();
        let (player, skipped) = Player::load(&dir, mode)?;
        let mut builder = Self::builder(ScriptedModel::new(Vec::<ScriptedTurn>::new()));
        builder.source = SourceConfig::Replay {
            player: Box::new(player),
            dir,
            upstream: None,
            skipped,
        };
        Ok(builder)
    }

    /// A builder serving a script: the turns go to a [`ScriptedModel`],
    /// the steps to the server. The model name is the first message
    /// turn's `model`.
    pub fn from_script(script: impl IntoIterator<Item = ServeTurn>) -> ServerBuilder {
        let (split, name) = split_script(script);
        // The turns shared, not copied: a test id's lane plays a copy of
        // their pointers.
        let pristine: Arc<[ScriptStep]> = split.turns.clone().into();
        let mut builder = Self::builder(ScriptedModel::new(split.turns));
        builder.steps = split.steps;
        builder.pristine = Some(pristine);
        builder.manners = split.manners;
        match name {
            Some(name) => builder.model_name(name),
            None => builder,
        }
    }

    /// A builder serving a [`Script`]: its rules (see
    /// [`ServerBuilder::rules`]), then its turns as
    /// [`from_script`](Self::from_script) serves them. The model name is
    /// the first message turn's `model`, the turns' before the rules'.
    ///
    /// ```
    /// use agentstream_serve::{Script, Server};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let script = Script::from_value(json!({"rules": [
    ///     {"name": "weather", "match": {"lastUserText": "weather"}, "reply": "sunny"},
    /// ]}))?;
    /// let server = Server::from_rules_script(script).strict(true).bind("127.0.0.1:0").await?;
    /// // ... every request whose last user text mentions the weather gets "sunny";
    /// // any other gets HTTP 400 naming rules[0] ("weather") and why it did not match.
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_rules_script(script: Script) -> ServerBuilder {
        let Script { rules, turns } = script;
        let named = turns.iter().any(|element| {
            element
                .turn
                .iter()
                .chain(element.alternatives.iter().map(|a| &a.turn))
                .any(|turn| matches!(turn.reply(), ScriptedReply::Message(_)))
        });
        let rule_name = rules.iter().find_map(Rule::model);
        let builder = Self::from_script(turns).rules(rules);
        match rule_name {
            Some(name) if !named => builder.model_name(name),
            _ => builder,
        }
    }

    /// The rules that never answered a call and the ordered elements no
    /// call reached, as `GET /v1/unused` lists them: `{"rules": [{"index",
    /// "name"}, …], "turns": [index, …]}` (empty lists when the script was
    /// used up).
    pub fn unused(&self) -> serde_json::Value {
        self.shared.unused(None)
    }

    /// [`unused`](Self::unused) for one test id's lane.
    pub fn test_unused(&self, test: &str) -> serde_json::Value {
        self.shared.unused(Some(test))
    }

    /// The base URL clients use: `http://ADDRESS:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.local_addr)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The requests kept (every request so far, unless more than the
    /// bounds of [`ServerBuilder::kept_requests`] arrived: then the
    /// newest), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        Self::read_back(self.shared.kept(None).0, None)
    }

    /// The requests kept of one test id (those that came with the
    /// [`TEST_HEADER`](crate::TEST_HEADER) `test`), in arrival order; the
    /// calls are numbered from 0 for each id.
    pub fn test_requests(&self, test: &str) -> Vec<RecordedRequest> {
        Self::read_back(self.shared.kept(Some(test)).0, Some(test))
    }

    fn read_back(kept: Vec<crate::log::Kept>, test: Option<&str>) -> Vec<RecordedRequest> {
        kept.iter()
            .filter_map(|request| RecordedRequest::from_line(&request.line_as(test, false)))
            .collect()
    }

    /// How many requests so far were dropped from the memory log (the
    /// oldest, past the bounds of [`ServerBuilder::kept_requests`]).
    pub fn dropped_requests(&self) -> usize {
        self.shared.kept(None).1
    }

    /// The seed of jitter and chaos (given to
    /// [`ServerBuilder::seed`], or drawn from the clock): start a server
    /// with it to replay a run.
    pub fn seed(&self) -> u64 {
        self.shared.seed
    }

    /// How many calls the server numbered so far (with a test id or
    /// without).
    pub fn calls(&self) -> usize {
        self.shared.calls().total
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
