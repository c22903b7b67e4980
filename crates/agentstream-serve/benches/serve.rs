//! Calls per second through `agentstream serve`'s server, beside a bare
//! hyper server writing the same bytes, measured in the same run so the
//! ratio is what to read (absolute calls/s are not comparable between
//! machines):
//!
//! - `serve/<api>/<server>/1`: one client, one call at a time;
//! - `serve/<api>/<server>/50`: 50 clients, one call each at once (the
//!   throughput is per call).
//!
//! `<server>` is `ours` (a [`Server`] whose scripted model streams the same
//! turn on every call, a sentence and one tool call, every delta split into 3 SSE chunks) or
//! `bare` (hyper's `http1` connection answering every POST, after reading
//! its body, with the SSE body and headers `ours` sent for the first
//! call, as one chunked frame). The client is hyper's `http1` client, one
//! keep-alive connection per client, posting a fixed request and reading
//! the whole streamed body, the same for both. After criterion's
//! figures, the bench prints the ratio ours / bare of each, measured again
//! with the two servers interleaved (alternating slices of calls), which
//! holds on a machine whose load moves: the median of 21 rounds, with the
//! lowest and highest.
//!
//! The same interleaved comparison then runs two staged servers against
//! bare, to show where the gap goes: `bare+decode` is bare that also
//! decodes each body into Pi's context (the public `decode_body` of the
//! API), and `bare+decode+model` also streams that context through a
//! [`ScriptedModel`] playing the same turn and drains its events (Pi's
//! events, each with its snapshot), before writing the same fixed answer.
//! `ours` answers such a plain turn without the model's event stream
//! (from its message, the same bytes), so it can beat the second; the
//! second is what a model that is not a `ScriptedModel`, or a chunked
//! turn, costs. Run: `cargo bench -p agentstream-serve --bench
//! serve`. For a profiler, `AGENTSTREAM_SERVE_BENCH_PROFILE=openai/ours/1/2000`
//! runs only those calls (API, server, clients at once, calls).
//!
//! To profile a server without its clients, run the two in two
//! processes: `AGENTSTREAM_SERVE_BENCH_SERVE=openai/ours` serves (ours,
//! or bare answering what ours sends) and prints its address, until its
//! standard input ends; `AGENTSTREAM_SERVE_BENCH_CLIENT=openai/ADDRESS/1/2000`
//! makes those calls to it. A profiler of the first process alone then
//! counts the server's instructions only. `SERVER` may also be `rules`:
//! a server of a rules script (ten rules, the request matching only the
//! last, by `lastUserText` and `model`) replying the same turn, to set
//! rules' cost beside ordered turns' (`ours`); `callgrind.sh` beside
//! this file runs the server-alone measure for all three.

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentstream::message::{assistant, text, tool_call, StopReason};
use agentstream::model::{Model, ScriptStep, ScriptedModel, ScriptedTurn};
use agentstream_serve::{ApiError, DecodedRequest, Script, Server};
use agentstream_wire::{anthropic, openai};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::{FutureExt, StreamExt};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

const CONCURRENT: usize = 50;

/// Turns in the bench's script: more calls than a run makes (criterion's
/// targets and the interleaved rounds make a few hundred thousand).
const SCRIPTED_CALLS: usize = 2_000_000;

/// The model of `ours`: a [`ScriptedModel`] whose script is `turn`
/// [`SCRIPTED_CALLS`] times, popping one per call as `serve` does with a
/// script of that many turns (one shared turn, so the script costs a
/// pointer per turn, not a copy of the message).
fn repeating(turn: ScriptedTurn) -> ScriptedModel {
    let turn = Arc::new(turn);
    ScriptedModel::new(std::iter::repeat_n(ScriptStep::Turn(turn), SCRIPTED_CALLS))
}

/// The work a reference server does on each request's body before it
/// writes its fixed answer.
#[derive(Clone)]
enum Stage {
    /// Nothing: the body is read and dropped (`bare`).
    Bare,
    /// The body is decoded into Pi's context (`bare+decode`).
    Decode(Decoder),
    /// Decoded, then streamed through the model, whose events are drained
    /// (`bare+decode+model`).
    Model(Decoder, Arc<ScriptedModel>),
}

