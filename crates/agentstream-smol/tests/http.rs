//! End to end: every HTTP scenario of `agentstream-testkit`'s `http` (both
//! providers, the typed causes, the request options, the base URLs,
//! retry and replay) on the hyper host (smol), against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-smol --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_wire::openai::OpenAiConfig as Config;
use agentstream_wire::recording::RecordingEndpoint;
// The prelude is what users import; the tests use it so it stays complete.
use agentstream_smol::prelude::*;
use agentstream_smol::EndpointModel;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

fn anthropic(config: AnthropicConfig) -> AnthropicModel {
    AnthropicModel::new(config).expect("client")
}

fn responses(config: ResponsesConfig) -> ResponsesModel {
    ResponsesModel::new(config).expect("client")
}

fn gemini(config: GeminiConfig) -> GeminiModel {
    GeminiModel::new(config).expect("client")
}

fn recording(endpoint: RecordingEndpoint<Config>) -> EndpointModel<RecordingEndpoint<Config>> {
    EndpointModel::new(endpoint).expect("client")
}

fn with_timeout(
    model: &OpenAiCompatModel,
    context: &Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream {
    Smol.stream_with_timeout(model, context, options, timeout)
}

/// Runs a scenario on smol, with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
}

agentstream_testkit::http_scenario_tests! {
    openai: model,
    anthropic: anthropic,
    responses: responses,
    gemini: gemini,
    recording: recording,
    timer: agentstream_smol::Smol,
    with_timeout: with_timeout,
    run: run,
}
