//! OpenAI-compatible Chat Completions, sans IO: request bodies out,
//! response bytes in, [`ModelEvent`](crate::model::ModelEvent)s out.
//!
//! This covers every server that speaks the Chat Completions streaming
//! protocol (OpenAI, Groq, OpenRouter, DeepSeek, xAI, Mistral, vLLM,
//! Ollama, llama.cpp, …). Nothing here opens a socket: the HTTP adapters
//! send [`build_request`]'s body, feed the response body to an
//! [`OpenAiStream`] and push the events it returns into their
//! [`AssistantMessageProducer`](crate::model::AssistantMessageProducer).
//!
//! - [`sse`]: the incremental Server-Sent Events decoder and an encoder.
//! - [`projector`]: [`ChunkProjector`], `chat.completion.chunk` payloads to the event
//!   protocol; its documentation lists every rule (tool-call ordering,
//!   unparsable arguments, finish reasons, usage, truncation, abort).
//! - [`OpenAiStream`]: both joined, plus the HTTP error and abort helpers.
//! - [`request`]: [`build_request`] with [`RequestOptions`] and [`Compat`].
//! - [`http`]: what the HTTP adapters share: [`OpenAiConfig`], the
//!   request they send, and [`exchange`](http::exchange), the
//!   runtime-neutral loop from a response to events.

mod calls;
mod driver;
pub mod http;
pub mod projector;
pub mod request;
pub mod sse;
mod wire;

pub use driver::OpenAiStream;
pub use http::OpenAiConfig;
pub use projector::{ChunkProjector, OPENAI_COMPLETIONS_API};
pub use request::{build_request, Compat, RequestError, RequestOptions};
