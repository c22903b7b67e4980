//! End to end: the typed error causes of `OpenAiCompatModel` and
//! `AnthropicModel` over the smol HTTP models on async-std, against the mock server. Run
//! with `cargo test -p agentstream-async-std --features http --test errors`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_async_std::prelude::*;
use agentstream_testserver::error_scenarios as scenarios;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

fn anthropic(config: AnthropicConfig) -> AnthropicModel {
    AnthropicModel::new(config).expect("client")
}

fn run(scenario: impl Future<Output = ()>) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(60), scenario)
            .await
            .expect("the scenario hung");
    });
}

#[test]
fn http_causes() {
    run(scenarios::http_causes(model));
}

#[test]
fn stream_causes() {
    run(scenarios::stream_causes(model));
}

#[test]
fn limit_causes() {
    run(scenarios::limit_causes(model));
}

#[test]
fn transport_causes() {
    run(scenarios::transport_causes(model));
}

#[test]
fn timeout_and_abort_causes() {
    run(scenarios::timeout_and_abort_causes(
        model,
        agentstream_async_std::stream_with_timeout::<OpenAiCompatModel>,
    ));
}

#[test]
fn anthropic_causes() {
    run(scenarios::anthropic_causes(anthropic));
}
