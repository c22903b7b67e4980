//! Google Gemini (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`
//! and `:generateContent`, also under `/v1/`), sans IO: a request body to
//! a Pi [`Context`](agentstream::message::Context) and options, and model
//! events to the SSE chunks (or the one response) Gemini sends.
//!
//! Both halves live in the wire crate's
//! [`google`](agentstream_wire::google) folder: the request decoder in
//! [`decode`](agentstream_wire::google::decode), the stream encoder in
//! [`encode`](agentstream_wire::google::encode); this module re-exports them.

pub use agentstream_wire::google::decode::{decode_body, decode_request, route};
pub use agentstream_wire::google::encode::{generate_content_response, usage_json, StreamEncoder};
