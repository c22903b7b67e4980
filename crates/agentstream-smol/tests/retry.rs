//! End to end: the retry policy around `OpenAiCompatModel` on smol,
//! against scripted failures of the mock server. Run with
//! `cargo test -p agentstream-smol --features http --test retry`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

use agentstream::model::RetryPolicy;
use agentstream_smol::prelude::*;
use agentstream_smol::Pause;
use agentstream_testserver::retry_scenarios as scenarios;

fn model(config: OpenAiConfig) -> OpenAiCompatModel {
    OpenAiCompatModel::new(config).expect("client")
}

/// smol's timer, as the adapter's `with_retry` uses it.
fn sleep(duration: Duration) -> Pause {
    let pacer = agentstream_smol::pacer(duration);
    pacer()
}

fn run(scenario: impl Future<Output = ()>) {
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
}

#[test]
fn retries_server_errors_then_succeeds() {
    run(scenarios::retries_server_errors_then_succeeds(model, sleep));
}

#[test]
fn honours_retry_after_up_to_its_cap() {
    run(scenarios::honours_retry_after_up_to_its_cap(model, sleep));
}

#[test]
fn what_is_not_retried() {
    run(scenarios::what_is_not_retried(model, sleep));
}

#[test]
fn abort_during_the_wait() {
    run(scenarios::abort_during_the_wait(model, sleep));
}

#[test]
fn transport_failures_and_seeded_jitter() {
    run(scenarios::transport_failures_and_seeded_jitter(
        model, sleep,
    ));
}

#[test]
fn adapter_with_retry() {
    run(scenarios::adapter_with_retry(
        |config, policy: RetryPolicy| agentstream_smol::with_retry(model(config), policy),
    ));
}
