//! `agentstream decode`: projects a recorded OpenAI-compatible response
//! offline and prints its trace, the way `play` does.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agentstream::message::AssistantMessage;
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::openai::{ChunkProjector, OpenAiStream};

/// The model and provider names given to recorded responses.
const RECORDED: &str = "recorded";

/// Arguments of `decode`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A recorded response body: Server-Sent Events, or with `--chunks` one
    /// chunk payload (JSON, or `[DONE]`) per line.
    file: PathBuf,
    /// FILE holds one `chat.completion.chunk` payload per line instead of
    /// SSE; blank lines are skipped.
    #[arg(long)]
    chunks: bool,
    /// Print every event as one JSON line in Pi's shape instead of the
    /// summary.
    #[arg(long)]
    jsonl: bool,
}

/// Runs `decode`. Unreadable input is reported as `FILE:LINE: error: …`
/// and exits 2; an event sequence that breaks the protocol (a bug) is
/// reported on stderr and exits 1.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let name = args.file.display().to_string();
    let events = match project(args) {
        Ok(events) => events,
        Err((line, text)) => {
            eprintln!("{name}:{line}: error: {text}");
            return Ok(ExitCode::from(2));
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.jsonl {
        for event in &events {
            serde_json::to_writer(&mut out, event)?;
            writeln!(out)?;
        }
    } else {
        let types: Vec<&str> = events.iter().map(ModelEvent::type_name).collect();
        writeln!(out, "{}", types.join(" → "))?;
        if let Some(message) = events.last().and_then(ModelEvent::terminal_message) {
            summary(&mut out, message)?;
        }
    }
    out.flush()?;
    let findings = validate_events(&events);
    for finding in &findings {
        eprintln!(
            "{name}: protocol: event {}: {finding}",
            finding.message_index
        );
    }
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The final text, then one line per tool call, the stop reason, usage and
/// the error message.
fn summary(out: &mut impl Write, message: &AssistantMessage) -> io::Result<()> {
    writeln!(out, "{}", message.text())?;
    for call in message.tool_calls() {
        let arguments = serde_json::to_string(&call.arguments).map_err(io::Error::other)?;
        writeln!(out, "toolCall: {} {} {arguments}", call.id, call.name)?;
    }
    writeln!(out, "stopReason: {}", message.stop_reason)?;
    let usage = &message.usage;
    let total = usage
        .total_tokens
        .map_or_else(|| "-".to_string(), |t| t.to_string());
    writeln!(
        out,
        "usage: input={} output={} cacheRead={} totalTokens={total}",
        usage.input, usage.output, usage.cache_read
    )?;
    if let Some(error) = &message.error_message {
        writeln!(out, "errorMessage: {error}")?;
    }
    Ok(())
}

/// The events of the recording, or the line and text of an input error.
fn project(args: &Args) -> Result<Vec<ModelEvent>, (usize, String)> {
    let bytes = std::fs::read(&args.file).map_err(|e| (1, format!("cannot read file: {e}")))?;
    if !args.chunks {
        let mut stream = OpenAiStream::new(RECORDED, RECORDED, None);
        let mut events: Vec<ModelEvent> = stream.feed(&bytes).collect();
        events.extend(stream.finish_input());
        return Ok(events);
    }
    let mut projector = ChunkProjector::new(RECORDED, RECORDED);
    let mut events = Vec::new();
    for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = std::str::from_utf8(line)
            .map_err(|e| (number + 1, format!("invalid UTF-8: {e}")))?
            .trim();
        if line.is_empty() {
            continue;
        }
        if line != "[DONE]" {
            serde_json::from_str::<&serde_json::value::RawValue>(line)
                .map_err(|e| (number + 1, format!("not a JSON chunk payload: {e}")))?;
        }
        projector.push_data(line, &mut events);
    }
    projector.finish(&mut events);
    Ok(events)
}
