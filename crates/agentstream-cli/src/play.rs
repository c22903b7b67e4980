//! `agentstream play`: plays scripted turns through a `ScriptedModel` and
//! prints each call's trace.

use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentstream::message::{user, Context};
use agentstream::model::{
    AbortController, Model, ModelEvent, ScriptedModel, ScriptedTurn, StreamOptions,
};
use futures_util::StreamExt;
use serde_json::Value;

use crate::decode::printable;
use crate::input::{array_elements, read_whole_file, InputError, MAX_WHOLE_FILE_BYTES};
use crate::jsonl::{write_model_event, Shape};
use crate::terminal::escape_line;

/// The most calls `--calls` makes: the scripted model keeps a copy of every
/// context it was sent, so the count bounds the memory a run holds.
const MAX_CALLS: i64 = 100_000;

/// The built-in demo: a tool-call turn, then a text turn.
const DEMO: &str = include_str!("../../../examples/two-turns.json");

/// Arguments of `play`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A JSON array of turns: assistant messages in Pi's JSON (`api`,
    /// `provider`, `model`, `usage` and `timestamp` may be left out), plain
    /// strings (a text turn that stops), or failures `{"stopReason":
    /// "error"|"aborted", "errorMessage", "partialText"?}`.
    /// Without it, a built-in demo of two calls plays.
    script: Option<PathBuf>,
    /// Make N calls (1 to 100000), each with a one-message user context
    /// (default: one call per turn; more calls than turns shows the script
    /// running out).
    #[arg(long, value_name = "N", conflicts_with = "contexts",
          value_parser = clap::value_parser!(u32).range(1..=MAX_CALLS))]
    calls: Option<u32>,
    /// A JSON array of contexts (`{"systemPrompt"?, "messages", "tools"?}`):
    /// one call per context.
    #[arg(long, value_name = "CONTEXTS.json")]
    contexts: Option<PathBuf>,
    /// Abort the shared signal before the K-th call (1-based), so that call
    /// and the later ones are cancelled before they start.
    #[arg(long, value_name = "K")]
    abort_call: Option<NonZeroUsize>,
    /// Split texts and tool arguments into up to N deltas.
    #[arg(long, value_name = "N")]
    chunks: Option<NonZeroUsize>,
    /// Emit the full protocol (`text_start`, `text_end`, ...).
    #[arg(long)]
    full: bool,
    /// Print every event as one JSON line instead of the summary:
    /// `--jsonl` in Pi's shape (every event carries the whole message so
    /// far, so the output grows with the square of the answer),
    /// `--jsonl=compact` without it (linear; the final event keeps the
    /// complete message).
    #[arg(long, value_enum, value_name = "SHAPE", num_args = 0..=1,
          require_equals = true, default_missing_value = "pi")]
    jsonl: Option<Shape>,
}

/// Runs `play`. Bad input is reported on stderr and exits 2.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let (turns, contexts) = match load(args) {
        Ok(loaded) => loaded,
        Err((file, error)) => {
            eprintln!("{file}:{}", escape_line(&error.to_string()));
            return Ok(ExitCode::from(2));
        }
    };
    let model = ScriptedModel::new(turns);
    // Scripted streams drive their own producer, so any executor plays them;
    // the CLI already links tokio for `chat`, and its current-thread runtime
    // (no timer or I/O driver: nothing here needs one) is the executor the
    // binary has, rather than a hand-written one or another dependency.
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let controller = AbortController::new();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    for (call, context) in contexts.enumerate() {
        if args.abort_call.is_some_and(|k| k.get() == call + 1) {
            controller.abort();
        }
        let options = StreamOptions::default().with_signal(controller.signal());
        let mut stream = model.stream(&context, options);
        let (events, result) = runtime.block_on(async {
            let events: Vec<ModelEvent> = stream.by_ref().collect().await;
            (events, stream.result().await)
        });
        if let Some(shape) = args.jsonl {
            for event in &events {
                write_model_event(&mut out, event, shape)?;
            }
            continue;
        }
        let types: Vec<&str> = events.iter().map(ModelEvent::type_name).collect();
        writeln!(out, "{}", types.join(" → "))?;
        writeln!(out, "{}", printable(&result.text()))?;
        if let Some(error) = &result.error_message {
            writeln!(out, "errorMessage: {}", escape_line(error))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The contexts of the calls, one at a time: `--calls N` builds each as
/// its call comes.
type Contexts = Box<dyn Iterator<Item = Context>>;

/// The turns and the contexts to play, or the file and error to report.
fn load(args: &Args) -> Result<(Vec<ScriptedTurn>, Contexts), (String, InputError)> {
    let (name, text) = match &args.script {
        Some(path) => (path.display().to_string(), read(path)?),
        None => ("<built-in demo>".to_string(), DEMO.to_string()),
    };
    let turns = parse_array(&name, &text, "turns", |value| {
        ScriptedTurn::from_value(value)
    })?;
    let turns: Vec<ScriptedTurn> = turns
        .into_iter()
        .map(|turn| {
            let turn = match args.chunks {
                Some(chunks) => turn.chunked(chunks),
                None => turn,
            };
            if args.full {
                turn.full_sequence()
            } else {
                turn
            }
        })
        .collect();
    let contexts = match (&args.contexts, args.calls) {
        (Some(path), _) => {
            let name = path.display().to_string();
            let text = read(path)?;
            let contexts = parse_array(&name, &text, "contexts", Context::from_value)?;
            Box::new(contexts.into_iter()) as Contexts
        }
        (None, calls) => {
            let calls = calls.map_or(turns.len(), |n| n as usize);
            Box::new(
                (1..=calls)
                    .map(|call| Context::from_messages([user(format!("call {call}")).into()])),
            )
        }
    };
    Ok((turns, contexts))
}

pub(crate) fn read(path: &Path) -> Result<String, (String, InputError)> {
    read_whole_file(path, MAX_WHOLE_FILE_BYTES)
        .map_err(|text| (path.display().to_string(), InputError::new(1, text)))
}

/// Parses a JSON array whose elements `decode` turns into `T`, naming the
/// file, line and JSON path of the first bad element.
pub(crate) fn parse_array<T>(
    name: &str,
    text: &str,
    what: &str,
    decode: impl Fn(Value) -> Result<T, agentstream::message::DecodeError>,
) -> Result<Vec<T>, (String, InputError)> {
    let fail = |error| (name.to_string(), error);
    if !text.trim_start().starts_with('[') {
        return Err(fail(InputError::new(
            1,
            format!("$: expected a JSON array of {what}"),
        )));
    }
    // Each element's JSON tree is dropped once decoded (a long script
    // never has every element's tree alive at once).
    array_elements(text, 0)
        .map_err(fail)?
        .enumerate()
        .map(|(index, element)| {
            let (line, value) = element.map_err(fail)?;
            decode(value).map_err(|e| fail(InputError::decode(line, &format!("$[{index}]"), &e)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_script_parses() {
        let turns = parse_array("demo", DEMO, "turns", ScriptedTurn::from_value).unwrap();
        assert_eq!(turns.len(), 2);
    }
}
