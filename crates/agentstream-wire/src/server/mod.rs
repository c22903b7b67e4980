//! The server half of the protocols, shared: what a server needs to
//! read the requests the client halves write and to write the answers
//! their projectors read (behind the `server` feature; `alloc` only).
//!
//! Each provider folder holds its own server half beside its client half:
//! `decode.rs` (a request body to a Pi context and options: what the
//! request builder writes, read back) and `encode.rs` (model events to
//! the provider's SSE events or its one JSON answer: what the projector
//! reads). They are re-exported from the provider modules
//! ([`openai`](crate::openai), [`anthropic`](crate::anthropic),
//! [`responses`](crate::responses), [`gemini`](crate::gemini),
//! [`bedrock`](crate::bedrock)) as
//! `decode_request`, `decode_body`, `StreamEncoder`, `usage_json` and the
//! whole answer's function. What they share is here:
//!
//! - [`DecodedRequest`]: a decoded request (the context, model, stream
//!   flag and options), and [`options_json`], its options in the form a
//!   server records;
//! - [`ApiError`]: an HTTP error answer, rendered as each provider's
//!   error body;
//! - [`Events`]: SSE events written into one buffer, taken as bytes
//!   (Bedrock's binary event-stream messages too, one event each);
//! - [`Encoder`]: the four stream encoders as one value, with
//!   [`answer_id`], [`whole_answer`] and [`decode_body`] the other choices
//!   a server makes by protocol;
//! - [`Route`], [`answering_api`] and [`route_name`]: a served request's
//!   route read from its path (the protocol, Gemini's model and
//!   streaming), and the protocol a path that names no call is answered
//!   in;
//! - [`Wire`] and [`message_steps`]: a model event as the encoders read
//!   it, and a whole message as the steps its stream would play.
//!
//! Nothing here does IO: `agentstream-serve` carries these bytes over
//! HTTP.

// `ApiError` is the error of the request decoders; it is built at most
// once per HTTP error answer, so its size (about 160 bytes) costs nothing
// worth boxing for.
#![allow(clippy::result_large_err)]

pub(crate) mod encoder;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod options;
pub(crate) mod prelude;
pub(crate) mod request;
pub(crate) mod route;
pub(crate) mod steps;
pub(crate) mod tokens;
pub(crate) mod view;

pub use encoder::{answer_id, decode_body, whole_answer, Encoder};
pub use error::ApiError;
pub use events::Events;
pub use options::options_json;
pub use request::DecodedRequest;
pub use route::{answering_api, route_name, Route};
pub use steps::{message_steps, Blocks, Kind, Wire};
