//! End to end on async-std (smol's client): per-call request options, the
//! configuration's extra body and headers as the mock server receives
//! them, timestamps and costs, for both providers. Run with
//! `cargo test -p agentstream-async-std --features http --test request_options`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_async_std::prelude::*;
use agentstream_testserver::request_scenarios;

/// Runs a scenario with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(60), scenario)
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
