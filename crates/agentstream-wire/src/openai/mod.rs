//! OpenAI-compatible Chat Completions, sans IO: request bodies out,
//! response bytes in, [`ModelEvent`](agentstream::model::ModelEvent)s out.
//!
//! This covers every server that speaks the Chat Completions streaming
//! protocol (OpenAI, Groq, OpenRouter, DeepSeek, xAI, Mistral, vLLM,
//! Ollama, llama.cpp, …). Nothing here opens a socket: the HTTP adapters
//! send the request [`OpenAiConfig`] prepares (its body written by
//! [`OpenAiChat`]), feed
//! the response body to an [`OpenAiStream`] (through
//! [`http::exchange`](crate::http::exchange)) and push the events it
//! returns into their
//! [`AssistantMessageProducer`](agentstream::model::AssistantMessageProducer).
//!
//! - [`projector`]: [`OpenAiProjector`], `chat.completion.chunk` payloads to
//!   the event protocol; its documentation lists every rule (tool-call
//!   ordering, unparsable arguments, finish reasons, usage, truncation,
//!   abort).
//! - [`OpenAiStream`]: the [SSE decoder](crate::sse) and the projector
//!   joined, plus the HTTP error mapping (status, provider message,
//!   `Retry-After`) and the abort helpers.
//! - [`request`]: the request body of one call, and the provider
//!   differences, [`Compat`].
//! - [`config`]: [`OpenAiConfig`], an endpoint's settings, and the
//!   [`PreparedRequest`] an adapter sends.
//!
//! How each field of the final message and each stop reason compares with
//! Pi's provider: [`fidelity`](crate::fidelity).

mod blocks;
mod cache;
mod calls;
pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
#[cfg(feature = "server")]
pub mod encode;
pub mod projector;
pub mod request;
mod stream;
pub mod thinking;
pub(crate) mod wire;

pub use config::{OpenAiChat, OpenAiConfig, PreparedRequest};
pub use projector::{OpenAiProjector, OPENAI_COMPLETIONS_API};
pub use request::{Compat, RequestError};
pub use stream::OpenAiStream;
pub use thinking::ThinkingFormat;

/// The old name of [`OpenAiProjector`].
#[deprecated(note = "renamed to `OpenAiProjector`")]
pub type ChunkProjector = OpenAiProjector;
