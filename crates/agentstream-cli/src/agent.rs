//! `agentstream agent`: the agent loop with two read-only tools, `read` and
//! `ls`, confined to a root directory, against a script, the built-in demo
//! or an endpoint of any `--api`.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use agentstream::agent::{
    Agent, AgentEvent, AgentOptions, AgentOutcome, AgentStop, AgentTool, AutoCompaction, AutoRetry,
    ToolContext, ToolError, ToolOutput, ToolSet,
};
use agentstream::message::{assistant, text, tool_call, Context, Message, StopReason};
use agentstream::model::{Model, ScriptStep, ScriptedModel, ScriptedTurn, ThinkingLevel};
use agentstream::rt::Clock;
use agentstream::session::{CompactionSettings, SessionRecorder};
use serde_json::{json, Map, Value};

use crate::input::{array_elements, read_whole_file, InputError, MAX_WHOLE_FILE_BYTES};
use crate::jsonl::{write_agent_event, Shape};
use crate::provider::{self, api_parser, Api, Settings};
use crate::sandbox::Sandbox;
use crate::terminal::escape_line;
use crate::transcript::Transcript;

/// Arguments of `agent`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `[SCRIPT.json] PROMPT`: an optional script (a JSON array of turns,
    /// as `play` takes) and the user's prompt. Without a script and without
    /// `--base-url`, the built-in demo plays: turn 1 reads README.md from
    /// the root, turn 2 answers from what the tool returned.
    #[arg(value_name = "[SCRIPT.json] PROMPT", num_args = 1..=2, required = true)]
    words: Vec<String>,
    /// The directory the tools may read (default: the current directory).
    /// Paths that leave it are refused; a symlink is followed only while
    /// it stays beneath it (an absolute one is refused), and FIFOs and
    /// devices are not read.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print every agent event as one JSON line: `--jsonl` in Pi's shape
    /// (every update carries the whole message so far),
    /// `--jsonl=compact` without it (`message_end` and the later events
    /// keep the complete messages).
    #[arg(long, value_enum, value_name = "SHAPE", num_args = 0..=1,
          require_equals = true, default_missing_value = "pi")]
    jsonl: Option<Shape>,
    /// Run against the endpoint at this base URL (see `chat --base-url`).
    #[arg(long, value_name = "URL", requires = "model")]
    base_url: Option<String>,
    /// The endpoint's protocol (with `--base-url`): OpenAI-compatible Chat
    /// Completions, Anthropic Messages, OpenAI Responses, Google Gemini,
    /// Azure OpenAI Responses, Mistral or Amazon Bedrock (see `chat --api`).
    #[arg(long, value_parser = api_parser(), default_value = "openai")]
    api: Api,
    /// The model id (with `--base-url`).
    #[arg(long, value_name = "ID", requires = "base_url")]
    model: Option<String>,
    /// The environment variable holding the API key (with `--base-url`).
    /// Default: as for `chat`, by `--api`.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The thinking level sent on every call: `off`, `minimal`, `low`,
    /// `medium`, `high` or `xhigh` (see `chat --thinking`). Default: with a
    /// session, the level its branch last set, as Pi restores it; else
    /// none sent (Pi: `medium`). A level that differs from the session's
    /// is written to it as a `thinking_level_change` entry.
    #[arg(long, value_name = "LEVEL", value_parser = crate::chat::thinking_level)]
    thinking: Option<ThinkingLevel>,
    /// How long one `read` or `ls` may take, in seconds; a call still
    /// running then ends in an error result.
    #[arg(long, value_name = "SECONDS", default_value = "30",
          value_parser = crate::chat::timeout)]
    tool_timeout: Duration,
    /// The most model calls of the run (1 to 1000).
    #[arg(long, value_name = "N", default_value = "20",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_turns: u32,
    /// Resume the Pi session file FILE (or start one there) and append the
    /// run's messages to it as they end, as `pi --session FILE` does.
    #[arg(long, value_name = "FILE", conflicts_with = "continue_session")]
    session: Option<PathBuf>,
    /// Continue the newest session of the current directory as `pi -c`
    /// picks it (in `$PI_CODING_AGENT_DIR/sessions/--<cwd>--/`, by default
    /// under `~/.pi/agent`), or start one there.
    #[arg(long = "continue", short = 'c')]
    continue_session: bool,
    /// Retry a turn that failed with a transient error (overloaded, rate
    /// limit, 5xx, connection errors: Pi's patterns) after a delay that
    /// doubles each time, as Pi's `retry` settings do. Pi retries by
    /// default; here it is asked for, since `agent` also plays scripts.
    #[arg(long)]
    auto_retry: bool,
    /// The most retries in a row (with `--auto-retry`; Pi's default).
    #[arg(long, value_name = "N", default_value = "3", requires = "auto_retry",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    max_retries: u32,
    /// The first retry's delay in milliseconds, doubled at each attempt
    /// (with `--auto-retry`; Pi's default).
    #[arg(long, value_name = "MS", default_value = "2000", requires = "auto_retry",
          value_parser = clap::value_parser!(u64).range(0..=600_000))]
    retry_base_delay_ms: u64,
    /// Compact the session when the context passes the model's window
    /// less `--reserve-tokens`, or when the provider says it overflowed
    /// (then the turn is retried once), as Pi's `compaction` settings do;
    /// the summary is asked of the same model. Needs `--session` or `-c`.
    #[arg(long)]
    auto_compact: bool,
    /// The model's context window in tokens (with `--auto-compact`); 0:
    /// unknown, so only an overflow error compacts.
    #[arg(
        long,
        value_name = "TOKENS",
        default_value = "0",
        requires = "auto_compact"
    )]
    context_window: u64,
    /// Tokens kept free for the answer (with `--auto-compact`; Pi's
    /// default).
    #[arg(
        long,
        value_name = "TOKENS",
        default_value = "16384",
        requires = "auto_compact"
    )]
    reserve_tokens: u64,
    /// About how many tokens of the newest messages a compaction keeps
    /// (with `--auto-compact`; Pi's default).
    #[arg(
        long,
        value_name = "TOKENS",
        default_value = "20000",
        requires = "auto_compact"
    )]
    keep_recent_tokens: u64,
}

