//! Serve scripted agentstream turns, or any [`Model`](agentstream::model::Model),
//! as an OpenAI-compatible (Chat Completions and Responses), Anthropic-compatible
//! and Gemini-compatible HTTP endpoint, so agents
//! written in any language can be tested turn by turn against
//! `http://127.0.0.1:PORT/v1`.
//!
//! - [`Server`] (tokio + hyper 1): start on port 0, read [`Server::url`],
//!   run the code under test, read [`Server::requests`] (each request
//!   decoded into Pi's context), [`Server::shutdown`].
//! - The protocols without IO (request body → Pi context; model events
//!   → SSE chunks or one JSON body) are the wire crate's server halves
//!   (its `server` feature): each provider folder's `decode` and `encode`
//!   ([`agentstream_wire::openai::encode`], …), chosen by [`Api`], and
//!   the routes ([`agentstream_wire::server::Route`]). This crate carries
//!   their bytes over hyper and tokio.
//! - [`ServeTurn`] and [`Step`]: `play`'s script format plus HTTP-level
//!   failures (an error status and body, a mid-stream error event, a cut
//!   connection) and turns picked by the request (`byRequest`); [`Script`]
//!   adds [`rules`]: replies picked by what the request says (its model,
//!   last user text, system prompt, tools, tool result, turn).
//! - [`timing`], [`quirks`] and [`Chaos`]: a turn written slowly
//!   (`"timing"`), as real providers' streams misbehave (`"quirks"`), or
//!   broken at random but reproducibly (`--chaos`, [`ServerBuilder::seed`]).
//! - [`cassette`]: a real provider recorded once through
//!   [`Server::proxy`] and answered again by [`Server::replay`], from
//!   plain files a team commits.
//!
//! # Per-test isolation
//!
//! A request with the header [`TEST_HEADER`] (`x-agentstream-test: ID`,
//! 1 to [`MAX_TEST_ID_BYTES`] visible ASCII bytes) belongs to the test
//! `ID`, which plays its own copy of the server's script, made the first
//! time the id is seen (the turns are shared, not copied): its own
//! cursor, rule counts (`times`, `nth`) and call numbers (from 0, so its
//! answers' ids and tool-call ids are the same however tests interleave),
//! its own request log (`GET /v1/requests` with the header lists only its
//! requests; without the header, only the requests that came without
//! one) and its own `GET /v1/unused`. Parallel tests on one server never
//! see each other. A recording proxy ([`Server::proxy`]) saves a test
//! id's exchanges in the subdirectory `DIR/<ID>` (created beneath `DIR`;
//! an id holding `/`, `\` or `..`, or `.`, gets 400; an entry there that
//! is not a directory itself, a symlink included, gets 500 and is never
//! followed), and does not send the header upstream; a replay
//! ([`Server::replay`]) answers a test id from `DIR/<ID>` when that
//! subdirectory exists (indexed the first time the id comes), else from
//! `DIR`. (Record on miss uses `DIR` for every id.) At most [`MAX_TEST_IDS`] ids are kept
//! ([`ServerBuilder::max_test_ids`]); past it the least recently used is
//! dropped with its requests, and starts afresh if it comes back. A
//! server given a [`Model`](agentstream::model::Model) as code (not a
//! script) shares that model between ids; each still has its own log
//! and rule counts.
//!
//! # Control at run time
//!
//! On a scripted server (not a proxy or a replay, which answer both with
//! 409):
//!
//! - `POST /v1/script`, the body a script as the CLI's file holds it (a
//!   JSON array of elements, or `{"rules", "turns"}`; see
//!   [`parse_script`]): replaces the script of the test id of the header,
//!   or, without it, the server's (which the ids seen afterwards start
//!   from; the ids already seen keep theirs). The lane starts the new
//!   script from its first turn; its call numbers and requests stay.
//!   `?append=1` extends the script instead: its turns after the turns,
//!   its rules after the rules, the cursor where it was. The answer is
//!   `{"test": ID|null, "rules": N, "turns": N, "appended": bool}` (the
//!   counts after the change). A bad script gets 400 with the CLI's text
//!   for a bad script file (`LINE: error: PATH: reason`), and nothing
//!   changes.
//! - `POST /v1/reset`: with the header, rewinds that id (cursor, rule
//!   counts, call numbers) and clears its requests; without it, every id
//!   and the server's own. The answer is `{"test": ID|null, "reset":
//!   true, "clearedRequests": N}`.
//!
//! A server may start with an empty script (`[]`): every call gets the
//! past-the-end answer until a script is posted.
//!
//! # The request log
//!
//! `GET /v1/requests` (and each line of the `--requests` file,
//! [`ServerBuilder::requests_file`]) gives each request as a JSON object
//! ([`RecordedRequest`]):
//!
//! | field | what |
//! |---|---|
//! | `call` | its number, from 0, in arrival order (each test id numbers its own) |
//! | `api` | the protocol it spoke, as Pi names it (`openai-completions`, `anthropic-messages`, `openai-responses`, `google-generative-ai`, `azure-openai-responses`, `mistral-conversations`, `bedrock-converse-stream`) |
//! | `model` | the request's model (Gemini's from its path) |
//! | `stream` | whether it asked for a stream |
//! | `context` | the request decoded into Pi's `Context` (`systemPrompt`, `messages`, `tools`): Pi's roles, not the SDK's (an OpenAI `tool` message is a `toolResult`) |
//! | `options` | the options it set, as [`options_json`] writes them (`{}` for none) |
//! | `test` | its test id; absent without one |
//! | `raw` | the body as received (its JSON, or a string if it was not JSON): with `?raw=1`, and always in the `--requests` file |
//! | `chaos` | what [chaos](Chaos) injected into its stream, `[{"event": N, "kind": "drop"\|"malformed"\|"disconnect"}, …]` (`N` counts the stream's SSE events, or Bedrock's event-stream messages, from 0); absent when nothing was. In the `--requests` file (whose request line is written on arrival) it comes as a line of its own, `{"call", "test"?, "chaos"}`, when the stream ends |
//!
//! # Clients that misbehave
//!
//! The server faces the network as a test tool does: the requests it
//! keeps are bounded ([`ServerBuilder::kept_requests`], default
//! [`MAX_KEPT_REQUESTS`] and [`MAX_KEPT_BYTES`]; `--requests FILE` keeps
//! all on disk), a request is decoded one message at a time with memory
//! proportional to its body (large ones on tokio's blocking pool, so they
//! never hold up the connections beside them), `GET /v1/requests` is
//! written piece by piece, connections that do not send their headers or
//! body in time are closed ([`HEADER_TIMEOUT`], [`BODY_TIMEOUT`]), at most
//! [`MAX_CONNECTIONS`] are open at once (past it, the oldest idle one is
//! closed for the newcomer), and a declared `Content-Length` past the
//! limit gets its 413 before the body is read (so `Expect: 100-continue`
//! gets no `100 Continue`).
//!
//! # Errors the server answers with
//!
//! Every error has the provider's body (see [`ApiError::body`]):
//!
//! | case | status |
//! |---|---|
//! | body not JSON, not an object, `messages` missing or malformed | 400 |
//! | a [`TEST_HEADER`] that is not 1 to [`MAX_TEST_ID_BYTES`] visible ASCII bytes, or given twice (the message names the header) | 400 |
//! | `POST /v1/script` with a bad script (the CLI's error text) | 400 |
//! | `POST /v1/script` or `/v1/reset` on a proxy or a replay | 409 |
//! | unknown route | 404 |
//! | wrong method on a route | 405 (with `Allow`) |
//! | body larger than [`MAX_REQUEST_BYTES`] (or the configured limit) | 413 |
//! | the bodies being received, across all connections, past [`MAX_BUFFERED_REQUEST_BYTES`] (or the configured limit) | 503 |
//! | body not received within [`BODY_TIMEOUT`] (or the configured one) | 408 |
//! | proxy: the upstream cannot be reached | 502 |
//! | replay: no cassette of any API matches (see [cross-dialect replay](cassette#cross-dialect-replay); the message names the closest and the first difference, OpenAI `code` [`CASSETTE_UNMATCHED_CODE`]) | [`EXHAUSTED_STATUS`] (400, not retried by the SDKs) |
//! | replay: a cassette's file changed or broke since the server started | 500 |
//! | script exhausted (the message is [`agentstream::model::EXHAUSTED_MESSAGE`], OpenAI `code` [`EXHAUSTED_CODE`]) | [`EXHAUSTED_STATUS`] (400, not retried by the SDKs) |
//! | strict ([`ServerBuilder::strict`]): no rule or turn answers (the message names the nearest rule and its first difference, OpenAI `code` [`UNMATCHED_CODE`]) | [`EXHAUSTED_STATUS`] (400) |
//! | no `byRequest` alternative matches (the message is [`NO_MATCH_MESSAGE`], OpenAI `code` [`UNMATCHED_CODE`]) | [`EXHAUSTED_STATUS`] (400) |
//! | the model failed before its first event; a non-streaming call whose turn fails | 500 |
//!
//! A turn that fails after it started streaming is sent as the provider's
//! mid-stream error event after HTTP 200.

