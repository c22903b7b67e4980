//! `agentstream serve`: a script served as an OpenAI-compatible and
//! Anthropic-compatible endpoint (see the `agentstream-serve` crate).

use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentstream_serve::cassette::Match;
use agentstream_serve::{Script, ServeTurn, Server, ServerBuilder};
use agentstream_wire::http::error_report;

use crate::input::InputError;
use crate::play::{parse_array, read};
use crate::terminal::escape_line;

/// What `serve --help` says after the options: per-test isolation, the
/// control routes, and the request log's schema.
const AFTER_HELP: &str = "\
Per-test isolation: a request with the header `x-agentstream-test: ID` (1 to 128
visible ASCII characters; anything else gets HTTP 400) plays its own copy of the
script (own cursor, rule counts and call numbers), and GET /v1/requests and
GET /v1/unused with the same header list only that test's requests and unused
rules and turns (without the header: the requests that came without one). At
most --max-test-ids ids are kept; past it the least recently used is dropped.

Control at run time (scripted servers only; 409 with --upstream or --replay):
  POST /v1/script          body: a script, as the SCRIPT file. Replaces the
                           script of the header's test id, or without the
                           header the server's (new ids start from it).
                           ?append=1 appends its turns and rules instead.
                           Answers {\"test\", \"rules\", \"turns\", \"appended\"};
                           a bad script gets 400 with this command's error text.
  POST /v1/reset           rewinds the header's test id (or, without it, every
                           id and the server) and clears its requests. Answers
                           {\"test\", \"reset\": true, \"clearedRequests\"}.
A SCRIPT of [] is valid: every call answers past-the-end until one is posted.

The request log (GET /v1/requests, a JSON array; each --requests line):
  call     the call's number from 0 (each test id numbers its own)
  api      openai-completions, anthropic-messages, openai-responses,
           google-generative-ai, azure-openai-responses,
           mistral-conversations or bedrock-converse-stream
  model    the request's model
  stream   whether it asked for a stream
  context  the request decoded into Pi's context (Pi's roles: an OpenAI
           `tool` message is a `toolResult`)
  options  the options it set (max tokens, temperature, ...), {} for none
  test     its x-agentstream-test id (absent without one)
  raw      the body as received (its JSON, or a string if it was not JSON):
           with GET /v1/requests?raw=1, and always in --requests lines
  chaos    what --chaos injected into its stream, [{event: N, kind:
           drop|malformed|disconnect}] (absent when nothing); in
           --requests, a line {call, test?, chaos} when the stream ends";

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// A JSON array of turns, as `play` reads them, plus
    /// `{"httpError": {"status", "message", "type"?, "retryAfter"?}}`,
    /// `{"turn", "streamError": {"message", "type"?}, "afterEvents": N}` and
    /// `{"turn", "cutAfterEvents": N}` and `{"byRequest": [{"ifContains"?,
    /// "turn"}, ...]}` (the first alternative whose text occurs in the
    /// request's last message). Or an object {"rules": [...], "turns":
    /// [...]}: rules {"match", "reply", "times"?, "name"?} tried in order
    /// before the turns (see the agentstream-serve crate's `rules`). A
    /// call past the last turn gets HTTP 400 (a status the SDKs do not
    /// retry) with the provider's error body and the message
    /// "ScriptedModel has no more responses". Not given with --upstream or
    /// --replay.
    #[arg(required_unless_present_any = ["upstream", "replay"], conflicts_with_all = ["upstream", "replay"])]
    script: Option<PathBuf>,
    /// Be a recording proxy in front of the endpoint at URL (a base URL,
    /// with or without its /v1; Azure's as its origin or with /openai/v1;
    /// Mistral's and Bedrock's as their origin): every call streams through live and
    /// unchanged and is saved as a cassette in the --record directory.
    /// With --replay instead: record on miss (a call no cassette matches
    /// goes to URL and is saved in the --replay directory; the next
    /// identical call replays it).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// The directory the proxy saves its cassettes in (one directory per
    /// exchange; secrets in headers redacted).
    #[arg(
        long,
        value_name = "DIR",
        requires = "upstream",
        conflicts_with = "replay"
    )]
    record: Option<PathBuf>,
    /// Answer every call from the cassettes in DIR (recorded with
    /// --upstream/--record), matched on the decoded Pi context; with
    /// --upstream, record what no cassette matches into DIR.
    #[arg(long, value_name = "DIR")]
    replay: Option<PathBuf>,
    /// How --replay picks a cassette: the whole context, the last message
    /// only, or strict recording order.
    #[arg(
        long = "match",
        value_enum,
        default_value = "exact",
        requires = "replay"
    )]
    match_: MatchMode,
    /// The pace of --replay: 0 (the default) as fast as possible, 1 at the
    /// pace each cassette's pieces arrived when recorded, 2 twice as fast,
    /// 0.5 half as fast. Cassettes recorded without arrival times play
    /// without pauses.
    #[arg(long, value_name = "X", default_value_t = 0.0, value_parser = replay_speed)]
    replay_speed: f64,
    /// With --upstream (recording): replace every match of REGEX in the
    /// request and response bodies (and every string of request.json),
    /// and in the request log's bodies, with [REDACTED] before anything
    /// is written; repeatable. The client still gets the answer
    /// unchanged. Secret headers and a `key` in the query are always
    /// redacted.
    #[arg(long, value_name = "REGEX", requires = "upstream")]
    redact: Vec<String>,
    /// A call no rule or turn answers gets HTTP 400 naming the nearest
    /// rule and its first difference (instead of the past-the-end
    /// answer). GET /v1/unused lists the rules and turns that never
    /// answered, strict or not.
    #[arg(long, requires = "script")]
    strict: bool,
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
    /// Seed jitter ("timing" in a turn) and --chaos with N, to replay a
    /// run; without it a seed is drawn from the clock and printed on
    /// stderr at start.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Inject chaos into every streamed answer, per SSE event:
    /// drop=P,malformed=P,disconnect=P (probabilities 0 to 1); a request's
    /// x-agentstream-chaos header (same syntax) replaces it. GET
    /// /v1/requests says what was injected ("chaos").
    #[arg(long, value_name = "SPEC", value_parser = agentstream_serve::Chaos::parse)]
    chaos: Option<agentstream_serve::Chaos>,
    /// Append every request, decoded into Pi's context and options, with
    /// its body as received ("raw") and its test id ("test"), to FILE as
    /// JSON lines, as it arrives (the file keeps every request; GET
    /// /v1/requests only the newest, see --keep-requests). The fields are
    /// listed at the end of --help.
    #[arg(long, value_name = "FILE")]
    requests: Option<PathBuf>,
    /// Keep at most N requests in memory for GET /v1/requests; older ones
    /// are dropped (the reply's agentstream-dropped-requests header counts
    /// them).
    #[arg(long, value_name = "N", default_value_t = agentstream_serve::MAX_KEPT_REQUESTS)]
    keep_requests: usize,
    /// Keep at most MIB mebibytes of requests in memory (their bodies;
    /// with --requests, their JSON lines).
    #[arg(long, value_name = "MIB", default_value_t = agentstream_serve::MAX_KEPT_BYTES >> 20)]
    keep_requests_mib: usize,
    /// Close a connection that has not sent a request's headers within MS
    /// milliseconds (idle keep-alive time included; checked every
    /// sixteenth of MS, between 1 ms and 1 s).
    #[arg(long, value_name = "MS", default_value_t = millis(agentstream_serve::HEADER_TIMEOUT))]
    header_timeout_ms: u64,
    /// Answer HTTP 408 to a request whose body has not arrived within MS
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = millis(agentstream_serve::BODY_TIMEOUT))]
    body_timeout_ms: u64,
    /// Keep at most N test ids (x-agentstream-test) at once, each with
    /// its own script copy and requests; past it the least recently used
    /// is dropped.
    #[arg(long, value_name = "N", default_value_t = agentstream_serve::MAX_TEST_IDS)]
    max_test_ids: usize,
    /// Keep at most N connections open; past it the oldest idle one is
    /// closed.
    #[arg(long, value_name = "N", default_value_t = agentstream_serve::MAX_CONNECTIONS)]
    max_connections: usize,
}

