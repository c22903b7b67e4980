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
//!
//! The server half (feature `server`): `decode`, a Converse body read
//! back into a Pi context and options (the model from the URL), and
//! `encode`, model events written as `ConverseStream` event-stream
//! messages and the `Converse` JSON answer. `serve` answers
//! `POST /model/{modelId}/converse-stream` and `POST /model/{modelId}/converse`
//! (the endpoint URL `http://HOST`).

pub mod auth;
mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
#[cfg(feature = "server")]
pub mod encode;
mod projector;
mod request;

pub use config::{auth_headers, Bedrock, BedrockConfig, DEFAULT_REGION};
pub use projector::{BedrockProjection, BedrockProjector, BEDROCK_API};

use crate::sse::SseStream;

/// One streaming `ConverseStream` response: the event-stream decoder and
/// [`BedrockProjector`] joined, with the response limits.
pub type BedrockStream = SseStream<BedrockProjector>;

/// What a Bedrock call's path says: the model id (as the path carries it,
/// percent-encoded) and whether the call streams (`converse-stream`) or
/// not (`converse`). `None` for another path. A prefix before `/model/`
/// is allowed; a query or fragment is ignored; the id is one non-empty
/// path segment.
///
/// ```
/// use agentstream_wire::bedrock::route;
///
/// assert_eq!(route("/model/us.amazon.nova-lite-v1%3A0/converse-stream"),
///            Some(("us.amazon.nova-lite-v1%3A0", true)));
/// assert_eq!(route("/model/m/converse?x=1"), Some(("m", false)));
/// assert_eq!(route("/model//converse"), None);
/// assert_eq!(route("/model/a/b/converse"), None);
/// ```
pub fn route(path: &str) -> Option<(&str, bool)> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_end_matches('/');
    let (rest, stream) = match path.strip_suffix("/converse-stream") {
        Some(rest) => (rest, true),
        None => (path.strip_suffix("/converse")?, false),
    };
    let (_, model) = rest.rsplit_once("/model/")?;
    (!model.is_empty() && !model.contains('/')).then_some((model, stream))
}
