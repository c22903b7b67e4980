//! End to end: the typed error causes of `OpenAiCompatModel` and
//! `AnthropicModel` over reqwest on tokio, against the mock server. Run
//! with `cargo test -p agentstream-tokio --features http --test errors`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_testserver::error_scenarios as scenarios;
use agentstream_tokio::prelude::*;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

fn anthropic(config: AnthropicConfig) -> AnthropicModel {
    AnthropicModel::new(config).expect("client")
}

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
        agentstream_tokio::stream_with_timeout::<OpenAiCompatModel>,
    ));
}

#[test]
fn anthropic_causes() {
    run(scenarios::anthropic_causes(anthropic));
}
