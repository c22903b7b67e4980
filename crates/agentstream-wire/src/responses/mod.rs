//! OpenAI Responses (`POST /v1/responses`, `stream: true`), sans IO:
//! request bodies out, response payloads in,
//! [`ModelEvent`](agentstream::model::ModelEvent)s out, like the
//! [`anthropic`](crate::anthropic) path.
//!
//! - [`projector`]: [`ResponsesProjector`], the payloads of the `event:` +
//!   `data:` SSE stream to the event protocol; its documentation lists
//!   every rule (output items by `output_index`, the reasoning signature,
//!   stop reasons, usage, failure shapes).
//! - [`request`]: the request body of one call (written by
//!   [`OpenAiResponses`]): Pi's `input`
//!   items, `instructions`, tools, the per-call options, and the reasoning
//!   round trip (`store: false` with the encrypted reasoning included).
//!
//! - [`config`]: the [`EndpointConfig`](crate::config::EndpointConfig) of
//!   the protocol, which every host's model takes.
//!
//! The projector has the methods the SSE driver calls on the other
//! projectors (`push_data`, `finish`, `abort`, `interrupt`, `fail`,
//! `is_finished`, `set_limits`), so the generic SSE stream drives it as it
//! drives [`AnthropicProjector`](crate::anthropic::AnthropicProjector).

pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
#[cfg(feature = "server")]
pub mod encode;
pub mod projector;
pub mod request;

pub use config::{OpenAiResponses, ResponsesConfig, OPENAI_BASE_URL};
pub use projector::{ResponsesProjector, OPENAI_RESPONSES_API};
pub use request::{ReasoningSummary, RequestError};
