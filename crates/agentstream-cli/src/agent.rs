//! `agentstream agent`: the agent loop with two read-only tools, `read` and
//! `ls`, confined to a root directory, against a script, the built-in demo
//! or an OpenAI-compatible endpoint.

use std::cell::RefCell;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use agentstream::agent::{
    run_agent, AgentEvent, AgentOptions, AgentOutcome, AgentStop, AgentTool, ToolContext,
    ToolError, ToolOutput, ToolSet,
};
use agentstream::message::{assistant, text, tool_call, user, Context, Message, StopReason};
use agentstream::model::{AbortController, ScriptStep, ScriptedModel, ScriptedTurn};
use agentstream_tokio::OpenAiCompatModel;
use agentstream_wire::http::error_report;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::{json, Map, Value};

use crate::input::{array_elements, read_whole_file, InputError, MAX_WHOLE_FILE_BYTES};
use crate::terminal::{escape_controls, escape_line};

/// The most bytes `read` returns of a file; the rest is cut with a note.
pub const MAX_READ_BYTES: usize = 64 * 1024;
/// The most entries `ls` lists; the rest is cut with a note.
pub const MAX_LS_ENTRIES: usize = 1000;
/// How many characters of a tool's result the summary shows.
const SHOWN_RESULT_CHARS: usize = 200;

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
    /// Paths that leave it are refused.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print every agent event as one JSON line in Pi's shape.
    #[arg(long)]
    jsonl: bool,
    /// Run against an OpenAI-compatible endpoint at this base URL.
    #[arg(long, value_name = "URL", requires = "model")]
    base_url: Option<String>,
    /// The model id (with `--base-url`).
    #[arg(long, value_name = "ID", requires = "base_url")]
    model: Option<String>,
    /// The environment variable holding the API key (with `--base-url`).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    /// The most model calls of the run (1 to 1000).
    #[arg(long, value_name = "N", default_value = "20",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_turns: u32,
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
    let root = match Root::new(args.root.as_deref()) {
        Ok(root) => root,
        Err(e) => {
            eprintln!("agentstream: error: {}", escape_line(&e));
            return Ok(ExitCode::from(2));
        }
    };
    let tools = ToolSet::new()
        .with(ReadTool { root: root.clone() })
        .with(LsTool { root });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let controller = AbortController::new();
    let options = AgentOptions::default()
        .with_max_turns(args.max_turns as usize)
        .with_signal(controller.signal());
    let context = Context::default();
    let prompts = vec![user(prompt).into()];
    let printer = Printer::new(args.jsonl);
    let emit = |event: AgentEvent| printer.event(&event);
    let outcome = match (&args.base_url, &args.model) {
        (Some(base_url), Some(model_id)) => {
            let model = match endpoint(base_url, model_id, &args.api_key_env) {
                Ok(model) => model,
                Err(e) => {
                    eprintln!("agentstream: error: {}", escape_line(&e));
                    return Ok(ExitCode::from(2));
                }
            };
            runtime.block_on(with_ctrl_c(
                run_agent(&model, &tools, context, prompts, options, emit),
                &controller,
            ))
        }
        _ => {
            let model = match &script {
                Some(path) => match load_script(path) {
                    Ok(model) => model,
                    Err(error) => {
                        eprintln!("{}:{}", path.display(), escape_line(&error.to_string()));
                        return Ok(ExitCode::from(2));
                    }
                },
                None => demo_model(),
            };
            runtime.block_on(run_agent(&model, &tools, context, prompts, options, emit))
        }
    };
    printer.finish(&outcome)?;
    Ok(match outcome.stop {
        AgentStop::Completed => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// Runs `run`; Ctrl-C aborts it (the run then ends by itself).
async fn with_ctrl_c<F: std::future::Future>(run: F, controller: &AbortController) -> F::Output {
    let watch = async {
        if tokio::signal::ctrl_c().await.is_ok() {
            controller.abort();
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        output = run => output,
        () = watch => unreachable!("the watcher never finishes"),
    }
}

fn endpoint(base_url: &str, model: &str, key_var: &str) -> Result<OpenAiCompatModel, String> {
    let mut config = OpenAiConfig::new(base_url, model);
    match std::env::var(key_var) {
        Ok(key) if !key.is_empty() => config = config.with_api_key(key),
        _ => eprintln!("agentstream: note: ${key_var} is not set; sending no API key"),
    }
    OpenAiCompatModel::new(config).map_err(|e| error_report(&e))
}

/// The built-in demo: turn 1 calls `read("README.md")`, turn 2 answers
/// with what the tool returned.
fn demo_model() -> ScriptedModel {
    ScriptedModel::new([
        ScriptStep::from(assistant(
            [
                text("Let me read the README."),
                tool_call("", "read", json!({"path": "README.md"})),
            ],
            StopReason::ToolUse,
        )),
        ScriptStep::reply(|request: &Context| {
            let answer = match request.messages.last() {
                Some(Message::ToolResult(result)) if !result.is_error => {
                    let read = result
                        .content
                        .first()
                        .and_then(|block| block.as_text())
                        .unwrap_or_default();
                    let first = read
                        .lines()
                        .find(|line| !line.trim().is_empty())
                        .unwrap_or("(an empty file)");
                    format!(
                        "README.md has {} lines; it starts with: {}",
                        read.lines().count(),
                        first.trim()
                    )
                }
                Some(Message::ToolResult(result)) => format!(
                    "I could not read README.md: {}",
                    result
                        .content
                        .first()
                        .and_then(|block| block.as_text())
                        .unwrap_or_default()
                ),
                _ => "I have nothing to go on.".to_owned(),
            };
            ScriptedTurn::message(assistant([text(answer)], StopReason::Stop))
        }),
    ])
}

/// A script file: a JSON array of turns, as `play` reads it.
fn load_script(path: &Path) -> Result<ScriptedModel, InputError> {
    let text = read_whole_file(path, MAX_WHOLE_FILE_BYTES).map_err(|e| InputError::new(1, e))?;
    if !text.trim_start().starts_with('[') {
        return Err(InputError::new(1, "$: expected a JSON array of turns"));
    }
    let turns = array_elements(&text, 0)?
        .into_iter()
        .enumerate()
        .map(|(index, (line, value))| {
            ScriptedTurn::from_value(value)
                .map_err(|e| InputError::decode(line, &format!("$[{index}]"), &e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ScriptedModel::new(turns))
}

/// Prints the run: every event as JSON with `--jsonl`, otherwise each tool
/// call, its abbreviated result and the final text.
struct Printer {
    jsonl: bool,
    out: RefCell<io::BufWriter<io::Stdout>>,
    failed: RefCell<Option<io::Error>>,
}

impl Printer {
    fn new(jsonl: bool) -> Self {
        Self {
            jsonl,
            out: RefCell::new(io::BufWriter::new(io::stdout())),
            failed: RefCell::new(None),
        }
    }

    fn event(&self, event: &AgentEvent) {
        if self.failed.borrow().is_some() {
            return;
        }
        let mut out = self.out.borrow_mut();
        let written = if self.jsonl {
            serde_json::to_writer(&mut *out, event)
                .map_err(io::Error::other)
                .and_then(|()| writeln!(out))
        } else {
            summary_line(&mut *out, event)
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
        if !self.jsonl {
            if let Some(Message::Assistant(last)) = outcome.messages.last() {
                writeln!(out, "{}", escape_controls(&last.text()))?;
                if let Some(error) = &last.error_message {
                    writeln!(out, "errorMessage: {}", escape_line(error))?;
                }
            }
            match outcome.stop {
                AgentStop::Completed => {}
                AgentStop::MaxTurns => writeln!(out, "stopped: the turn limit was reached")?,
                AgentStop::Aborted => writeln!(out, "stopped: aborted")?,
                _ => writeln!(out, "stopped: the model call failed")?,
            }
        }
        out.flush()
    }
}

fn summary_line(out: &mut impl Write, event: &AgentEvent) -> io::Result<()> {
    match event {
        AgentEvent::ToolExecutionStart {
            tool_name, args, ..
        } => writeln!(
            out,
            "→ {}({})",
            escape_line(tool_name),
            escape_line(&args.to_string())
        ),
        AgentEvent::ToolExecutionEnd {
            tool_name,
            result,
            is_error,
            ..
        } => {
            let text: String = result
                .content
                .iter()
                .filter_map(|block| block.as_text())
                .collect::<Vec<_>>()
                .join("\n");
            let marker = if *is_error { " (error)" } else { "" };
            writeln!(
                out,
                "← {}{marker}: {}",
                escape_line(tool_name),
                escape_line(&abbreviate(&text))
            )
        }
        _ => Ok(()),
    }
}

/// The first [`SHOWN_RESULT_CHARS`] characters of `text`, with a count of
/// the rest.
fn abbreviate(text: &str) -> String {
    let total = text.chars().count();
    if total <= SHOWN_RESULT_CHARS {
        return text.to_owned();
    }
    let shown: String = text.chars().take(SHOWN_RESULT_CHARS).collect();
    format!("{shown}… ({} more characters)", total - SHOWN_RESULT_CHARS)
}

/// The directory the tools are confined to, canonicalized.
#[derive(Debug, Clone)]
struct Root(PathBuf);

impl Root {
    fn new(dir: Option<&Path>) -> Result<Self, String> {
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
        };
        let canonical = dir
            .canonicalize()
            .map_err(|e| format!("--root {}: {e}", dir.display()))?;
        if !canonical.is_dir() {
            return Err(format!("--root {}: not a directory", dir.display()));
        }
        Ok(Self(canonical))
    }

    /// The canonical path of `relative` inside the root, or why it is
    /// refused: an absolute path, a `..` component, or a path that
    /// resolves (through a symlink) outside the root. Nothing outside the
    /// root is ever opened.
    fn resolve(&self, relative: &str) -> Result<PathBuf, String> {
        let path = Path::new(relative);
        if relative.is_empty() {
            return Err("empty path".into());
        }
        for component in path.components() {
            match component {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!("refused: {relative}: \"..\" leaves the root"))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "refused: {relative}: absolute paths are not allowed; give a path relative to the root"
                    ))
                }
            }
        }
        let canonical = self
            .0
            .join(path)
            .canonicalize()
            .map_err(|e| format!("{relative}: {e}"))?;
        if !canonical.starts_with(&self.0) {
            return Err(format!(
                "refused: {relative}: resolves outside the root (through a symlink)"
            ));
        }
        Ok(canonical)
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

/// `read`: a file's text, cut at [`MAX_READ_BYTES`].
struct ReadTool {
    root: Root,
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
        let path = self.root.resolve(relative).map_err(ToolError::new)?;
        if !path.is_file() {
            return Err(ToolError::new(format!("{relative}: not a file")));
        }
        read_capped(&path, relative)
    }
}

fn read_capped(path: &Path, relative: &str) -> Result<ToolOutput, ToolError> {
    use std::io::Read;
    let file = fs::File::open(path).map_err(|e| ToolError::new(format!("{relative}: {e}")))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::new(format!("{relative}: {e}")))?;
    let cut = bytes.len() > MAX_READ_BYTES;
    bytes.truncate(MAX_READ_BYTES);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        // A character split at the cut shows as U+FFFD; drop it.
        if text.ends_with('\u{fffd}') {
            text.pop();
        }
        text.push_str(&format!(
            "\n[cut: showing the first {MAX_READ_BYTES} of {size} bytes]"
        ));
    }
    Ok(ToolOutput::text(text))
}

/// `ls`: a directory's entries, sorted; directories end in `/`, symlinks
/// in `@` (never followed).
struct LsTool {
    root: Root,
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
        let path = self.root.resolve(relative).map_err(ToolError::new)?;
        let entries =
            fs::read_dir(&path).map_err(|e| ToolError::new(format!("{relative}: {e}")))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ToolError::new(format!("{relative}: {e}")))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_symlink() => name.push('@'),
                Ok(kind) if kind.is_dir() => name.push('/'),
                _ => {}
            }
            names.push(name);
        }
        names.sort();
        let total = names.len();
        names.truncate(MAX_LS_ENTRIES);
        let mut text = names.join("\n");
        if total > MAX_LS_ENTRIES {
            text.push_str(&format!(
                "\n[cut: showing {MAX_LS_ENTRIES} of {total} entries]"
            ));
        }
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviate_keeps_short_text_and_counts_the_rest() {
        assert_eq!(abbreviate("short"), "short");
        let long = "é".repeat(SHOWN_RESULT_CHARS + 5);
        assert!(abbreviate(&long).ends_with("… (5 more characters)"));
    }
}
