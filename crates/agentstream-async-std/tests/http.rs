//! End to end: every HTTP scenario of `agentstream-testkit`'s `http` (both
//! providers, the typed causes, the request options, the base URLs,
//! retry and replay) on smol's hyper host under async-std's executor, against the mock server on
//! 127.0.0.1. Run with `cargo test -p agentstream-async-std --features http`.
#![cfg(feature = "http")]

use std::future::Future;
use std::time::Duration;

/// Runs a scenario on async-std, with a generous guard against hangs.
fn run(scenario: impl Future<Output = ()>) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(60), scenario)
            .await
            .expect("the scenario hung");
    });
}

// The makers name the prelude's types (what users import), so it stays complete.
agentstream_testkit::http_host_tests! {
    host: agentstream_async_std,
    runtime: agentstream_async_std::AsyncStd,
    run: run,
}
