//! agentstream: a runtime-agnostic core for streaming model output.
#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(any(test, loom))]
extern crate std;

pub mod diagnostic;
pub mod message;
