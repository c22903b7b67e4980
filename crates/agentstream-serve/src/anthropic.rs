//! Anthropic Messages, sans IO: a request body to a Pi
//! [`Context`](agentstream::message::Context), and model events to the SSE
//! events (or the one JSON message) Anthropic sends.
//!
//! Both halves live in the wire crate's
//! [`anthropic`](agentstream_wire::anthropic) folder: the request decoder in
//! [`decode`](agentstream_wire::anthropic::decode), the stream encoder in
//! [`encode`](agentstream_wire::anthropic::encode); this module re-exports them.

pub use agentstream_wire::anthropic::decode::{decode_body, decode_request};
pub use agentstream_wire::anthropic::encode::{message, usage_json, StreamEncoder};
