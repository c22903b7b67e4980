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
//! call, as one chunked frame). The client is reqwest posting a fixed request and
//! reading the whole streamed body, the same for both. After criterion's
//! figures, the bench prints the ratio ours / bare of each, measured again
//! with the two servers interleaved (alternating slices of calls), which
//! holds on a machine whose load moves: the median of 21 rounds, with the
//! lowest and highest. Both servers run in this process on mimalloc, the
//! allocator of the `agentstream` binary. Run: `cargo bench -p agentstream-serve --bench
//! serve`. For a profiler, `AGENTSTREAM_SERVE_BENCH_PROFILE=openai/ours/1/2000`
//! runs only those calls (API, server, clients at once, calls).

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentstream::message::{assistant, text, tool_call, StopReason};
use agentstream::model::{ScriptStep, ScriptedModel, ScriptedTurn};
use agentstream_serve::Server;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

/// The allocator the `agentstream` binary ships with, so `ours` is what
/// `agentstream serve` runs; `bare` shares it, being in the same process.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// A bare hyper server answering every request with `answer`.
async fn bare(answer: Bytes) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let answer = answer.clone();
                        async move {
                            let _ = request.into_body().collect().await;
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

/// One call; the length of the streamed body.
async fn call(client: &reqwest::Client, url: &str, body: &Bytes) -> usize {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap().len()
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
    let server = runtime.block_on(async {
        Server::builder(repeating(turn))
            .chunks(3)
            .bind("127.0.0.1:0")
            .await
            .unwrap()
    });
    let requests = [
        (
            "openai",
            "chat/completions",
            json!({"model": "gpt-test", "stream": true,
                   "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}),
        ),
        (
            "anthropic",
            "messages",
            json!({"model": "claude-test", "stream": true, "max_tokens": 1024,
                   "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}),
        ),
    ];
    let client = reqwest::Client::new();
    if let Ok(only) = std::env::var(PROFILE_VAR) {
        profile(&runtime, &client, &server.url(), &requests, &only);
        return;
    }
    let mut group = c.benchmark_group("serve");
    let mut targets = Vec::new();
    for (api, route, body) in requests {
        let body = Bytes::from(body.to_string());
        let ours = format!("{}/{route}", server.url());
        let answer = runtime.block_on(async {
            let response = client.post(&ours).body(body.clone()).send().await.unwrap();
            response.bytes().await.unwrap()
        });
        let bare = runtime.block_on(bare(answer));
        let bare = format!("http://{bare}/v1/{route}");
        targets.push((api, ours.clone(), bare.clone(), body.clone()));
        for (name, url) in [("ours", &ours), ("bare", &bare)] {
            group.throughput(Throughput::Elements(1));
            group.bench_function(format!("{api}/{name}/1"), |b| {
                b.iter(|| runtime.block_on(call(&client, url, &body)));
            });
            group.throughput(Throughput::Elements(CONCURRENT as u64));
            group.bench_function(format!("{api}/{name}/{CONCURRENT}"), |b| {
                b.iter(|| {
                    runtime.block_on(async {
                        let calls: Vec<_> = (0..CONCURRENT)
                            .map(|_| {
                                let (client, url, body) =
                                    (client.clone(), url.clone(), body.clone());
                                tokio::spawn(async move { call(&client, &url, &body).await })
                            })
                            .collect();
                        for call in calls {
                            assert!(call.await.unwrap() > 0);
                        }
                    });
                });
            });
        }
    }
    group.finish();
    for (api, ours, bare, body) in &targets {
        for clients in [1, CONCURRENT] {
            let mut ratios = interleaved(&runtime, &client, ours, bare, body, clients);
            ratios.sort_by(f64::total_cmp);
            let (median, low, high) = (
                ratios[ratios.len() / 2],
                ratios[0],
                ratios[ratios.len() - 1],
            );
            println!(
                "serve/{api}/{clients}: ours/bare calls per second, interleaved: median {median:.2} \
                 (min {low:.2}, max {high:.2}, {} rounds)",
                ratios.len()
            );
        }
    }
    runtime.block_on(server.shutdown());
}

/// `clients` calls at once against `url`, `rounds` times; the time taken.
fn calls(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
    body: &Bytes,
    clients: usize,
    rounds: usize,
) -> Duration {
    let start = Instant::now();
    runtime.block_on(async {
        for _ in 0..rounds {
            let calls: Vec<_> = (0..clients)
                .map(|_| {
                    let (client, url, body) = (client.clone(), url.to_owned(), body.clone());
                    tokio::spawn(async move { call(&client, &url, &body).await })
                })
                .collect();
            for call in calls {
                assert!(call.await.unwrap() > 0);
            }
        }
    });
    start.elapsed()
}

/// Ours against bare in alternating slices of about 1,000 calls each: on
/// a machine whose load moves (a shared one), both see the same load,
/// which criterion's one-after-the-other runs do not give. The ratio of
/// calls per second, ours / bare, of each of the rounds (a slice of
/// each, in turns first).
fn interleaved(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    ours: &str,
    bare: &str,
    body: &Bytes,
    clients: usize,
) -> Vec<f64> {
    let rounds = (SLICE_CALLS / clients).max(4);
    (0..ROUNDS)
        .map(|round| {
            let (ours_time, bare_time) = if round % 2 == 0 {
                let ours = calls(runtime, client, ours, body, clients, rounds);
                (ours, calls(runtime, client, bare, body, clients, rounds))
            } else {
                let bare = calls(runtime, client, bare, body, clients, rounds);
                (calls(runtime, client, ours, body, clients, rounds), bare)
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

/// Runs the calls `only` names against one server, then returns: the
/// instructions a profiler counts, divided by the calls, are what each
/// costs (the same client for both servers).
fn profile(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
    requests: &[(&str, &str, serde_json::Value)],
    only: &str,
) {
    let parts: Vec<&str> = only.split('/').collect();
    let [api, server, clients, count] = parts[..] else {
        panic!("{PROFILE_VAR}: expected API/SERVER/CLIENTS/CALLS, got {only}");
    };
    let (clients, count): (usize, usize) = (clients.parse().unwrap(), count.parse().unwrap());
    let (_, route, body) = requests
        .iter()
        .find(|(name, _, _)| *name == api)
        .expect("an API of the bench");
    let body = Bytes::from(body.to_string());
    let ours = format!("{url}/{route}");
    let target = if server == "bare" {
        let answer = runtime.block_on(async {
            let response = client.post(&ours).body(body.clone()).send().await.unwrap();
            response.bytes().await.unwrap()
        });
        let address = runtime.block_on(bare(answer));
        format!("http://{address}/v1/{route}")
    } else {
        ours
    };
    calls(runtime, client, &target, &body, clients, count / clients);
}

criterion_group!(benches, bench);
criterion_main!(benches);
