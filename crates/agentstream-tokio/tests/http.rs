//! End to end: every HTTP scenario of `agentstream-testserver` (both
//! providers, the typed causes, the request options, the base URLs,
//! retry and replay) on the reqwest host, against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-tokio --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_wire::openai::OpenAiConfig as Config;
use agentstream_wire::tap::TapEndpoint;
// The prelude is what users import; the tests use it so it stays complete.
use agentstream_tokio::prelude::*;
use agentstream_tokio::EndpointModel;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

fn anthropic(config: AnthropicConfig) -> AnthropicModel {
    AnthropicModel::new(config).expect("client")
}

fn responses(config: ResponsesConfig) -> ResponsesModel {
    ResponsesModel::new(config).expect("client")
}

fn google(config: GoogleConfig) -> GoogleModel {
    GoogleModel::new(config).expect("client")
}

fn tapped(endpoint: TapEndpoint<Config>) -> EndpointModel<TapEndpoint<Config>> {
    EndpointModel::new(endpoint).expect("client")
}

fn with_timeout(
    model: &OpenAiCompatModel,
    context: &Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream {
    stream_with_timeout(model, context, options, timeout)
}

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

agentstream_testserver::http_scenario_tests! {
    openai: model,
    anthropic: anthropic,
    responses: responses,
    google: google,
    tap: tapped,
    timer: agentstream_tokio::Tokio,
    with_timeout: with_timeout,
    with_retry: agentstream_tokio::with_retry,
    run: run,
}

#[test]
fn spawned_driver_gives_the_same_answer() {
    run(agentstream_testserver::scenarios::random_chunk_boundaries(
        |config| SpawnAll(model(config)),
    ));
}

/// Spawns each call's producer as a tokio task.
struct SpawnAll(OpenAiCompatModel);

impl Model for SpawnAll {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        spawn(self.0.stream(context, options))
    }
}
