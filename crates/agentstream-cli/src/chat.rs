//! `agentstream chat`: one streamed call to an endpoint of any `--api`
//! (OpenAI-compatible, Anthropic Messages, OpenAI Responses, Gemini,
//! Azure OpenAI Responses, Mistral, Bedrock),
//! printed live.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentstream::message::{user, AssistantMessage, Context, StopReason};
use agentstream::model::{
    AbortController, CacheRetention, ErrorCause, Model, ModelEvent, StreamOptions, ThinkingLevel,
    TimeoutKind,
};
use agentstream::rt::Runtime;
use agentstream_tokio::Tokio;
use agentstream_wire::recording::BodySink;
use futures_util::StreamExt;

use crate::catalogue;
use crate::provider::{self, api_parser, Api, Settings, Target};
use agentstream_wire::options::is_secret_header;

use crate::decode::write_usage;
use crate::jsonl::{write_model_event, Shape};
use crate::redact::Redactor;
use crate::terminal::{escape_controls, escape_line};

/// ANSI: dim on, and reset.
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Arguments of `chat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The protocol: OpenAI-compatible Chat Completions, Anthropic
    /// Messages, OpenAI Responses, Google Gemini, Azure OpenAI Responses,
    /// Mistral or Amazon Bedrock (ConverseStream).
    /// Default: `openai`, or the api of a `--model PROVIDER/ID` from the
    /// catalogue.
    #[arg(long, value_parser = api_parser())]
    api: Option<Api>,
    /// The endpoint's base URL, such as `https://api.openai.com/v1` (the
    /// request goes to `{URL}/chat/completions`); for `--api anthropic`
    /// `https://api.anthropic.com` (the default; `{URL}/v1/messages`); for
    /// `--api responses` `https://api.openai.com/v1` (the default;
    /// `{URL}/responses`); for `--api google`
    /// `https://generativelanguage.googleapis.com/v1beta` (the default;
    /// `{URL}/models/{ID}:streamGenerateContent?alt=sse`); for `--api
    /// mistral` `https://api.mistral.ai` (the default;
    /// `{URL}/v1/chat/completions`, a `/v1` ending URL not repeated); for `--api azure` `AZURE_OPENAI_BASE_URL`
    /// or `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`
    /// (`{URL}/responses?api-version=…`); for `--api bedrock`
    /// `https://bedrock-runtime.{AWS_REGION}.amazonaws.com` (the default;
    /// `{URL}/model/{ID}/converse-stream`). Required with `--api openai`.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model id; or, without `--api`, `PROVIDER/ID` of pi-ai's model
    /// catalogue (`agentstream models`), which gives the api, base URL,
    /// headers and key variable.
    #[arg(long, value_name = "ID")]
    model: String,
    /// How long the provider should cache the request's prefix: `none`,
    /// `short` or `long` (pi-ai's `cacheRetention`). Default: `short`, as
    /// pi-ai (`long` when `PI_CACHE_RETENTION=long`, as pi-ai reads it).
    #[arg(long, value_name = "RETENTION", value_parser = retention)]
    cache_retention: Option<CacheRetention>,
    /// The thinking level: `off`, `minimal`, `low`, `medium`, `high` or
    /// `xhigh` (Pi's `thinkingLevel`), sent as pi-ai sends it for the
    /// model's API (clamped to a catalogue model's supported levels).
    /// Default: none sent.
    #[arg(long, value_name = "LEVEL", value_parser = thinking_level)]
    thinking: Option<ThinkingLevel>,
    /// The session id: the prompt cache key and session headers where the
    /// provider takes them.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// Send this Pi context (`{"systemPrompt"?, "messages", "tools"?}`)
    /// instead of a prompt.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["prompt", "system"])]
    context: Option<PathBuf>,
    /// Print the request it would send as one JSON object `{"method",
    /// "url", "headers", "body"}` (secret header values redacted) and exit
    /// without sending.
    #[arg(long)]
    dry_run: bool,
    /// The environment variable holding the API key (never printed). When
    /// it is unset or empty, no key is sent. Default: `OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY` with `--api anthropic`, `GEMINI_API_KEY` with
    /// `--api google`, `AZURE_OPENAI_API_KEY` with `--api azure`,
    /// `MISTRAL_API_KEY` with `--api mistral`, `AWS_BEARER_TOKEN_BEDROCK`
    /// with `--api bedrock` (else SigV4 from `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), or a catalogue
    /// model's variable.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The output token limit. Default: a catalogue model's
    /// `min(maxTokens, 32000)`, as pi-ai's `streamSimple`; with `--api
    /// anthropic` (which requires one) 4096; otherwise none sent.
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Save the final assistant message as a ScriptedModel turn: a
    /// one-element JSON array that `agentstream play` replays.
    #[arg(long, value_name = "SCRIPT.json")]
    record: Option<PathBuf>,
    /// Save the response body exactly as received to FILE (what
    /// `agentstream decode` reads back), and the sizes of the pieces it
    /// arrived in to FILE.lengths, one per line (what a `ReplayModel`
    /// replays it with).
    #[arg(long, value_name = "FILE")]
    record_raw: Option<PathBuf>,
    /// A system prompt.
    #[arg(long)]
    system: Option<String>,
    /// Abort when the connection (TCP and TLS) takes longer than this
    /// (0.001 to 1000000).
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = timeout)]
    connect_timeout: Duration,
    /// Abort when the response stays silent longer than this (0.001 to
    /// 1000000). Any bytes of the body count as activity, Anthropic's
    /// `ping` events and SSE comments included, so a server that pings
    /// forever never hits it: `--timeout` bounds the whole call.
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = timeout)]
    idle_timeout: Duration,
    /// Abort when the whole call (connection, response and every ping)
    /// takes longer than this (0.001 to 1000000); the answer so far is
    /// kept. Default: no limit.
    #[arg(long = "timeout", value_name = "SECONDS", value_parser = timeout)]
    total_timeout: Option<Duration>,
    /// Print every event as one JSON line instead of the live text:
    /// `--jsonl` in Pi's shape (every event carries the whole message so
    /// far), `--jsonl=compact` without it (the final event keeps the
    /// complete message).
    #[arg(long, value_enum, value_name = "SHAPE", num_args = 0..=1,
          require_equals = true, default_missing_value = "pi")]
    jsonl: Option<Shape>,
    /// The user message.
    #[arg(required_unless_present = "context")]
    prompt: Option<String>,
}

