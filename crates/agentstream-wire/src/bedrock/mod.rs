//! Amazon Bedrock's `ConverseStream` API (Pi's `bedrock-converse-stream`):
//! the request body (`request.rs`, as pi-ai builds it), the endpoint
//! ([`BedrockConfig`], `config.rs`) and the projector of its event-stream
//! body ([`BedrockProjector`], `projector.rs`). The body's framing is
//! [`eventstream`](crate::eventstream); the projection declares it
//! ([`Framing::EventStream`](crate::sse::Framing::EventStream)) and
//! [`SseStream`] decodes it.
//! [`auth`]: SigV4 signing and pi-ai's credential and region resolution
//! (the endpoint sends a Bedrock API key as `Authorization: Bearer` today;
//! a SigV4 caller signs the prepared request with
//! [`BedrockAuth::headers`](auth::BedrockAuth::headers)).

pub mod auth;
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
