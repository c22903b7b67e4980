//! `agentstream decode`: projects a recorded response of any `--api`
//! (OpenAI-compatible, Anthropic Messages, OpenAI Responses, Gemini)
//! offline and prints its trace, the way `play` does. A cassette's
//! exchange (`serve --record DIR` writes `DIR/0000`, …) is read as its
//! `response.body`, in the protocol its `request.json` names.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentstream::message::AssistantMessage;
use agentstream::message::ContentBlock;
use agentstream::model::{validate_events, ErrorCause, ModelEvent};
use agentstream_wire::config::Protocol;
use agentstream_wire::http::ResponseStream;
use agentstream_wire::limits::{Limit, LimitExceeded, Limits};
use agentstream_wire::sse::{SseEvent, SseProjector, SseStream};
use agentstream_wire::ProtocolVisitor;

use crate::input::{read_line_bounded, LineRead};
use crate::jsonl::{write_model_event, Shape};
use crate::provider::{api_parser, Api};
use crate::terminal::{escape_controls, escape_line};

/// The model and provider names given to recorded responses.
const RECORDED: &str = "recorded";

/// Arguments of `decode`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A recorded response body: Server-Sent Events, or with `--chunks` one
    /// payload per line; or a cassette's exchange directory (`serve
    /// --record DIR` writes `DIR/0000`, …), whose `response.body` is read.
    file: PathBuf,
    /// The protocol of the recording. Default: for a cassette's exchange
    /// (the directory, or its `response.body`), the one its
    /// `request.json` names by the request's path; else openai.
    #[arg(long, value_parser = api_parser())]
    api: Option<Api>,
    /// FILE holds one payload per line instead of SSE (a
    /// `chat.completion.chunk` or `[DONE]` for OpenAI, an event's `data`
    /// JSON for Anthropic and Responses, a `GenerateContentResponse` for
    /// Google); blank lines are skipped, and invalid UTF-8
    /// becomes U+FFFD as in SSE mode.
    #[arg(long)]
    chunks: bool,
    /// Print every event as one JSON line instead of the summary:
    /// `--jsonl` in Pi's shape (every event carries the whole message so
    /// far, so the output grows with the square of the answer),
    /// `--jsonl=compact` without it (linear; the final event keeps the
    /// complete message).
    #[arg(long, value_enum, value_name = "SHAPE", num_args = 0..=1,
          require_equals = true, default_missing_value = "pi")]
    jsonl: Option<Shape>,
}