// `ApiError` is the error of the request-decoding and script paths; it is
// built at most once per HTTP error response, so its size (about 160 bytes)
// costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

mod accept;
mod answer;
mod builder;
mod call;
pub mod cassette;
mod chaos;
mod control;
mod edge;
mod error;
pub mod error_headers;
mod full_script;
mod held;
mod lanes;
mod limits;
mod listing;
mod log;
mod manner;
mod matching;
mod proxy;
mod pump;
pub mod quirks;
mod response;
mod route;
pub mod rules;
mod script;
mod server;
mod state;
mod template;
pub mod timing;

pub use agentstream_wire::server::{options_json, ApiError, DecodedRequest};
/// Which provider's wire format a request speaks: the wire crate's one
/// list of protocols.
pub use agentstream_wire::Api;
pub use builder::ServerBuilder;
pub use chaos::{Chaos, CHAOS_HEADER};
pub use control::{parse_script, LineCursor};
pub use error::BindError;
pub use full_script::Script;
pub use lanes::{MAX_TEST_IDS, MAX_TEST_ID_BYTES, TEST_HEADER};
pub use limits::{
    BODY_TIMEOUT, CASSETTE_UNMATCHED_CODE, EXHAUSTED_CODE, EXHAUSTED_STATUS, HEADER_TIMEOUT,
    MAX_BUFFERED_REQUEST_BYTES, MAX_CONNECTIONS, MAX_REQUEST_BYTES, UNMATCHED_CODE,
    UPSTREAM_TIMEOUT,
};
pub use log::{RecordedRequest, MAX_KEPT_BYTES, MAX_KEPT_REQUESTS};
pub use matching::MAX_REGEX_BYTES;
pub use rules::Rule;
pub use script::{Alternative, ServeTurn, Step, NO_MATCH_MESSAGE};
pub use server::Server;

/// What the fuzz targets (`fuzz/`) reach that is not public API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::proxy::recorded_answer;
}
