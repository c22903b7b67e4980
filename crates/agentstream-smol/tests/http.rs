//! End to end: every HTTP scenario of `agentstream-testkit`'s `http` (both
//! providers, the typed causes, the request options, the base URLs,
//! retry and replay) on the hyper host (smol), against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-smol --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

/// Runs a scenario on smol, with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
}

// The makers name the prelude's types (what users import), so it stays complete.
agentstream_testkit::http_host_tests! {
    host: agentstream_smol,
    runtime: agentstream_smol::Smol,
    run: run,
}
