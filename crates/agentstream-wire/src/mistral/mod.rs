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

pub mod config;
pub mod projector;
pub mod request;

pub use config::{Mistral, MistralConfig, MISTRAL_BASE_URL};
pub use projector::{MistralProjector, MISTRAL_API};
pub use request::ToolCallIds;
