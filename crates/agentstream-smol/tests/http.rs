//! End to end: `OpenAiCompatModel` over hyper on smol against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-smol --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream::openai::OpenAiConfig;
use agentstream_smol::OpenAiCompatModel;
use agentstream_testserver::scenarios;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config)
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

impl agentstream::model::Model for SpawnAll {
    fn stream(
        &self,
        context: &agentstream::message::Context,
        options: agentstream::model::StreamOptions,
    ) -> agentstream::model::ModelStream {
        agentstream_smol::spawn(self.0.stream(context, options))
    }
}
