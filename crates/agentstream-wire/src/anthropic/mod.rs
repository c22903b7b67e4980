//! Anthropic Messages, sans IO: request bodies out, response bytes in,
//! [`ModelEvent`](agentstream::model::ModelEvent)s out, like the
//! [`openai`](crate::openai) path.
//!
//! - [`projector`]: [`AnthropicProjector`], the payloads of the `event:` +
//!   `data:` SSE stream of `POST /v1/messages` (`stream: true`) to the
//!   event protocol; its documentation lists every rule (blocks, stop
//!   reasons, usage, failure shapes).
//! - [`AnthropicStream`]: the [SSE decoder](crate::sse) and the projector
//!   joined, plus the HTTP error mapping; the
//!   [`ResponseStream`](crate::http::ResponseStream) that
//!   [`http::exchange`](crate::http::exchange) drives.
//! - [`request`]: the request body of one call (written by
//!   [`AnthropicMessages`]), with
//!   the core's [`ToolChoice`](agentstream::model::ToolChoice) (`Required`
//!   is sent as `any`); tool-call ids are made acceptable by [`ToolIds`].
//! - [`config`]: [`AnthropicConfig`], an endpoint's settings, which
//!   prepares the request (`x-api-key`, `anthropic-version`) an adapter
//!   sends.
//!
//! How each field of the final message and each stop reason compares with
//! Pi's provider: [`fidelity`](crate::fidelity).

mod block_end;
mod blocks;
pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
#[cfg(feature = "server")]
pub mod encode;
mod ids;
mod payload;
pub mod projector;
pub mod request;
mod stream;
pub mod thinking;

pub use config::{AnthropicConfig, AnthropicMessages, ANTHROPIC_BASE_URL, ANTHROPIC_VERSION};
pub use ids::{is_valid_tool_id, ToolIds, MAX_TOOL_ID_LEN};
pub use projector::{AnthropicProjector, ANTHROPIC_MESSAGES_API};
pub use request::{effort_budget, RequestError, DEFAULT_MAX_TOKENS};
pub use stream::AnthropicStream;

/// The old name of [`AnthropicProjector`].
#[deprecated(note = "renamed to `AnthropicProjector`")]
pub type EventProjector = AnthropicProjector;
