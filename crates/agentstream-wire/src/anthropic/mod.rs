//! Anthropic Messages, sans IO: response event payloads in,
//! [`ModelEvent`](agentstream::model::ModelEvent)s out.
//!
//! - [`projector`]: [`EventProjector`], the payloads of the `event:` +
//!   `data:` SSE stream of `POST /v1/messages` (`stream: true`) to the
//!   event protocol; its documentation lists every rule (blocks, stop
//!   reasons, usage, failure shapes).
//!
//! The request builder and the HTTP model for this protocol are not part
//! of this module yet.

pub mod projector;

pub use projector::{EventProjector, ANTHROPIC_MESSAGES_API};
