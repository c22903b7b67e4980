//! Amazon Bedrock's `ConverseStream` API (Pi's `bedrock-converse-stream`):
//! the request body (`request.rs`, as pi-ai builds it), the endpoint
//! ([`BedrockConfig`], `config.rs`) and the projector of its event-stream
//! body ([`BedrockProjector`], `projector.rs`). The body's framing is
//! [`eventstream`](crate::eventstream); the projection declares it
//! ([`Framing::EventStream`](crate::sse::Framing::EventStream)) and
//! [`SseStream`](crate::sse::SseStream) decodes it.

mod config;
mod projector;
mod request;

pub use config::{
    auth_headers, bedrock_base_url, resolve_region, Bedrock, BedrockConfig, DEFAULT_REGION,
};
pub use projector::{BedrockProjection, BedrockProjector, BEDROCK_API};

use crate::sse::SseStream;

/// One streaming `ConverseStream` response: the event-stream decoder and
/// [`BedrockProjector`] joined, with the response limits.
pub type BedrockStream = SseStream<BedrockProjector>;
