//! agentstream: a runtime-agnostic core for streaming model output.
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
