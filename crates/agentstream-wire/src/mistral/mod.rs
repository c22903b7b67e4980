//! Mistral chat completions (`POST /v1/chat/completions`, `stream: true`),
//! pi-ai's `mistral-conversations`: a Chat-Completions-shaped stream whose
//! `delta.content` is a string or a list of items (`text`, and `thinking`
//! holding text parts), and Mistral's own request side.
//!
//! - [`projector`]: [`MistralProjector`], the chunks to the event
//!   protocol as pi-ai's provider reads them.
//! - [`request`]: the request body (Mistral's field names, thinking sent
//!   back as `thinking` items, tool-call ids rewritten to nine
//!   alphanumeric characters, error results prefixed `[tool error]`).
//! - [`config`]: [`Mistral`], the protocol (bearer key, `x-affinity` from
//!   the session id, `prompt_mode` or `reasoning_effort` by model).
//! - The server half (feature `server`): `decode`, the body read back with
//!   Chat Completions' reader in Mistral's dialect; the stream is written
//!   by Chat Completions' encoder in Mistral's dialect (thinking as
//!   `thinking` items, each tool-call chunk with its id). `serve` answers
//!   it under the prefix `/mistral` (`POST /mistral/v1/chat/completions`,
//!   the base URL `http://HOST/mistral`), as OpenAI's Chat Completions
//!   has the path `/v1/chat/completions`.

pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
pub mod projector;
pub mod request;

pub use config::{Mistral, MistralConfig, MISTRAL_BASE_URL};
pub use projector::{MistralProjector, MISTRAL_API};
pub use request::ToolCallIds;
