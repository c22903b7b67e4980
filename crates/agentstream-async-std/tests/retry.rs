//! End to end: the retry policy around the re-exported
//! `OpenAiCompatModel` on async-std, against scripted failures of the
//! mock server. Run with `cargo test -p agentstream-async-std --features
//! http --test retry`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream::model::RetryPolicy;
use agentstream_async_std::prelude::*;
use agentstream_testserver::retry_scenarios as scenarios;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

fn run(scenario: impl Future<Output = ()>) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(60), scenario)
            .await
            .expect("the scenario hung");
    });
}

#[test]
fn retries_server_errors_then_succeeds() {
    run(scenarios::retries_server_errors_then_succeeds(
        model,
        async_std::task::sleep,
    ));
}

#[test]
fn abort_during_the_wait() {
    run(scenarios::abort_during_the_wait(
        model,
        async_std::task::sleep,
    ));
}

#[test]
fn adapter_with_retry() {
    run(scenarios::adapter_with_retry(
        |config, policy: RetryPolicy| agentstream_async_std::with_retry(model(config), policy),
    ));
}
