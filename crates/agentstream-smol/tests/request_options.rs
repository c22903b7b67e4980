//! End to end on smol: per-call request options, the configuration's extra
//! body and headers as the mock server receives them, timestamps and
//! costs, for both providers. Run with
//! `cargo test -p agentstream-smol --features http --test request_options`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_smol::prelude::*;
use agentstream_testserver::request_scenarios;

/// Runs a scenario with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
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
