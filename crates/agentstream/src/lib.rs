//! agentstream: a runtime-agnostic core for streaming model output.
//!
//! - [`event_stream`]: [`EventStream`], an event channel with a terminal
//!   result, awaitable by many.
//! - [`message`]: the Pi-compatible message IR, its lossless JSON and the
//!   tool-call linkage diagnostics.
//! - [`model`]: the [`ModelEvent`](model::ModelEvent) protocol, the
//!   [`Model`](model::Model) trait, cancellation and the deterministic
//!   [`ScriptedModel`](model::ScriptedModel).
//! - [`diagnostic`]: the finding type shared by the validators.
//!
//! The crate is `no_std` and needs `alloc`, a global allocator and atomic
//! compare-and-swap. It knows no runtime: thin adapter crates spawn producers
//! and provide timers for tokio, smol and async-std.
#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(any(test, loom))]
extern crate std;

pub mod diagnostic;
pub mod event_stream;
pub mod message;
pub mod model;
mod sync;
mod yield_now;

pub use event_stream::{EventStream, Producer, RefusedError, ResultFuture, StreamError};
pub use yield_now::{yield_now, YieldNow};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