/// Runs `decode`. Unreadable input is reported as `FILE:LINE: error: …`
/// and exits 2; an event sequence that breaks the protocol (a bug) is
/// reported on stderr and exits 1.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let Source { body, api, whole } = match source(args) {
        Ok(source) => source,
        Err((name, text)) => {
            eprintln!("{name}:1: error: {}", escape_line(&text));
            return Ok(ExitCode::from(2));
        }
    };
    let name = body.display().to_string();
    let projected = match whole {
        true => project_whole(&body, api),
        false => project(&body, api, args.chunks),
    };
    let events = match projected {
        Ok(events) => events,
        Err((line, text)) => {
            eprintln!("{name}:{line}: error: {}", escape_line(&text));
            return Ok(ExitCode::from(2));
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if let Some(shape) = args.jsonl {
        for event in &events {
            write_model_event(&mut out, event, shape)?;
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
    // A recording that could not be decoded (not an event stream, not
    // JSON, cut short) is a failure, though its trace is printed; a
    // provider's error the recording holds is what it recorded.
    let undecodable = events
        .last()
        .and_then(ModelEvent::error_cause)
        .is_some_and(|cause| matches!(cause, ErrorCause::Protocol));
    if undecodable {
        let message = events
            .last()
            .and_then(ModelEvent::terminal_message)
            .and_then(|m| m.error_message.as_deref())
            .unwrap_or("cannot be decoded");
        eprintln!("{name}: error: {}", escape_line(message));
    }
    Ok(if findings.is_empty() && !undecodable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Text from the recording, escaped when stdout is a terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    if io::stdout().is_terminal() {
        escape_controls(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// The final text, then one line per thinking block (its length and its
/// signature's, or `redacted`), one line per tool call, the stop reason,
/// usage (`cacheWrite` only when not zero) and the error message.
fn summary(out: &mut impl Write, message: &AssistantMessage) -> io::Result<()> {
    writeln!(out, "{}", printable(&message.text()))?;
    for block in &message.content {
        if let ContentBlock::Thinking(t) = block {
            let signature = t.thinking_signature.as_deref().map_or(0, str::len);
            if t.redacted == Some(true) {
                writeln!(out, "thinking: redacted, data {signature} bytes")?;
            } else {
                let chars = t.thinking.chars().count();
                writeln!(out, "thinking: {chars} chars, signature {signature} bytes")?;
            }
        }
    }
    for call in message.tool_calls() {
        let arguments = serde_json::to_string(&call.arguments).map_err(io::Error::other)?;
        let (id, name) = (escape_line(&call.id), escape_line(&call.name));
        writeln!(out, "toolCall: {id} {name} {arguments}")?;
    }
    writeln!(out, "stopReason: {}", message.stop_reason)?;
    write_usage(out, &message.usage)?;
    if let Some(error) = &message.error_message {
        writeln!(out, "errorMessage: {}", escape_line(error))?;
    }
    Ok(())
}

/// The file `decode` reads for `args.file` (a cassette exchange's
/// `response.body` for its directory) and its protocol: `--api`, else a
/// cassette's (from the `path` in its `request.json`), else OpenAI; or the
/// file and text of an error.
fn source(args: &Args) -> Result<Source, (String, String)> {
    let (body, api, exchange) = source_of(args)?;
    // A cassette of a call that did not stream holds its whole answer.
    let whole = !args.chunks
        && exchange.is_some_and(|dir| {
            std::fs::read(dir.join("request.json"))
                .ok()
                .and_then(|text| serde_json::from_slice::<serde_json::Value>(&text).ok())
                .is_some_and(|request| request.get("stream") == Some(&false.into()))
        });
    Ok(Source { body, api, whole })
}

/// What `decode` reads: the body's file, its protocol, and whether it is
/// a whole answer (a cassette of a call that did not stream).
struct Source {
    body: PathBuf,
    api: Api,
    whole: bool,
}

/// The body file, its protocol and the cassette exchange it is in.
fn source_of(args: &Args) -> Result<(PathBuf, Api, Option<PathBuf>), (String, String)> {
    let (body, exchange) = if args.file.is_dir() {
        (args.file.join("response.body"), Some(args.file.as_path()))
    } else {
        let in_cassette = args.file.file_name().is_some_and(|n| n == "response.body");
        (
            args.file.clone(),
            args.file.parent().filter(|_| in_cassette),
        )
    };
    let exchange = exchange.map(Path::to_path_buf);
    if let Some(api) = args.api {
        return Ok((body, api, exchange));
    }
    let Some(exchange) = exchange else {
        return Ok((body, Api::OpenAi, None));
    };
    let request = exchange.join("request.json");
    let name = request.display().to_string();
    let text = match std::fs::read_to_string(&request) {
        Ok(text) => text,
        // A `response.body` outside a cassette is a plain recording.
        Err(_) if !args.file.is_dir() => return Ok((body, Api::OpenAi, None)),
        Err(e) => return Err((name, format!("cannot read file: {e}"))),
    };
    let path = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|request| request.get("path")?.as_str().map(str::to_owned));
    let api = match path.as_deref().and_then(Api::from_path) {
        Some(api) => api,
        None => {
            let text = format!(
                "the cassette request's path {} names no protocol decode reads; pass --api",
                path.as_deref()
                    .map_or_else(|| "(missing)".into(), escape_line)
            );
            return Err((name, text));
        }
    };
    Ok((body, api, Some(exchange)))
}

/// The events of a whole answer (a call that did not stream), read as the
/// stream it would have been (see
/// [`whole_as_events`](agentstream_wire::replay::whole_as_events)); an
/// error body, or anything not the API's answer, is read as a stream
/// (which says what it is).
fn project_whole(path: &Path, api: Api) -> Result<Vec<ModelEvent>, (usize, String)> {
    let limits = Limits::DEFAULT;
    let file = File::open(path).map_err(|e| (1, format!("cannot read file: {e}")))?;
    let mut body = Vec::new();
    io::Read::read_to_end(
        &mut io::Read::take(file, limits.max_response_bytes.saturating_add(1)),
        &mut body,
    )
    .map_err(|e| (1, format!("cannot read file: {e}")))?;
    if body.len() as u64 > limits.max_response_bytes {
        let text = LimitExceeded::new(Limit::ResponseBytes, &limits);
        return Err((1, text.to_string()));
    }
    let Some(events) = agentstream_wire::replay::whole_as_events(api, &body) else {
        return project(path, api, false);
    };
    let mut stream = api.visit(SseStreamOf(limits));
    let mut out: Vec<ModelEvent> = stream.feed(&events).collect();
    out.extend(stream.finish_input());
    Ok(out)
}

/// The events of the recording, or the line and text of an input error.
///
/// The file is read a line at a time, so its size is bounded only by the
/// [`Limits`] of a response, which refuse a line, an event or a body
/// beyond them with `FILE:LINE: error: response limit exceeded: …`.
fn project(path: &Path, api: Api, chunks: bool) -> Result<Vec<ModelEvent>, (usize, String)> {
    let file = File::open(path).map_err(|e| (1, format!("cannot read file: {e}")))?;
    let mut reader = BufReader::new(file);
    let limits = Limits::DEFAULT;
    let mut buf = Vec::new();
    let mut events = Vec::new();
    let mut number = 0;
    // The next line into `buf` (at most `max` bytes) and its number;
    // `None` at the end of the file.
    let mut next_line = |buf: &mut Vec<u8>, max: usize| {
        number += 1;
        match read_line_bounded(&mut reader, buf, max) {
            Ok(LineRead::End) => Ok(None),
            Ok(LineRead::Line | LineRead::TooLong) => Ok(Some(number)),
            Err(e) => Err((number, format!("cannot read file: {e}"))),
        }
    };
    if !chunks {
        let mut stream = api.visit(SseStreamOf(limits));
        // One byte more than the line limit: the stream sees the line is
        // too long and says so.
        while let Some(line) = next_line(&mut buf, limits.max_line_bytes.saturating_add(1))? {
            events.extend(stream.feed(&buf));
            if stream.is_finished() {
                return limit_error(line, events);
            }
        }
        events.extend(stream.finish_input());
        return Ok(events);
    }
    let mut projector = api.visit(ProjectorOf);
    projector.set_limits(limits);
    while let Some(line) = next_line(&mut buf, limits.max_event_data_bytes)? {
        if buf.len() > limits.max_event_data_bytes && buf.last() != Some(&b'\n') {
            let text = LimitExceeded::new(Limit::EventDataBytes, &limits);
            return Err((line, text.to_string()));
        }
        // Invalid UTF-8 (a sequence cut short, a stray byte) becomes
        // U+FFFD, as in SSE mode.
        let text = String::from_utf8_lossy(&buf);
        let text: &str = &text;
        // As in an SSE body: a leading byte order mark is not content.
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        let text = text.trim_matches([' ', '\t', '\n', '\r']);
        if text.is_empty() || projector.is_finished() {
            // Payloads after `[DONE]` are ignored, as in SSE mode.
            continue;
        }
        if api != Api::OpenAi || text != "[DONE]" {
            serde_json::from_str::<&serde_json::value::RawValue>(text)
                .map_err(|e| (line, format!("not a JSON chunk payload: {e}")))?;
        }
        projector.push_event(&SseEvent::message(text), &mut events);
        if projector.is_finished() {
            events = limit_error(line, events)?;
        }
    }
    projector.finish(&mut events);
    Ok(events)
}

/// `events` if they end well; a limit error at `line` if a limit ended them.
fn limit_error(line: usize, events: Vec<ModelEvent>) -> Result<Vec<ModelEvent>, (usize, String)> {
    let error = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .and_then(|message| message.error_message.as_deref())
        .filter(|text| text.starts_with("response limit exceeded"));
    match error {
        Some(text) => Err((line, text.to_string())),
        None => Ok(events),
    }
}

/// The SSE stream of the projector `P` with `limits`.
/// A protocol's SSE stream with `limits`, for a body.
struct SseStreamOf(Limits);

impl ProtocolVisitor for SseStreamOf {
    type Output = Box<dyn ResponseStream>;

    fn visit<P: Protocol + Send + Sync + 'static>(self, _: P) -> Self::Output {
        Box::new(SseStream::<P::Projector>::new(RECORDED, RECORDED, None).with_limits(self.0))
    }
}

/// A protocol's projector, for `--chunks`: each line is the data of one
/// event.
struct ProjectorOf;

impl ProtocolVisitor for ProjectorOf {
    type Output = Box<dyn SseProjector>;

    fn visit<P: Protocol + Send + Sync + 'static>(self, _: P) -> Self::Output {
        Box::new(P::Projector::for_model(RECORDED.into(), RECORDED.into()))
    }
}

/// The `usage:` line `decode` and `chat` print: input, output and cache
/// read tokens, the cache write ones when there are any, and the total
/// (`-` when the provider sent none).
pub(crate) fn write_usage(
    out: &mut impl Write,
    usage: &agentstream::message::Usage,
) -> io::Result<()> {
    let total = usage
        .total_tokens
        .map_or_else(|| "-".to_string(), |t| t.to_string());
    let cache_write = if usage.cache_write == 0 {
        String::new()
    } else {
        format!(" cacheWrite={}", usage.cache_write)
    };
    writeln!(
        out,
        "usage: input={} output={} cacheRead={}{cache_write} totalTokens={total}",
        usage.input, usage.output, usage.cache_read
    )
}
