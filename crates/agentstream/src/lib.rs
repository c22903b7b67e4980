//! agentstream: a runtime-agnostic core for streaming model output.
//!
//! - [`event_stream`]: [`EventStream`], an event channel with a terminal
//!   result, awaitable by many.
//! - [`message`]: the Pi-compatible message IR, its lossless JSON and the
//!   tool-call linkage diagnostics.
//! - [`model`]: the [`ModelEvent`](model::ModelEvent) protocol, the
//!   [`Model`](model::Model) trait, cancellation and the deterministic
//!   [`ScriptedModel`](model::ScriptedModel).
//! - [`agent`]: the agent loop (tools, turns, Pi-shaped agent events).
//! - [`rt`]: the runtime seam ([`Timer`](rt::Timer) and
//!   [`Spawn`](rt::Spawn)) and what is built on it once for every runtime:
//!   spawned producers, timeouts, pauses, tool tasks.
//! - [`diagnostic`]: the finding type shared by the validators.
//!
//! The crate is `no_std` and needs `alloc`, a global allocator and atomic
//! compare-and-swap. It knows no runtime and no wire protocol: a host crate
//! implements [`rt::Timer`] and [`rt::Spawn`] for tokio, smol, async-std or
//! a JavaScript event loop, and the `agentstream-wire` crate speaks the
//! providers' protocols.
//!
//! # Choosing the lock
//!
//! Every stream, abort signal and scripted model keeps its shared state
//! behind one lock, taken for a few instructions at a time and never while
//! a waker is woken. Which lock is a cargo feature, decided once for the
//! whole program:
//!
//! | feature | lock | for |
//! |---|---|---|
//! | `std` | `std::sync::Mutex` | every host with an operating system; the adapter crates and the CLI enable it |
//! | `critical-section` | the [`critical-section`](https://docs.rs/critical-section) crate's mutex | microcontrollers: the firmware or its HAL provides the implementation |
//! | neither | a spin lock | `no_std` hosts that are single-threaded or whose threads are never preempted while holding it |
//!
//! The spin lock is only the fallback: if the thread holding it is
//! preempted, the other side spins for its whole time slice, and an
//! interrupt handler that takes a lock the interrupted code holds would
//! spin forever. If both features are on, `std` wins.
//!
//! Targets without atomic compare-and-swap (`thumbv6m`) are not supported:
//! the handles share their state through `alloc::sync::Arc`, which those
//! targets lack.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(any(feature = "std", test, loom))]
extern crate std;

pub mod agent;
pub mod civil;
pub mod diagnostic;
pub mod event_stream;
pub mod message;
pub mod model;
pub mod rt;
pub mod session;
mod sync;
mod yield_now;

pub use event_stream::{channel, EventStream, Producer, RefusedError, ResultFuture, StreamError};
pub use yield_now::{yield_now, YieldNow};

/// The crate README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