/// `--cache-retention`'s parser.
fn retention(text: &str) -> Result<CacheRetention, String> {
    CacheRetention::parse(text).ok_or_else(|| format!("`{text}` is not none, short or long"))
}

/// `--thinking`'s parser (also `agent --thinking`).
pub(crate) fn thinking_level(text: &str) -> Result<ThinkingLevel, String> {
    ThinkingLevel::parse(text)
        .ok_or_else(|| format!("`{text}` is not off, minimal, low, medium, high or xhigh"))
}

/// pi-ai's environment override of the default retention:
/// `PI_CACHE_RETENTION=long` makes it `long`; anything else leaves Pi's
/// default (`short`).
fn env_cache_retention() -> Option<CacheRetention> {
    (std::env::var("PI_CACHE_RETENTION").ok()?.as_str() == "long").then_some(CacheRetention::Long)
}

/// Runs `chat`: exits 0 when the model finished, 1 on an error, 130 when
/// interrupted with Ctrl-C, 2 on bad arguments.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let (connect, idle) = (args.connect_timeout, args.idle_timeout);
    let target = match (args.api, catalogue::lookup(&args.model)) {
        (None, Some(m)) => Target::Catalogue(m),
        (api, _) => Target::Api(api.unwrap_or(Api::OpenAi)),
    };
    let key_envs: Vec<&str> = match (&args.api_key_env, target) {
        (Some(name), _) => vec![name.as_str()],
        (None, Target::Api(api)) => vec![api.default_key_env()],
        (None, Target::Catalogue(m)) => agentstream_models::api_key_env_vars(m.provider).to_vec(),
    };
    let key = key_envs
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|key| !key.is_empty()));
    if key.is_none() {
        let names = key_envs.iter().map(|n| format!("${n}")).collect::<Vec<_>>();
        eprintln!(
            "agentstream: note: {} is not set; sending no API key",
            names.join(", ")
        );
    }
    let context = match &args.context {
        Some(path) => match read_context(path) {
            Ok(context) => context,
            Err(e) => {
                eprintln!("agentstream: error: {}: {e}", path.display());
                return Ok(ExitCode::from(2));
            }
        },
        None => {
            let prompt = args.prompt.as_deref().unwrap_or_default();
            let mut context = Context::from_messages([user(prompt).into()]);
            context.system_prompt = args.system.clone();
            context
        }
    };
    let cache_retention = args.cache_retention.or_else(env_cache_retention);
    // Server text is printed with the key (and any secret header value a
    // server echoes back) redacted.
    let redactor = Redactor::new(key.as_deref());
    let raw = args.record_raw.as_ref().map(|_| RawBody::default());
    let settings = Settings {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        key,
        connect_timeout: Some(connect),
        idle_timeout: Some(idle),
        max_tokens: args.max_tokens,
        raw: raw.as_ref().map(RawBody::sink),
        cache_retention,
        session_id: args.session_id.clone(),
        thinking: args.thinking,
    };
    if args.dry_run {
        return dry_run(target, settings, &context);
    }
    let model = match provider::model(target, settings) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("agentstream: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shown = Shown {
        jsonl: args.jsonl,
        total: args.total_timeout,
        redactor,
    };
    let (message, ended) = runtime.block_on(stream(&*model, &context, shown))?;
    let Ended {
        interrupted,
        timed_out,
        redactor,
    } = ended;

    let stdout = io::stdout();
    let mut out = stdout.lock();
    let usage = &message.usage;
    // With `--jsonl` the events said it all, and stdout stays JSON lines.
    if args.jsonl.is_none() {
        write_usage(&mut out, usage)?;
        writeln!(out, "stopReason: {}", message.stop_reason)?;
    }
    out.flush()?;
    if let Some(error) = &message.error_message {
        eprintln!("agentstream: {}", escape_line(&redactor.line(error)));
    }
    if let (true, Some(total)) = (timed_out, args.total_timeout) {
        eprintln!("agentstream: the call took longer than --timeout ({total:?})");
    }
    if let (Some(path), Some(raw)) = (&args.record_raw, &raw) {
        raw.save(path)?;
    }
    if let Some(path) = &args.record {
        let script = serde_json::to_string_pretty(&[&message]).map_err(io::Error::other)?;
        std::fs::write(path, script + "\n")?;
    }
    Ok(match message.stop_reason {
        _ if interrupted => ExitCode::from(130),
        StopReason::Error | StopReason::Aborted => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// `--dry-run`: prints the request as one JSON object; exits 2 when it
/// cannot be built.
fn dry_run(target: Target, settings: Settings, context: &Context) -> io::Result<ExitCode> {
    let request = match provider::prepare(target, settings, context, &StreamOptions::default()) {
        Ok(request) => request,
        Err(e) => {
            eprintln!("agentstream: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut headers = serde_json::Map::new();
    let named = request.headers.iter().map(|(k, v)| (*k, v.as_str()));
    let extra = request
        .extra_headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()));
    for (name, value) in named.chain(extra) {
        let value = if is_secret_header(name) {
            "<redacted>"
        } else {
            value
        };
        headers.insert(name.to_owned(), value.into());
    }
    let body: serde_json::Value =
        serde_json::from_slice(&request.body).map_err(io::Error::other)?;
    let printed = serde_json::json!({
        "method": request.method,
        "url": request.url,
        "headers": headers,
        "body": body,
    });
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, &printed)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

/// A Pi context read from `path`.
fn read_context(path: &Path) -> Result<Context, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The response body of `--record-raw`, as the client delivered it.
#[derive(Debug, Clone, Default)]
struct RawBody(Arc<Mutex<(Vec<u8>, Vec<usize>)>>);

impl RawBody {
    /// A sink appending each piece.
    fn sink(&self) -> BodySink {
        let body = Arc::clone(&self.0);
        Arc::new(move |piece: &[u8]| {
            let mut body = body.lock().unwrap_or_else(PoisonError::into_inner);
            body.0.extend_from_slice(piece);
            body.1.push(piece.len());
        })
    }

    /// Writes the body to `path` and the piece sizes to `path.lengths`.
    fn save(&self, path: &Path) -> io::Result<()> {
        let body = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        std::fs::write(path, &body.0)?;
        let lengths: String = body.1.iter().map(|n| format!("{n}\n")).collect();
        let mut sidecar = path.as_os_str().to_owned();
        sidecar.push(".lengths");
        std::fs::write(sidecar, lengths)
    }
}

/// The shortest and longest timeouts `chat` takes, in seconds.
const TIMEOUT_RANGE: (f64, f64) = (0.001, 1_000_000.0);

/// A timeout argument: a number of seconds within [`TIMEOUT_RANGE`]; clap
/// reports anything else as a usage error (exit 2).
pub(crate) fn timeout(text: &str) -> Result<Duration, String> {
    let (min, max) = TIMEOUT_RANGE;
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(min..=max).contains(&seconds) {
        return Err(format!(
            "{text} is out of range: give {min} to {max} seconds"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| e.to_string())
}

/// How `chat` shows the call.
struct Shown {
    jsonl: Option<Shape>,
    /// `--timeout`.
    total: Option<Duration>,
    redactor: Redactor,
}

/// How the call ended, besides its message.
struct Ended {
    /// Ctrl-C was pressed.
    interrupted: bool,
    /// `--timeout` ended it.
    timed_out: bool,
    redactor: Redactor,
}

/// Streams the call to stdout; Ctrl-C aborts it, and so does `--timeout`.
async fn stream(
    model: &dyn Model,
    context: &Context,
    shown: Shown,
) -> io::Result<(AssistantMessage, Ended)> {
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = match shown.total {
        Some(total) => Tokio.stream_with_timeout(model, context, options, total),
        None => model.stream(context, options),
    };
    let stdout = io::stdout();
    let color = stdout.is_terminal();
    let mut printer = Printer {
        out: stdout.lock(),
        color,
        last: None,
        at_line_start: true,
        jsonl: shown.jsonl,
        redactor: shown.redactor,
    };
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            event = stream.next() => match event {
                Some(event) => printer.event(&event)?,
                None => break,
            },
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                controller.abort();
            }
        }
    }
    printer.finish()?;
    let message = stream.result().await;
    let timed_out = matches!(
        stream.error_cause(),
        Some(ErrorCause::Timeout(TimeoutKind::Total, _))
    );
    let ended = Ended {
        interrupted,
        timed_out,
        redactor: printer.redactor,
    };
    Ok((message, ended))
}

/// What was printed last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    Tool,
}

struct Printer<W: Write> {
    out: W,
    color: bool,
    last: Option<Kind>,
    at_line_start: bool,
    /// `--jsonl`: events as JSON lines instead of the text.
    jsonl: Option<Shape>,
    redactor: Redactor,
}

impl<W: Write> Printer<W> {
    fn event(&mut self, event: &ModelEvent) -> io::Result<()> {
        if let Some(shape) = self.jsonl {
            // The line is redacted whole: the key is caught wherever it is
            // whole in one event (in Pi's shape, the partial holds it).
            let mut line = Vec::new();
            write_model_event(&mut line, event, shape)?;
            let line = String::from_utf8_lossy(&line);
            self.out.write_all(self.redactor.line(&line).as_bytes())?;
            return self.out.flush();
        }
        match event {
            ModelEvent::TextDelta { delta, .. } => self.write(Kind::Text, delta),
            ModelEvent::ThinkingDelta { delta, .. } => self.write(Kind::Thinking, delta),
            ModelEvent::ToolCallEnd { tool_call, .. } => {
                let arguments =
                    serde_json::to_string(&tool_call.arguments).map_err(io::Error::other)?;
                let line = format!(
                    "toolCall: {} {} {}\n",
                    escape_line(&tool_call.id),
                    escape_line(&tool_call.name),
                    escape_line(&arguments)
                );
                let line = self.redactor.line(&line).into_owned();
                self.flush_held()?;
                self.write_shown(Kind::Tool, &line)
            }
            _ => Ok(()),
        }
    }

    /// Writes streamed text, the key redacted even when it is cut between
    /// two deltas (the end that may start it waits for the next one).
    fn write(&mut self, kind: Kind, text: &str) -> io::Result<()> {
        if self.last.is_some_and(|last| last != kind) {
            self.flush_held()?;
        }
        let text = self.redactor.stream(text);
        self.write_shown(kind, &text)
    }

    /// Writes what the redactor held back, in the kind it came in.
    fn flush_held(&mut self) -> io::Result<()> {
        let held = self.redactor.flush();
        match self.last {
            Some(kind) if !held.is_empty() => self.write_shown(kind, &held),
            _ => Ok(()),
        }
    }

    fn write_shown(&mut self, kind: Kind, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        if self.last.is_some_and(|last| last != kind) && !self.at_line_start {
            // A new block starts on its own line.
            writeln!(self.out)?;
        }
        self.last = Some(kind);
        // On a terminal, the server's text must not drive it.
        let text = if self.color {
            escape_controls(text)
        } else {
            Cow::Borrowed(text)
        };
        let text = text.as_ref();
        if kind == Kind::Thinking && self.color {
            write!(self.out, "{DIM}{text}{RESET}")?;
        } else {
            self.out.write_all(text.as_bytes())?;
        }
        self.at_line_start = text.ends_with('\n');
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.jsonl.is_some() {
            return self.out.flush();
        }
        self.flush_held()?;
        if !self.at_line_start {
            writeln!(self.out)?;
        }
        self.out.flush()
    }
}
