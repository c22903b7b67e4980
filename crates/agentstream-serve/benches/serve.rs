//! Calls per second through `agentstream serve`'s server, beside a bare
//! hyper server writing the same bytes, measured in the same run so the
//! ratio is what to read (absolute calls/s are not comparable between
//! machines):
//!
//! - `serve/<api>/<server>/1`: one client, one call at a time;
//! - `serve/<api>/<server>/50`: 50 clients, one call each at once (the
//!   throughput is per call).
//!
//! `<server>` is `ours` (a [`Server`] whose model streams the same turn,
//! a sentence and one tool call, every delta split into 3 SSE chunks) or
//! `bare` (hyper's `http1` connection answering every POST, after reading
//! its body, with the SSE body `ours` sent for the first call, as one
//! chunked frame). The client is reqwest posting a fixed request and
//! reading the whole streamed body, the same for both. Run: `cargo bench
//! -p agentstream-serve --bench serve`.

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::convert::Infallible;
use std::net::SocketAddr;

use agentstream::message::{assistant, text, tool_call, Context, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, ScriptedTurn, StreamOptions};
use agentstream_serve::Server;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

const CONCURRENT: usize = 50;

/// A model answering every call with the same turn.
struct Repeat(ScriptedTurn);

impl Model for Repeat {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        ScriptedModel::new([self.0.clone()]).stream(context, options)
    }
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
                            response.headers_mut().insert(
                                "content-type",
                                "text/event-stream; charset=utf-8".parse().unwrap(),
                            );
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
        Server::builder(Repeat(turn))
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
    let mut group = c.benchmark_group("serve");
    for (api, route, body) in requests {
        let body = Bytes::from(body.to_string());
        let ours = format!("{}/{route}", server.url());
        let answer = runtime.block_on(async {
            let response = client.post(&ours).body(body.clone()).send().await.unwrap();
            response.bytes().await.unwrap()
        });
        let bare = runtime.block_on(bare(answer.clone()));
        let bare = format!("http://{bare}/v1/{route}");
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
    runtime.block_on(server.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