/// A protocol's public body decoder.
type Decoder = fn(&[u8]) -> Result<DecodedRequest, ApiError>;

impl Stage {
    /// Does the stage's work on `body`; whether it went as `ours` would
    /// (the body decodes and the model ends with `done`).
    async fn run(&self, body: &[u8]) -> bool {
        let (decode, model) = match self {
            Stage::Bare => return true,
            Stage::Decode(decode) => (decode, None),
            Stage::Model(decode, model) => (decode, Some(model)),
        };
        let Ok(request) = decode(body) else {
            return false;
        };
        let Some(model) = model else {
            return true;
        };
        let mut events = model.stream(&request.context, request.options);
        let mut done = false;
        // Polled as `ours` polls a model: without a waker first, so the
        // player's yields do not reschedule the connection's task.
        loop {
            let event = match events.next().now_or_never() {
                Some(event) => event,
                None => events.next().await,
            };
            let Some(event) = event else {
                break done;
            };
            done = event.type_name() == "done";
        }
    }
}

/// A reference server: hyper's `http1` connection answering every POST
/// with `answer`, after reading its body and doing `stage`'s work on it.
async fn reference(answer: Bytes, stage: Stage) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (answer, stage) = (answer.clone(), stage.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let (answer, stage) = (answer.clone(), stage.clone());
                        async move {
                            let body = request.into_body().collect().await;
                            let body = body.map(|b| b.to_bytes()).unwrap_or_default();
                            assert!(stage.run(&body).await, "a staged server's work failed");
                            let frames = futures_util::stream::iter([Ok::<_, Infallible>(
                                Frame::data(answer),
                            )]);
                            let mut response = hyper::Response::new(StreamBody::new(frames));
                            // The headers `ours` sends, so both write the same bytes.
                            let headers = response.headers_mut();
                            headers.insert(
                                "content-type",
                                "text/event-stream; charset=utf-8".parse().unwrap(),
                            );
                            headers.insert("cache-control", "no-cache".parse().unwrap());
                            Ok::<_, Infallible>(response)
                        }
                    },
                );
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    address
}

/// Where the clients post: a server's address and the request's path.
#[derive(Clone)]
struct Target {
    address: SocketAddr,
    path: String,
}

/// Clients that each hold one keep-alive connection of hyper's client
/// and make one call at a time.
struct Clients {
    senders: Vec<SendRequest<Full<Bytes>>>,
    target: Target,
    body: Bytes,
}

impl Clients {
    /// `count` clients of `target`, each connected.
    async fn connect(target: Target, body: Bytes, count: usize) -> Self {
        let mut senders = Vec::with_capacity(count);
        for _ in 0..count {
            let stream = TcpStream::connect(target.address).await.unwrap();
            stream.set_nodelay(true).unwrap();
            let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            tokio::spawn(connection);
            senders.push(sender);
        }
        Self {
            senders,
            target,
            body,
        }
    }

    /// `rounds` rounds in which every client makes one call, all at once.
    async fn run(&mut self, rounds: usize) {
        let mut senders = std::mem::take(&mut self.senders);
        for _ in 0..rounds {
            let calls: Vec<_> = senders
                .into_iter()
                .map(|mut sender| {
                    let (target, body) = (self.target.clone(), self.body.clone());
                    tokio::spawn(async move {
                        assert!(!call(&mut sender, &target, &body).await.is_empty());
                        sender
                    })
                })
                .collect();
            senders = Vec::with_capacity(calls.len());
            for call in calls {
                senders.push(call.await.unwrap());
            }
        }
        self.senders = senders;
    }
}

