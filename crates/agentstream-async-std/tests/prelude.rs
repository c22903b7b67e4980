//! The prelude holds the same names it held before it re-exported
//! `agentstream_wire::prelude`: naming each one fails to compile when one
//! goes missing.

// One list of names for every native host (`agentstream_testkit::host`).
agentstream_testkit::prelude_names!(host: agentstream_async_std, runtime: AsyncStd);

// The bodies name the prelude's items alone (`agentstream_testkit::host`).
agentstream_testkit::prelude_tests!(host: agentstream_async_std, runtime: AsyncStd, block_on: async_std::task::block_on);

#[cfg(feature = "http")]
agentstream_testkit::provider_alias_tests!(host: agentstream_async_std, test: test);

// The env-reading constructors exist on the aliases.
#[cfg(feature = "http")]
agentstream_testkit::from_env_exists!(agentstream_async_std);
