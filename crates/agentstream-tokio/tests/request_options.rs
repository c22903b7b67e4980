//! End to end on tokio: per-call request options, the configuration's extra
//! body and headers as the mock server receives them, timestamps and
//! costs, for both providers. Run with
//! `cargo test -p agentstream-tokio --features http --test request_options`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_testserver::request_scenarios;
use agentstream_tokio::prelude::*;

/// Runs a scenario with a generous guard against hangs.
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
fn openai_request_options() {
    run(request_scenarios::openai_request_options(|config| {
        OpenAiCompatModel::new(config).expect("client")
    }));
}

#[test]
fn anthropic_request_options() {
    run(request_scenarios::anthropic_request_options(|config| {
        AnthropicModel::new(config).expect("client")
    }));
}
