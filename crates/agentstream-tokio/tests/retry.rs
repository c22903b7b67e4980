//! End to end: the retry policy around `OpenAiCompatModel` on tokio,
//! against scripted failures of the mock server. Run with
//! `cargo test -p agentstream-tokio --features http --test retry`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream::model::RetryPolicy;
use agentstream_testserver::retry_scenarios as scenarios;
use agentstream_tokio::prelude::*;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
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
fn retries_server_errors_then_succeeds() {
    run(scenarios::retries_server_errors_then_succeeds(
        model,
        tokio::time::sleep,
    ));
}

#[test]
fn honours_retry_after_up_to_its_cap() {
    run(scenarios::honours_retry_after_up_to_its_cap(
        model,
        tokio::time::sleep,
    ));
}

#[test]
fn what_is_not_retried() {
    run(scenarios::what_is_not_retried(model, tokio::time::sleep));
}

#[test]
fn abort_during_the_wait() {
    run(scenarios::abort_during_the_wait(model, tokio::time::sleep));
}

#[test]
fn transport_failures_and_seeded_jitter() {
    run(scenarios::transport_failures_and_seeded_jitter(
        model,
        tokio::time::sleep,
    ));
}

#[test]
fn adapter_with_retry() {
    run(scenarios::adapter_with_retry(
        |config, policy: RetryPolicy| agentstream_tokio::with_retry(model(config), policy),
    ));
}
