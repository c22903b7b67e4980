//! Amazon Bedrock's `ConverseStream` API (Pi's `bedrock-converse-stream`):
//! the projector of its event-stream body ([`BedrockProjector`],
//! `projector.rs`). The body's framing is
//! [`eventstream`](crate::eventstream); the projection declares it
//! ([`Framing::EventStream`](crate::sse::Framing::EventStream)) and
//! [`SseStream`](crate::sse::SseStream) decodes it.

mod projector;

pub use projector::{BedrockProjection, BedrockProjector, BEDROCK_API};

use crate::sse::SseStream;

/// One streaming `ConverseStream` response: the event-stream decoder and
/// [`BedrockProjector`] joined, with the response limits.
pub type BedrockStream = SseStream<BedrockProjector>;
