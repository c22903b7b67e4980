//! End to end: every HTTP scenario of `agentstream-testkit`'s `http` (both
//! providers, the typed causes, the request options, the base URLs,
//! retry and replay) on the reqwest host, against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-tokio --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

// The prelude is what users import; the tests use it so it stays complete.
use agentstream_tokio::prelude::*;

/// Runs a scenario on a multi-thread runtime, with a generous guard
/// against hangs.
fn run(scenario: impl Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), scenario)
                .await
                .expect("the scenario hung");
        });
}

agentstream_testkit::http_host_tests! {
    host: agentstream_tokio,
    runtime: agentstream_tokio::Tokio,
    run: run,
}

#[test]
fn spawned_driver_gives_the_same_answer() {
    run(
        agentstream_testkit::http::scenarios::random_chunk_boundaries(|config| {
            SpawnAll(model(config))
        }),
    );
}

/// Spawns each call's producer as a tokio task.
struct SpawnAll(OpenAiCompatModel);

impl Model for SpawnAll {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        Tokio.spawn_stream(self.0.stream(context, options))
    }
}

/// A redirect on the origin the request was sent to is followed, with the
/// key and without a `Referer` (one to another origin is not: see the
/// shared `redirect_scenarios`).
#[test]
fn same_origin_redirects_are_followed() {
    use agentstream_testkit::http::{answer_payloads, sse_body, MockServer, Reply};
    run(async {
        let body = sse_body(&answer_payloads(&[], &["moved"]));
        let server = MockServer::start(move |request| {
            if request.path.starts_with("/moved") {
                Reply::sse(vec![body.clone()])
            } else {
                Reply::json(
                    307,
                    &[("location", "/moved/chat/completions")],
                    &serde_json::json!({}),
                )
            }
        })
        .expect("server");
        let model = model(OpenAiConfig::new(server.base_url(), "m").with_api_key("sk-same"));
        let context = Context::from_messages([user("Hi").into()]);
        let message = model
            .stream(&context, StreamOptions::default())
            .result()
            .await;
        assert_eq!(message.text(), "moved", "{:?}", message.error_message);
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1].path, "/moved/chat/completions");
        assert_eq!(requests[1].header("authorization"), Some("Bearer sk-same"));
        assert!(requests[1].header("referer").is_none(), "{:?}", requests[1]);
    });
}
