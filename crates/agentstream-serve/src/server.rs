//! The server: its constructors, and the calls it records.

use std::any::Any;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentstream::model::{Model, ScriptStep, ScriptedModel, ScriptedReply, ScriptedTurn};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::builder::{Limits, ServerBuilder, SourceConfig};
use crate::cassette::{CassetteError, Match, Player};
use crate::full_script::Script;
use crate::lanes::{split_script, MAX_TEST_IDS};
use crate::limits::{
    BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BUFFERED_REQUEST_BYTES, MAX_CONNECTIONS, MAX_REQUEST_BYTES,
    UPSTREAM_TIMEOUT,
};
use crate::log::{RecordedRequest, MAX_KEPT_BYTES, MAX_KEPT_REQUESTS};
use crate::rules::Rule;
use crate::script::ServeTurn;
use crate::state::State;

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
    pub(crate) local_addr: SocketAddr,
    pub(crate) shared: Arc<State>,
    pub(crate) stop: Option<oneshot::Sender<()>>,
    pub(crate) task: Option<JoinHandle<()>>,
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
