//! Google Gemini (`models/{model}:streamGenerateContent?alt=sse`, the
//! Gemini API or Vertex AI), sans IO: request bodies out, response
//! payloads in, [`ModelEvent`](agentstream::model::ModelEvent)s out, like
//! the [`anthropic`](crate::anthropic) path.
//!
//! - [`projector`]: [`GeminiProjector`], the `data:` payloads (one
//!   `GenerateContentResponse` each) to the event protocol; its
//!   documentation lists every rule (parts, Gemini 3 streamed calls,
//!   signatures, finish and block reasons, usage).
//! - [`request`]: the request body of one call (written by [`Gemini`]): `contents`,
//!   `systemInstruction`, `tools`, `toolConfig` and `generationConfig`.
//! - [`schema`]: the JSON Schema subset of Gemini's OpenAPI-style
//!   `Schema`, for [`SchemaMode::OpenApi`].
//!
//! - [`config`]: the [`EndpointConfig`](crate::config::EndpointConfig) of
//!   the protocol, which every host's model takes.
//!
//! The projector is the shared [`Projector`](crate::sse::Projector) over
//! its [`GeminiProjection`](projector::GeminiProjection), so the generic
//! SSE stream drives it as it drives
//! [`AnthropicProjector`](crate::anthropic::AnthropicProjector).

pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
#[cfg(feature = "server")]
pub mod encode;
mod partial_args;
mod payload;
pub mod projector;
pub mod request;
pub mod schema;
pub mod signature;

pub use config::{Gemini, GeminiAuth, GeminiConfig, GEMINI_BASE_URL};
pub use projector::{GeminiApi, GeminiProjector, GEMINI_API, GEMINI_VERTEX_API};
pub use request::{RequestError, SchemaMode, Thinking, ThinkingLevel};

/// The old name of [`GeminiConfig`].
#[deprecated(note = "renamed to `GeminiConfig`")]
pub type GoogleConfig = GeminiConfig;
/// The old name of [`GeminiApi`].
#[deprecated(note = "renamed to `GeminiApi`")]
pub type GoogleApi = GeminiApi;
/// The old name of [`GeminiAuth`].
#[deprecated(note = "renamed to `GeminiAuth`")]
pub type GoogleAuth = GeminiAuth;
/// The old name of [`GEMINI_API`].
#[deprecated(note = "renamed to `GEMINI_API`")]
pub const GOOGLE_API: &str = GEMINI_API;
/// The old name of [`GEMINI_VERTEX_API`].
#[deprecated(note = "renamed to `GEMINI_VERTEX_API`")]
pub const GOOGLE_VERTEX_API: &str = GEMINI_VERTEX_API;
