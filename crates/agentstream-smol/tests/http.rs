//! End to end: `OpenAiCompatModel` over hyper on smol against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-smol --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream_testserver::scenarios;
// The prelude is what users import; the tests use it so it stays complete.
use agentstream_smol::prelude::*;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

/// Runs a scenario on smol, with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
}

#[test]
fn random_chunk_boundaries() {
    run(scenarios::random_chunk_boundaries(model));
}

#[test]
fn many_random_splits() {
    run(scenarios::many_random_splits(model));
}

#[test]
fn slow_drip() {
    run(scenarios::slow_drip(model));
}

#[test]
fn mid_stream_disconnect() {
    run(scenarios::mid_stream_disconnect(model));
}

#[test]
fn truncated_body() {
    run(scenarios::truncated_body(model));
}

#[test]
fn error_statuses() {
    run(scenarios::error_statuses(model));
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
fn connect_timeout() {
    run(scenarios::connect_timeout(model));
}

#[test]
fn connection_refused() {
    run(scenarios::connection_refused(model));
}

#[test]
fn broken_context_is_not_sent() {
    run(scenarios::broken_context_is_not_sent(model));
}

#[test]
fn spawned_driver_gives_the_same_answer() {
    run(scenarios::random_chunk_boundaries(|config| {
        SpawnAll(model(config))
    }));
}

/// Spawns each call's producer on smol's global executor.
struct SpawnAll(OpenAiCompatModel);

impl Model for SpawnAll {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        spawn(self.0.stream(context, options))
    }
}

#[test]
fn base_url_with_query() {
    run(scenarios::base_url_with_query(model));
}

#[test]
fn url_without_host() {
    run(scenarios::url_without_host(model));
}

#[test]
fn endless_line() {
    run(scenarios::endless_line(model));
}

#[test]
fn endless_deltas() {
    run(scenarios::endless_deltas(model));
}
