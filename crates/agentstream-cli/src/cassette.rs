//! `agentstream cassette`: a cassette directory (`serve --record DIR`)
//! looked at without a server. `ls` lists its cassettes (index, API,
//! model, status, streamed or not, the first user text); `diff` names the
//! cassette closest to a request body as a client sends it, with every
//! difference by JSON path, as a replay without a match would (see the
//! agentstream-serve crate's `cassette` module).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agentstream_serve::cassette::{closest, detect_api, list};

use crate::provider::{api_parser, Api};
use crate::terminal::escape_line;

/// Arguments of `cassette`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// One line per cassette: its index, API, model, status, `stream` or
    /// `whole`, and its first user text (cut at 60 characters).
    Ls {
        /// The cassette directory.
        dir: PathBuf,
        /// One JSON object per line instead: {"name", "api", "model",
        /// "status", "stream", "cut", "firstUserText"}.
        #[arg(long)]
        json: bool,
    },
    /// The cassette closest to REQUEST (a request body as a client sends
    /// it, of any API) and every difference of their contexts by JSON
    /// path. Exits 0 when one matches exactly, 1 when the closest
    /// differs, 2 when there is none or an input cannot be read.
    Diff {
        /// The cassette directory.
        dir: PathBuf,
        /// The request body (JSON).
        request: PathBuf,
        /// The request's API. Default: told by the body's shape
        /// (`contents` Gemini, `input` Responses, `messages` with
        /// `max_tokens` Anthropic, else OpenAI).
        #[arg(long, value_parser = api_parser())]
        api: Option<Api>,
    },
}

/// Runs `cassette`; an unreadable directory or request exits 2 with one
/// message on stderr.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    match &args.command {
        Command::Ls { dir, json } => ls(dir, *json),
        Command::Diff { dir, request, api } => diff(dir, request, *api),
    }
}

fn fail(message: &str) -> io::Result<ExitCode> {
    eprintln!("agentstream cassette: error: {}", escape_line(message));
    Ok(ExitCode::from(2))
}

fn ls(dir: &std::path::Path, json: bool) -> io::Result<ExitCode> {
    let (listings, skipped) = match list(dir) {
        Ok(found) => found,
        Err(error) => {
            let cause = std::error::Error::source(&error).map(|e| format!(": {e}"));
            return fail(&format!("{error}{}", cause.unwrap_or_default()));
        }
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    for listing in &listings {
        if json {
            writeln!(out, "{}", listing.to_json())?;
            continue;
        }
        let stream = match listing.stream {
            Some(true) => "stream",
            Some(false) => "whole",
            None => "-",
        };
        let status = if listing.cut {
            format!("{} cut", listing.status)
        } else {
            listing.status.to_string()
        };
        let line = format!(
            "{}  {}  {}  {}  {}  {}",
            listing.name,
            listing.api.pi_api(),
            listing.model.as_deref().unwrap_or("-"),
            status,
            stream,
            listing.first_user_text.as_deref().unwrap_or("-"),
        );
        writeln!(out, "{}", escape_line(&line))?;
    }
    out.flush()?;
    for skipped in skipped {
        eprintln!(
            "agentstream cassette: not a cassette: {}",
            escape_line(&skipped.to_string())
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn diff(
    dir: &std::path::Path,
    request: &std::path::Path,
    api: Option<Api>,
) -> io::Result<ExitCode> {
    let body = match std::fs::read(request) {
        Ok(body) => body,
        Err(error) => return fail(&format!("{}: cannot read: {error}", request.display())),
    };
    let api = match api {
        Some(api) => api,
        None => {
            let shape = serde_json::from_slice(&body)
                .ok()
                .and_then(|v| detect_api(&v));
            match shape {
                Some(api) => api,
                None => {
                    return fail(&format!(
                        "{}: not a request body of a known API; pass --api",
                        request.display()
                    ))
                }
            }
        }
    };
    let found = match closest(dir, api, &body) {
        Ok(found) => found,
        Err(message) => return fail(&message),
    };
    let Some(found) = found else {
        return fail(&format!("{} holds no cassette", dir.display()));
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    if found.differences.is_empty() {
        writeln!(out, "{}: matches exactly", found.name)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let count = found.differences.len();
    let plural = if count == 1 { "" } else { "s" };
    writeln!(out, "closest: {} ({count} difference{plural})", found.name)?;
    for d in &found.differences {
        let line = format!(
            "{}: cassette {} | request {}",
            d.path, d.recorded, d.requested
        );
        writeln!(out, "  {}", escape_line(&line))?;
    }
    out.flush()?;
    Ok(ExitCode::from(1))
}
