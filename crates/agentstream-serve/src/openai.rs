//! OpenAI Chat Completions, sans IO: a request body to a Pi
//! [`Context`](agentstream::message::Context), and model events to the SSE
//! chunks (or the one JSON completion) OpenAI sends.
//!
//! Both halves live in the wire crate's
//! [`openai`](agentstream_wire::openai) folder: the request decoder in
//! [`decode`](agentstream_wire::openai::decode), the stream encoder in
//! [`encode`](agentstream_wire::openai::encode); this module re-exports them.

pub use agentstream_wire::openai::decode::{decode_body, decode_request};
pub use agentstream_wire::openai::encode::{completion, usage_json, StreamEncoder};
