//! What agentstream's tests share, in one unpublished crate:
//!
//! - [`conformance`] (feature `conformance`, `no_std + alloc`): the
//!   runtime-neutral bodies every host runs (the workspace suite's six
//!   native executors, WebAssembly, the Cortex-M firmware), listed by
//!   [`for_each_body!`] and [`for_each_agent_body!`];
//! - [`http`] (feature `http`): the blocking HTTP/1.1 mock server on
//!   `127.0.0.1` and the scenarios every adapter runs against it
//!   ([`for_each_http_scenario!`], [`http_scenario_tests!`]);
//! - [`host`] (feature `http`): what the native hosts' examples and agent
//!   tests share (the example program, a probe tool, result helpers);
//! - [`CountingAllocator`] and its figures ([`measure`], …; feature `std`,
//!   no dependency): the one counting global allocator of the workspace;
//! - [`golden`] (feature `std`): the golden-file comparison of the
//!   transcript tests.
//!
//! Every feature is on by default. The core's and the wire crate's tests
//! take `std` alone, WebAssembly and the firmware `conformance` alone.
#![cfg_attr(not(feature = "std"), no_std)]
// Only the counting allocator (`counting.rs`) implements an unsafe trait.
#![deny(unsafe_code)]

extern crate alloc;

#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "std")]
mod counting;
#[cfg(feature = "std")]
pub mod golden;
#[cfg(feature = "http")]
pub mod host;
#[cfg(feature = "http")]
pub mod http;
mod providers;

#[cfg(feature = "std")]
pub use counting::{
    allocated_bytes, allocations, live_bytes, measure, peak_bytes, CountingAllocator,
};