/// One call on `sender`; the streamed body.
async fn call(sender: &mut SendRequest<Full<Bytes>>, target: &Target, body: &Bytes) -> Bytes {
    sender.ready().await.unwrap();
    let request = hyper::Request::post(target.path.as_str())
        .header(HOST, "127.0.0.1")
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(body.clone()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    response.into_body().collect().await.unwrap().to_bytes()
}

/// The bare server's answer: what `ours` sends for the first call.
fn bare_target(runtime: &tokio::runtime::Runtime, ours: &Target, body: &Bytes) -> Target {
    reference_target(runtime, ours, body, Stage::Bare)
}

/// A reference server doing `stage`'s work and answering what `ours`
/// sends for one call.
fn reference_target(
    runtime: &tokio::runtime::Runtime,
    ours: &Target,
    body: &Bytes,
    stage: Stage,
) -> Target {
    runtime.block_on(async {
        let mut client = Clients::connect(ours.clone(), body.clone(), 1).await;
        let answer = call(&mut client.senders[0], ours, body).await;
        Target {
            address: reference(answer, stage).await,
            path: ours.path.clone(),
        }
    })
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let turn = ScriptedTurn::message(assistant(
        [
            text("Let me look that up for you before answering."),
            tool_call(
                "call_1",
                "weather",
                json!({"city": "Paris", "units": "metric"}),
            ),
        ],
        StopReason::ToolUse,
    ));
    // The staged reference servers' model: the same script as `ours`'.
    let staged_model = Arc::new(repeating(turn.clone()));
    let server = runtime.block_on(async {
        Server::builder(repeating(turn))
            .chunks(3)
            .bind("127.0.0.1:0")
            .await
            .unwrap()
    });
    let address = server.local_addr();
    let rules_server = runtime.block_on(async {
        Server::from_rules_script(rules_script())
            .chunks(3)
            .bind("127.0.0.1:0")
            .await
            .unwrap()
    });
    let servers = Servers {
        ours: address,
        rules: rules_server.local_addr(),
    };
    let requests = [
        (
            "openai",
            "/v1/chat/completions",
            json!({"model": "gpt-test", "stream": true,
                   "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}),
            openai::decode::decode_body as Decoder,
        ),
        (
            "anthropic",
            "/v1/messages",
            json!({"model": "claude-test", "stream": true, "max_tokens": 1024,
                   "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}),
            anthropic::decode::decode_body,
        ),
    ];
    if let Ok(only) = std::env::var(PROFILE_VAR) {
        profile(&runtime, &servers, &requests, &only);
        return;
    }
    if let Ok(only) = std::env::var(SERVE_VAR) {
        serve_alone(&runtime, &servers, &requests, &only);
        runtime.block_on(server.shutdown());
        runtime.block_on(rules_server.shutdown());
        return;
    }
    if let Ok(only) = std::env::var(CLIENT_VAR) {
        clients_alone(&runtime, &requests, &only);
        runtime.block_on(rules_server.shutdown());
        return;
    }
    let mut group = c.benchmark_group("serve");
    let mut targets = Vec::new();
    for (api, path, body, decode) in requests {
        let body = Bytes::from(body.to_string());
        let ours = Target {
            address,
            path: path.to_owned(),
        };
        let bare = bare_target(&runtime, &ours, &body);
        targets.push((api, ours.clone(), bare.clone(), body.clone(), decode));
        for (name, target) in [("ours", &ours), ("bare", &bare)] {
            for clients in [1, CONCURRENT] {
                let mut pool =
                    runtime.block_on(Clients::connect(target.clone(), body.clone(), clients));
                group.throughput(Throughput::Elements(clients as u64));
                group.bench_function(format!("{api}/{name}/{clients}"), |b| {
                    b.iter(|| runtime.block_on(pool.run(1)));
                });
            }
        }
    }
    group.finish();
    for (api, ours, bare, body, _) in &targets {
        for clients in [1, CONCURRENT] {
            let ratios = interleaved(&runtime, ours, bare, body, clients);
            println!(
                "serve/{api}/{clients}: ours/bare calls per second, interleaved: {}",
                summary(ratios)
            );
        }
    }
    // Where the gap goes: the staged servers against bare, interleaved
    // the same way.
    for (api, ours, bare, body, decode) in &targets {
        let stages = [
            ("bare+decode", Stage::Decode(*decode)),
            (
                "bare+decode+model",
                Stage::Model(*decode, staged_model.clone()),
            ),
        ];
        for (name, stage) in stages {
            let staged = reference_target(&runtime, ours, body, stage);
            for clients in [1, CONCURRENT] {
                let ratios = interleaved(&runtime, &staged, bare, body, clients);
                println!(
                    "serve/{api}/{clients}: {name}/bare calls per second, interleaved: {}",
                    summary(ratios)
                );
            }
        }
    }
    runtime.block_on(server.shutdown());
    runtime.block_on(rules_server.shutdown());
}

/// The median of `ratios`, with the lowest and highest.
fn summary(mut ratios: Vec<f64>) -> String {
    ratios.sort_by(f64::total_cmp);
    let (median, low, high) = (
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    );
    format!(
        "median {median:.2} (min {low:.2}, max {high:.2}, {} rounds)",
        ratios.len()
    )
}

/// The time `clients` take for `rounds` rounds of one call each.
fn timed(runtime: &tokio::runtime::Runtime, clients: &mut Clients, rounds: usize) -> Duration {
    let start = Instant::now();
    runtime.block_on(clients.run(rounds));
    start.elapsed()
}

/// A server (`ours`) against bare in alternating slices of about 1,000 calls each: on
/// a machine whose load moves (a shared one), both see the same load,
/// which criterion's one-after-the-other runs do not give. The ratio of
/// calls per second, ours / bare, of each of the rounds (a slice of
/// each, in turns first).
fn interleaved(
    runtime: &tokio::runtime::Runtime,
    ours: &Target,
    bare: &Target,
    body: &Bytes,
    clients: usize,
) -> Vec<f64> {
    let rounds = (SLICE_CALLS / clients).max(4);
    let (mut ours, mut bare) = runtime.block_on(async {
        (
            Clients::connect(ours.clone(), body.clone(), clients).await,
            Clients::connect(bare.clone(), body.clone(), clients).await,
        )
    });
    (0..ROUNDS)
        .map(|round| {
            let (ours_time, bare_time) = if round % 2 == 0 {
                let ours = timed(runtime, &mut ours, rounds);
                (ours, timed(runtime, &mut bare, rounds))
            } else {
                let bare = timed(runtime, &mut bare, rounds);
                (timed(runtime, &mut ours, rounds), bare)
            };
            bare_time.as_secs_f64() / ours_time.as_secs_f64()
        })
        .collect()
}

/// Rounds of the interleaved comparison.
const ROUNDS: usize = 21;

/// Calls in one server's slice of a round: long enough (tens of
/// milliseconds) that a scheduler's hiccup moves one round's ratio by
/// a few percent, not by half.
const SLICE_CALLS: usize = 1_000;

/// The variable naming one target to run alone, for a profiler:
/// `API/SERVER/CLIENTS/CALLS`, e.g. `openai/ours/1/2000`.
const PROFILE_VAR: &str = "AGENTSTREAM_SERVE_BENCH_PROFILE";

/// The variable naming a server to run alone: `API/SERVER`.
const SERVE_VAR: &str = "AGENTSTREAM_SERVE_BENCH_SERVE";

/// The variable naming calls to make to a server of another process:
/// `API/ADDRESS/CLIENTS/CALLS`.
const CLIENT_VAR: &str = "AGENTSTREAM_SERVE_BENCH_CLIENT";

/// The request path and body of `api`.
fn request_of<'a>(
    requests: &'a [(&str, &str, serde_json::Value, Decoder)],
    api: &str,
) -> (&'a str, Bytes) {
    let (_, path, body, _) = requests
        .iter()
        .find(|(name, ..)| *name == api)
        .expect("an API of the bench");
    (path, Bytes::from(body.to_string()))
}

/// The addresses of the bench's two servers of ours: ordered turns
/// (`ours`) and rules (`rules`).
struct Servers {
    ours: SocketAddr,
    rules: SocketAddr,
}

/// The rules server's script: ten rules, the request matching only the
/// last (by `lastUserText` and `model`, so every rule before it is
/// tried and fails), which replies the bench's turn on every call (no
/// `times`).
fn rules_script() -> Script {
    let mut rules: Vec<serde_json::Value> = (0..9)
        .map(|n| json!({"match": {"lastUserText": format!("no such question {n}")}, "reply": "never"}))
        .collect();
    rules.push(json!({
        "match": {"lastUserText": "weather in Paris", "model": "test"},
        "reply": {"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "text", "text": "Let me look that up for you before answering."},
            {"type": "toolCall", "id": "call_1", "name": "weather",
             "arguments": {"city": "Paris", "units": "metric"}},
        ]},
    }));
    Script::from_value(json!({ "rules": rules })).expect("the bench's rules script")
}

/// The target `server` (`ours`: ordered turns, `rules`: the rules
/// script, or `bare` answering what ours sends) of `api`, and the body
/// its clients post.
fn target_of(
    runtime: &tokio::runtime::Runtime,
    servers: &Servers,
    requests: &[(&str, &str, serde_json::Value, Decoder)],
    api: &str,
    server: &str,
) -> (Target, Bytes) {
    let (path, body) = request_of(requests, api);
    let ours = Target {
        address: servers.ours,
        path: path.to_owned(),
    };
    let target = match server {
        "bare" => bare_target(runtime, &ours, &body),
        "rules" => Target {
            address: servers.rules,
            ..ours
        },
        _ => ours,
    };
    (target, body)
}

/// `count` calls to `target` by `clients` clients at once (both numbers
/// as given in a variable).
fn make_calls(
    runtime: &tokio::runtime::Runtime,
    target: Target,
    body: Bytes,
    clients: &str,
    count: &str,
) {
    let (clients, count): (usize, usize) = (clients.parse().unwrap(), count.parse().unwrap());
    let mut pool = runtime.block_on(Clients::connect(target, body, clients));
    runtime.block_on(pool.run(count / clients));
}

/// Serves what `only` (`API/SERVER`) names, prints its address and
/// returns when standard input ends.
fn serve_alone(
    runtime: &tokio::runtime::Runtime,
    servers: &Servers,
    requests: &[(&str, &str, serde_json::Value, Decoder)],
    only: &str,
) {
    let Some((api, server)) = only.split_once('/') else {
        panic!("{SERVE_VAR}: expected API/SERVER, got {only}");
    };
    let (target, _) = target_of(runtime, servers, requests, api, server);
    println!("{}", target.address);
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
}

/// Makes the calls `only` (`API/ADDRESS/CLIENTS/CALLS`) names.
fn clients_alone(
    runtime: &tokio::runtime::Runtime,
    requests: &[(&str, &str, serde_json::Value, Decoder)],
    only: &str,
) {
    let parts: Vec<&str> = only.split('/').collect();
    let [api, address, clients, count] = parts[..] else {
        panic!("{CLIENT_VAR}: expected API/ADDRESS/CLIENTS/CALLS, got {only}");
    };
    let address: SocketAddr = address.parse().expect("an address");
    let servers = Servers {
        ours: address,
        rules: address,
    };
    let (target, body) = target_of(runtime, &servers, requests, api, "ours");
    make_calls(runtime, target, body, clients, count);
}

/// Runs the calls `only` names against one server, then returns: the
/// instructions a profiler counts, divided by the calls, are what each
/// costs (the same client for both servers).
fn profile(
    runtime: &tokio::runtime::Runtime,
    servers: &Servers,
    requests: &[(&str, &str, serde_json::Value, Decoder)],
    only: &str,
) {
    let parts: Vec<&str> = only.split('/').collect();
    let [api, server, clients, count] = parts[..] else {
        panic!("{PROFILE_VAR}: expected API/SERVER/CLIENTS/CALLS, got {only}");
    };
    let (target, body) = target_of(runtime, servers, requests, api, server);
    make_calls(runtime, target, body, clients, count);
}

criterion_group!(benches, bench);
criterion_main!(benches);
