//! OpenAI Responses (`POST /v1/responses`), sans IO: a request body to a
//! Pi [`Context`](agentstream::message::Context) and options, and model
//! events to the SSE events (or the one Response object) OpenAI sends.
//!
//! Both halves live in the wire crate's
//! [`responses`](agentstream_wire::responses) folder: the request decoder in
//! [`decode`](agentstream_wire::responses::decode), the stream encoder in
//! [`encode`](agentstream_wire::responses::encode); this module re-exports them.

pub use agentstream_wire::responses::decode::{decode_body, decode_request};
pub use agentstream_wire::responses::encode::{response, usage_json, StreamEncoder};
