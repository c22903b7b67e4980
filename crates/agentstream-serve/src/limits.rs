//! The server's limits by default: request sizes, timeouts, connections,
//! and the answer of a script that ran out of turns. Each can be set on
//! the [`ServerBuilder`](crate::ServerBuilder).

use std::time::Duration;

/// The largest request body read by default: 32 MiB (Anthropic's own
/// request limit). A larger body gets HTTP 413 with the provider's error
/// body. See [`ServerBuilder::max_request_bytes`](crate::ServerBuilder::max_request_bytes).
pub const MAX_REQUEST_BYTES: usize = 32 << 20;

/// The most bytes of unfinished request bodies held across all
/// connections at once, by default: 256 MiB. A request whose body would
/// take more gets HTTP 503 (see
/// [`ServerBuilder::max_buffered_request_bytes`](crate::ServerBuilder::max_buffered_request_bytes)).
pub const MAX_BUFFERED_REQUEST_BYTES: usize = 256 << 20;

/// The status of a call made after a
/// [`ScriptedModel`](agentstream::model::ScriptedModel) ran out of turns.
pub const EXHAUSTED_STATUS: u16 = 500;

/// The OpenAI `code` of that answer (Anthropic's type is `api_error`); the
/// message is [`agentstream::model::EXHAUSTED_MESSAGE`].
pub const EXHAUSTED_CODE: &str = "script_exhausted";

/// How long a client may take to send a request's headers, from the
/// moment the connection waits for them (an idle keep-alive connection
/// included), by default: 30 s.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's body, by default: 60 s.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the recording proxy waits for the upstream, by default: to
/// connect, and for each read of its answer (the head, then every piece
/// of the body): 300 s. See
/// [`ServerBuilder::upstream_timeout`](crate::ServerBuilder::upstream_timeout).
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

/// The most connections open at once, by default (see
/// [`ServerBuilder::max_connections`](crate::ServerBuilder::max_connections)).
pub const MAX_CONNECTIONS: usize = 256;

/// Bodies larger than this are decoded on tokio's blocking pool, so a
/// heavy request never holds up the connections beside it.
pub(crate) const BLOCKING_BODY: usize = 64 << 10;
