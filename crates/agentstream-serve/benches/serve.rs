//! Calls per second through the server, end to end over loopback HTTP
//! with our own clients (so each figure includes the client's request
//! encoding and SSE decoding as well as the server's work):
//!
//! - `serve/<api>/sequential`: one client, one call at a time;
//! - `serve/<api>/concurrent-50`: 50 clients, one call each at once (the
//!   throughput is per call).
//!
//! Every call streams the same turn (a sentence and one tool call, the
//! server splitting each delta into 3 SSE chunks) from a model that never
//! runs out. Run: `cargo bench -p agentstream-serve --bench serve`.

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
use agentstream::model::{Model, ModelStream, ScriptedModel, ScriptedTurn, StreamOptions};
use agentstream_serve::Server;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;

#[path = "../tests/support/mod.rs"]
mod support;
use support::{client, Client, Protocol};

const CONCURRENT: usize = 50;

/// A model answering every call with the same turn.
struct Repeat(ScriptedTurn);

impl Model for Repeat {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        ScriptedModel::new([self.0.clone()]).stream(context, options)
    }
}

async fn call(client: &Client, context: &Context) {
    let message = client
        .stream(context, StreamOptions::default())
        .result()
        .await;
    assert_eq!(message.stop_reason, StopReason::ToolUse, "{message:?}");
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
    let context = Context::from_messages([user("What is the weather in Paris?").into()]);
    let mut group = c.benchmark_group("serve");
    for (api, protocol) in [
        ("openai", Protocol::OpenAi),
        ("anthropic", Protocol::Anthropic),
    ] {
        let one = client(protocol, &server);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{api}/sequential"), |b| {
            b.iter(|| runtime.block_on(call(&one, &context)));
        });
        let clients: Vec<Client> = (0..CONCURRENT).map(|_| client(protocol, &server)).collect();
        group.throughput(Throughput::Elements(CONCURRENT as u64));
        group.bench_function(format!("{api}/concurrent-{CONCURRENT}"), |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let calls: Vec<_> = clients
                        .iter()
                        .map(|client| {
                            let (client, context) = (client.clone(), context.clone());
                            tokio::spawn(async move { call(&client, &context).await })
                        })
                        .collect();
                    for call in calls {
                        call.await.unwrap();
                    }
                });
            });
        });
    }
    group.finish();
    // The server recorded every call; clear nothing, just stop it.
    runtime.block_on(server.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
