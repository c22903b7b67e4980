//! `agentstream serve`: a script served as an OpenAI-compatible and
//! Anthropic-compatible endpoint (see the `agentstream-serve` crate).

use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentstream_serve::{ServeTurn, Server};
use agentstream_wire::http::error_report;

use crate::play::{parse_array, read};
use crate::terminal::escape_line;

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A JSON array of turns, as `play` reads them, plus
    /// `{"httpError": {"status", "message", "type"?, "retryAfter"?}}`,
    /// `{"turn", "streamError": {"message", "type"?}, "afterEvents": N}` and
    /// `{"turn", "cutAfterEvents": N}` and `{"byRequest": [{"ifContains"?,
    /// "turn"}, ...]}` (the first alternative whose text occurs in the
    /// request's last message). A call past the last turn gets HTTP
    /// 500 with the provider's error body and the message "ScriptedModel
    /// has no more responses".
    script: PathBuf,
    /// The port (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The address to listen on; loopback unless asked.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Split every text, thinking and tool-argument delta into up to N SSE
    /// chunks.
    #[arg(long, value_name = "N")]
    chunks: Option<NonZeroUsize>,
    /// Wait D milliseconds before every SSE event but the first.
    #[arg(long, value_name = "D", default_value_t = 0)]
    delay_ms: u64,
    /// Send a `ping` in Anthropic streams.
    #[arg(long)]
    pings: bool,
    /// Append every request, decoded into Pi's context, to FILE as JSON
    /// lines.
    #[arg(long, value_name = "FILE")]
    requests: Option<PathBuf>,
}

/// Runs `serve` until Ctrl-C (exit 0); bad input exits 2, a port that
/// cannot be bound exits 1.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let name = args.script.display().to_string();
    let loaded = read(&args.script)
        .and_then(|text| parse_array(&name, &text, "turns", ServeTurn::from_value));
    let script = match loaded {
        Ok(script) => script,
        Err((file, error)) => {
            eprintln!("{file}:{}", escape_line(&error.to_string()));
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut builder = Server::from_script(script)
            .delay(Duration::from_millis(args.delay_ms))
            .pings(args.pings);
        if let Some(chunks) = args.chunks {
            builder = builder.chunks(chunks.get());
        }
        if let Some(path) = &args.requests {
            builder = builder.requests_file(path);
        }
        let host = if args.host.contains(':') {
            format!("[{}]", args.host.trim_matches(['[', ']']))
        } else {
            args.host.clone()
        };
        let server = match builder.bind(format!("{host}:{}", args.port)).await {
            Ok(server) => server,
            Err(error) => {
                eprintln!("agentstream: error: {}", error_report(&error));
                return Ok(ExitCode::from(1));
            }
        };
        let mut stdout = io::stdout();
        writeln!(stdout, "{}", server.url())?;
        stdout.flush()?;
        let _ = tokio::signal::ctrl_c().await;
        let calls = server.requests().len();
        server.shutdown().await;
        eprintln!("agentstream: served {calls} calls");
        Ok(ExitCode::SUCCESS)
    })
}
