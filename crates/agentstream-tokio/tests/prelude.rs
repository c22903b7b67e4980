//! The prelude holds the same names it held before it re-exported
//! `agentstream_wire::prelude`: naming each one fails to compile when one
//! goes missing.

// One list of names for every native host (`agentstream_testkit::host`).
agentstream_testkit::prelude_names!(host: agentstream_tokio, runtime: Tokio);

/// Runs `future` on a current-thread runtime with its timer (what
/// `#[tokio::test]` gives a test).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(future)
}

// The bodies name the prelude's items alone (`agentstream_testkit::host`).
agentstream_testkit::prelude_tests!(host: agentstream_tokio, runtime: Tokio, block_on: block_on);

#[cfg(feature = "http")]
agentstream_testkit::provider_alias_tests!(host: agentstream_tokio, test: test);

// The env-reading constructors exist on the aliases.
#[cfg(feature = "http")]
agentstream_testkit::from_env_exists!(agentstream_tokio);