/// `--match`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum MatchMode {
    /// The cassette whose context is the request's.
    Exact,
    /// The cassette whose last message is the request's.
    LastMessage,
    /// Call k gets cassette k, whose context must be the request's.
    Order,
}

impl From<MatchMode> for Match {
    fn from(mode: MatchMode) -> Self {
        match mode {
            MatchMode::Exact => Match::Exact,
            MatchMode::LastMessage => Match::LastMessage,
            MatchMode::Order => Match::Order,
        }
    }
}

/// `--replay-speed`: a finite number, 0 or more.
fn replay_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed >= 0.0 => Ok(speed),
        _ => Err(format!(
            "{text:?} is not a speed (0 as fast as possible, 1 as recorded, 2 twice as fast)"
        )),
    }
}

/// The builder for the answers' source: the script, the upstream or the
/// cassettes; `Err` is the exit code after the message.
fn source(args: &Args) -> Result<ServerBuilder, ExitCode> {
    if args.replay.is_none() && args.replay_speed != 0.0 {
        eprintln!("agentstream: error: --replay-speed paces --replay: give --replay DIR");
        return Err(ExitCode::from(2));
    }
    if let (Some(url), Some(dir)) = (&args.upstream, &args.record) {
        return Ok(Server::proxy(url, dir));
    }
    if let (Some(_), None) = (&args.upstream, &args.replay) {
        eprintln!("agentstream: error: --upstream needs --record DIR (a recording proxy) or --replay DIR (record on miss)");
        return Err(ExitCode::from(2));
    }
    if let Some(dir) = &args.replay {
        let mut builder = Server::replay(dir, args.match_.into()).map_err(|error| {
            eprintln!("agentstream: error: {}", error_report(&error));
            ExitCode::from(2)
        })?;
        if let Some(url) = &args.upstream {
            builder = builder.record_misses(url);
        }
        builder = builder.replay_speed(args.replay_speed);
        // Said once at startup: an entry that was meant to be a cassette
        // and is not would otherwise be missed only when a request fails.
        for skipped in builder.skipped_cassettes() {
            let line = format!(
                "agentstream serve: not loaded: {}: {}",
                dir.join(&skipped.name).display(),
                skipped.reason
            );
            eprintln!("{}", escape_line(&line));
        }
        return Ok(builder);
    }
    let Some(path) = &args.script else {
        eprintln!("agentstream: error: give a script, --upstream with --record, or --replay");
        return Err(ExitCode::from(2));
    };
    let name = path.display().to_string();
    let loaded = read(path).and_then(|text| {
        if text.trim_start().starts_with('{') {
            // The object form: rules and turns.
            let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                let error = InputError::new(e.line(), format!("invalid JSON: {e}"));
                (name.clone(), error)
            })?;
            Script::from_value(value).map_err(|e| (name.clone(), InputError::decode(1, "$", &e)))
        } else {
            let turns = parse_array(&name, &text, "turns", ServeTurn::from_value)?;
            let mut script = Script::default();
            script.turns = turns;
            Ok(script)
        }
    });
    match loaded {
        Ok(script) => Ok(Server::from_rules_script(script).strict(args.strict)),
        Err((file, error)) => {
            eprintln!("{file}:{}", escape_line(&error.to_string()));
            Err(ExitCode::from(2))
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Runs `serve` until Ctrl-C (exit 0); bad input (a script or a cassette)
/// exits 2, a port that cannot be bound exits 1.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let builder = match source(args) {
        Ok(builder) => builder,
        Err(code) => return Ok(code),
    };
    let builder = match agentstream_serve::cassette::Redactor::new(&args.redact) {
        Ok(redactor) => builder.redact(redactor),
        Err(error) => {
            eprintln!("agentstream: error: {}", escape_line(&error));
            return Ok(ExitCode::from(2));
        }
    };
    // Connections are served on every core: one slow call never holds up
    // the others.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut builder = builder
            .delay(Duration::from_millis(args.delay_ms))
            .pings(args.pings)
            .kept_requests(
                args.keep_requests,
                args.keep_requests_mib.saturating_mul(1 << 20),
            )
            .header_timeout(Duration::from_millis(args.header_timeout_ms))
            .body_timeout(Duration::from_millis(args.body_timeout_ms))
            .max_connections(args.max_connections)
            .max_test_ids(args.max_test_ids);
        if let Some(chunks) = args.chunks {
            builder = builder.chunks(chunks.get());
        }
        if let Some(seed) = args.seed {
            builder = builder.seed(seed);
        }
        if let Some(chaos) = args.chaos {
            builder = builder.chaos(chaos);
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
        eprintln!("agentstream: seed {}", server.seed());
        let _ = tokio::signal::ctrl_c().await;
        let (calls, dropped) = (server.calls(), server.dropped_requests());
        server.shutdown().await;
        if dropped > 0 {
            eprintln!(
                "agentstream: served {calls} calls ({dropped} of the oldest dropped from GET /v1/requests)"
            );
        } else {
            eprintln!("agentstream: served {calls} calls");
        }
        Ok(ExitCode::SUCCESS)
    })
}
