//! End to end: the re-exported `OpenAiCompatModel` on async-std's
//! executor against the mock server on 127.0.0.1. Run with
//! `cargo test -p agentstream-async-std --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_testserver::scenarios;
// The prelude is what users import; the tests use it so it stays complete.
use agentstream_async_std::prelude::*;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
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
    run(scenarios::random_chunk_boundaries(model));
}

#[test]
fn error_statuses() {
    run(scenarios::error_statuses(model));
}

#[test]
fn mid_stream_disconnect() {
    run(scenarios::mid_stream_disconnect(model));
}

#[test]
fn abort_never_ending_body() {
    run(scenarios::abort_never_ending_body(model));
}

#[test]
fn idle_timeout() {
    run(scenarios::idle_timeout(model));
}

#[test]
fn base_url_with_query() {
    run(scenarios::base_url_with_query(model));
}

#[test]
fn url_without_host() {
    run(scenarios::url_without_host(model));
}
