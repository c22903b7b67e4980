//! End to end: `AnthropicModel` (smol's client) on async-std's executor against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-async-std --features http --test anthropic_http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_testserver::anthropic_scenarios;
// The prelude is what users import; the tests use it so it stays complete.
use agentstream_async_std::prelude::*;

fn model(config: AnthropicConfig) -> AnthropicModel {
    AnthropicModel::new(config).expect("client")
}

/// Runs a scenario on async-std, with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(60), scenario)
            .await
            .expect("the scenario hung");
    });
}

#[test]
fn random_chunk_boundaries() {
    run(anthropic_scenarios::random_chunk_boundaries(model));
}

#[test]
fn slow_drip() {
    run(anthropic_scenarios::slow_drip(model));
}

#[test]
fn mid_stream_disconnect() {
    run(anthropic_scenarios::mid_stream_disconnect(model));
}

#[test]
fn error_event_after_200() {
    run(anthropic_scenarios::error_event_after_200(model));
}

#[test]
fn cut_off_in_tool_use() {
    run(anthropic_scenarios::cut_off_in_tool_use(model));
}

#[test]
fn error_statuses() {
    run(anthropic_scenarios::error_statuses(model));
}

#[test]
fn abort_never_ending_body() {
    run(anthropic_scenarios::abort_never_ending_body(model));
}

#[test]
fn idle_timeout() {
    run(anthropic_scenarios::idle_timeout(model));
}