/// Runs `agent`: exits 0 when the run completed, 1 when it ended in an
/// error, at the turn limit or aborted, 2 on bad input.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let (script, prompt) = match args.words.as_slice() {
        [prompt] => (None, prompt.clone()),
        [script, prompt] => (Some(PathBuf::from(script)), prompt.clone()),
        _ => {
            eprintln!("agentstream: error: give [SCRIPT.json] PROMPT");
            return Ok(ExitCode::from(2));
        }
    };
    if script.is_some() && args.base_url.is_some() {
        eprintln!("agentstream: error: give a script or --base-url, not both");
        return Ok(ExitCode::from(2));
    }
    let sandbox = match Sandbox::new(args.root.as_deref(), args.tool_timeout) {
        Ok(sandbox) => sandbox,
        Err(e) => {
            eprintln!("agentstream: error: {}", escape_line(&e));
            return Ok(ExitCode::from(2));
        }
    };
    let tools = ToolSet::new()
        .with(ReadTool {
            sandbox: sandbox.clone(),
        })
        .with(LsTool { sandbox });
    if args.auto_compact && args.session.is_none() && !args.continue_session {
        eprintln!("agentstream: error: --auto-compact needs a session (--session FILE or -c)");
        return Ok(ExitCode::from(2));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let recorder = match crate::session::writer_for(args.session.as_deref(), args.continue_session)
    {
        Ok(writer) => writer.map(SessionRecorder::new),
        Err(e) => {
            eprintln!("agentstream: error: {}", escape_line(&e));
            return Ok(ExitCode::from(2));
        }
    };
    let resumed = match &recorder {
        Some(recorder) => match recorder.with_writer(|w| crate::session::resume(w)) {
            Ok(resumed) => Some(resumed),
            Err(e) => {
                eprintln!("agentstream: error: {}", escape_line(&e));
                return Ok(ExitCode::from(2));
            }
        },
        None => None,
    };
    let session_level = resumed.as_ref().and_then(|r| r.thinking_level);
    let thinking = args.thinking.or(session_level);
    let context = resumed.map(|r| r.context).unwrap_or_default();
    let model: Arc<dyn Model + Send + Sync> = match (&args.base_url, &args.model) {
        (Some(base_url), Some(model_id)) => {
            let key_var = args
                .api_key_env
                .as_deref()
                .unwrap_or(args.api.default_key_env());
            match endpoint(args.api, base_url, model_id, key_var) {
                Ok(model) => Arc::from(model),
                Err(e) => {
                    eprintln!("agentstream: error: {}", escape_line(&e));
                    return Ok(ExitCode::from(2));
                }
            }
        }
        _ => match &script {
            Some(path) => match load_script(path) {
                Ok(model) => Arc::new(model),
                Err(error) => {
                    eprintln!("{}:{}", path.display(), escape_line(&error.to_string()));
                    return Ok(ExitCode::from(2));
                }
            },
            None => Arc::new(demo_model()),
        },
    };
    let agent = Agent::new(Arc::clone(&model), tools)
        .with_messages(context.messages)
        .with_options(
            AgentOptions::default()
                .with_max_turns(args.max_turns as usize)
                // The prompt and the tool results carry the wall clock,
                // as Pi's do (a script's model has none of its own).
                .with_clock(Clock::of(agentstream_tokio::Tokio)),
        );
    if args.auto_retry {
        let policy = AutoRetry::new(agentstream_tokio::Tokio)
            .with_max_retries(args.max_retries)
            .with_base_delay_ms(args.retry_base_delay_ms);
        agent.set_auto_retry(Some(policy));
    }
    agent.set_thinking_level(thinking);
    if let Some(recorder) = &recorder {
        recorder.attach(&agent);
        // The level the session goes on with, when its branch says
        // another (or none), as Pi's `setThinkingLevel` records it.
        if let Some(level) = thinking.filter(|level| Some(*level) != session_level) {
            if let Err(e) = recorder.record_thinking_level_change(level.as_str()) {
                eprintln!("agentstream: error: the session was not written: {e}");
                return Ok(ExitCode::from(2));
            }
        }
        if args.auto_compact {
            let mut settings = CompactionSettings::default();
            settings.enabled = true;
            settings.reserve_tokens = args.reserve_tokens;
            settings.keep_recent_tokens = args.keep_recent_tokens;
            let compactor = recorder.compactor(Arc::clone(&model), settings);
            let policy =
                AutoCompaction::new(compactor, args.context_window).with_settings(settings);
            agent.set_auto_compaction(Some(policy));
        }
    }
    let printer = Arc::new(Mutex::new(Printer::new(args.jsonl)));
    let events = Arc::clone(&printer);
    agent.subscribe_fn(move |event| lock(&events).event(event));
    // Ctrl-C stops the run, and a compaction going on as Pi's interactive
    // mode stops one (`abortCompaction`): the agent's abort alone does not
    // reach it.
    let stop = || {
        agent.abort();
        agent.abort_compaction();
    };
    let outcome = runtime.block_on(with_ctrl_c(agent.prompt_text(&prompt), stop));
    // A tool call past its time limit may still hold a blocking thread:
    // do not wait for it.
    runtime.shutdown_background();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("agentstream: error: {}", escape_line(&e.to_string()));
            return Ok(ExitCode::from(1));
        }
    };
    lock(&printer).finish(&outcome)?;
    if let Some(e) = recorder.as_ref().and_then(SessionRecorder::take_error) {
        eprintln!(
            "agentstream: error: the session was not written: {}",
            escape_line(&e.to_string())
        );
        return Ok(ExitCode::from(2));
    }
    Ok(match outcome.stop {
        AgentStop::Completed => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// The printer, even if a subscriber panicked while holding it.
fn lock(printer: &Mutex<Printer>) -> std::sync::MutexGuard<'_, Printer> {
    printer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `run`; Ctrl-C aborts it (the run then ends by itself).
async fn with_ctrl_c<F: std::future::Future>(run: F, abort: impl FnOnce()) -> F::Output {
    let watch = async {
        if tokio::signal::ctrl_c().await.is_ok() {
            abort();
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        output = run => output,
        () = watch => unreachable!("the watcher never finishes"),
    }
}

/// The model of `api` at `base_url`, with the key in `$key_var` if set.
fn endpoint(
    api: Api,
    base_url: &str,
    model: &str,
    key_var: &str,
) -> Result<Box<dyn Model + Send + Sync>, String> {
    let key = std::env::var(key_var).ok().filter(|key| !key.is_empty());
    if key.is_none() {
        eprintln!("agentstream: note: ${key_var} is not set; sending no API key");
    }
    let settings = Settings {
        base_url: Some(base_url.to_owned()),
        model: model.to_owned(),
        key,
        ..Settings::default()
    };
    provider::model(api, settings)
}

/// The built-in demo: turn 1 calls `read("README.md")` (the real tool, on
/// the root), turn 2 answers from what the tool returned: the file's length,
/// its first heading and its first line of prose.
fn demo_model() -> ScriptedModel {
    ScriptedModel::new([
        ScriptStep::from(assistant(
            [
                text("Let me read README.md."),
                tool_call("", "read", json!({"path": "README.md"})),
            ],
            StopReason::ToolUse,
        )),
        ScriptStep::reply(|request: &Context| {
            let answer = match request.messages.last() {
                Some(Message::ToolResult(result)) if !result.is_error => {
                    describe_readme(&result.text())
                }
                Some(Message::ToolResult(result)) => {
                    format!("I could not read README.md: {}", result.text())
                }
                _ => "I have nothing to go on.".to_owned(),
            };
            ScriptedTurn::message(assistant([text(answer)], StopReason::Stop))
        }),
    ])
}

/// The demo's answer about a README's text.
fn describe_readme(read: &str) -> String {
    let mut lines = read.lines().map(str::trim).filter(|line| !line.is_empty());
    let lines_count = read.lines().count();
    let Some(first) = lines.next() else {
        return "README.md is empty.".to_owned();
    };
    match first.strip_prefix('#') {
        Some(heading) => {
            let heading = heading.trim_start_matches('#').trim();
            match lines.find(|line| !line.starts_with('#')) {
                Some(prose) => format!(
                    "README.md has {lines_count} lines. Its title is \"{heading}\", and it begins: {prose}"
                ),
                None => format!("README.md has {lines_count} lines. Its title is \"{heading}\"."),
            }
        }
        None => format!("README.md has {lines_count} lines; it starts with: {first}"),
    }
}

/// A script file: a JSON array of turns, as `play` reads it.
fn load_script(path: &Path) -> Result<ScriptedModel, InputError> {
    let text = read_whole_file(path, MAX_WHOLE_FILE_BYTES).map_err(|e| InputError::new(1, e))?;
    if !text.trim_start().starts_with('[') {
        return Err(InputError::new(1, "$: expected a JSON array of turns"));
    }
    let turns = array_elements(&text, 0)?
        .enumerate()
        .map(|(index, element)| {
            let (line, value) = element?;
            ScriptedTurn::from_value(value)
                .map_err(|e| InputError::decode(line, &format!("$[{index}]"), &e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ScriptedModel::new(turns))
}

/// Prints the run: every event as JSON with `--jsonl`, otherwise a
/// [`Transcript`] (each turn labelled, its text, tool calls and abbreviated
/// results, and how the run ended).
struct Printer {
    jsonl: Option<Shape>,
    transcript: RefCell<Transcript>,
    out: RefCell<io::BufWriter<io::Stdout>>,
    failed: RefCell<Option<io::Error>>,
}

impl Printer {
    fn new(jsonl: Option<Shape>) -> Self {
        Self {
            jsonl,
            transcript: RefCell::new(Transcript::default()),
            out: RefCell::new(io::BufWriter::new(io::stdout())),
            failed: RefCell::new(None),
        }
    }

    fn event(&self, event: &AgentEvent) {
        if self.failed.borrow().is_some() {
            return;
        }
        let mut out = self.out.borrow_mut();
        let written = if let Some(shape) = self.jsonl {
            write_agent_event(&mut *out, event, shape)
        } else {
            self.transcript.borrow_mut().event(&mut *out, event)
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            *self.failed.borrow_mut() = Some(e);
        }
    }

    fn finish(&self, outcome: &AgentOutcome) -> io::Result<()> {
        if let Some(e) = self.failed.borrow_mut().take() {
            return Err(e);
        }
        let mut out = self.out.borrow_mut();
        if self.jsonl.is_none() {
            self.transcript.borrow_mut().finish(&mut *out, outcome)?;
        }
        out.flush()
    }
}

fn path_arg<'a>(
    args: &'a Map<String, Value>,
    default: Option<&'a str>,
) -> Result<&'a str, ToolError> {
    match args.get("path") {
        Some(Value::String(path)) => Ok(path),
        None => default.ok_or_else(|| ToolError::new("missing path")),
        Some(_) => Err(ToolError::new("path must be a string")),
    }
}

/// `read`: a file's text, cut at [`MAX_READ_BYTES`](crate::sandbox::MAX_READ_BYTES).
struct ReadTool {
    sandbox: Sandbox,
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "Read a text file, given by its path relative to the project root."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A path relative to the root."}},
            "required": ["path"]
        })
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let relative = path_arg(&args, None)?;
        let text = self.sandbox.read(relative).await.map_err(ToolError::new)?;
        Ok(ToolOutput::text(text))
    }
}

/// `ls`: a directory's entries, sorted; directories end in `/`, symlinks
/// in `@` (never followed).
struct LsTool {
    sandbox: Sandbox,
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        "List a directory, given by its path relative to the project root (default: the root)."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A path relative to the root."}}
        })
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let relative = path_arg(&args, Some("."))?;
        let text = self.sandbox.list(relative).await.map_err(ToolError::new)?;
        Ok(ToolOutput::text(text))
    }
}
