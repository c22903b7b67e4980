//! The library of `agentstream-suite`, the unpublished root package of the
//! workspace that owns the workspace-level conformance suite (`tests/`) and
//! benchmarks (`benches/`). The top level has no `src/`: the root
//! `Cargo.toml` points the library here (`[lib] path`), beside the tests it
//! serves. It holds what more than one kind of target uses, so nothing is
//! included twice through `#[path]`, and it carries the README's examples
//! as doctests (only a library has doctests):
//!
//! - the five "stream plus result" [`Flavor`]s under comparison (ours and
//!   four peers), [`for_each_flavor!`], and the scenarios run on them
//!   ([`burst`], [`lifecycle`], [`consume`]): used by `benches/channels.rs`,
//!   `tests/allocations.rs` and `examples/profile-scenario.rs`;
//! - [`contended`]: the 16-pair load on an 8-worker tokio runtime with a
//!   busy thread, run by `tests/stress.rs` and by `benches/channels.rs`.
//!
//! The executors and scripted-model helpers that only the tests use stay in
//! `tests/common/` (each test binary includes the files it needs), and the
//! counting global allocator lives in the `agentstream-testkit` crate,
//! which the core's own tests use too.
#![forbid(unsafe_code)]
#![cfg(not(loom))]

pub mod contended;
mod flavors;

pub use flavors::*;

/// The top-level README's examples, compiled (and, but for the one that
/// needs the network, run) as doctests of this package.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
