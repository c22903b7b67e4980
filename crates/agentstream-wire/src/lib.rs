//! agentstream-wire: the wire protocols of [`agentstream`], sans IO.
//!
//! Bytes and JSON go in, [`ModelEvent`](agentstream::model::ModelEvent)s
//! come out. Nothing here opens a socket, spawns a task or reads a clock.
//!
//! - [`sse`]: the incremental Server-Sent Events decoder and its encoder.
//!   SSE is a transport framing, not a provider detail: OpenAI's Chat
//!   Completions stream over it and so does Anthropic's Messages API.
//! - [`openai`]: OpenAI-compatible Chat Completions: [`build_request`]
//!   (`openai::build_request`), the [`ChunkProjector`](openai::ChunkProjector),
//!   [`OpenAiStream`](openai::OpenAiStream) and
//!   [`OpenAiConfig`](openai::OpenAiConfig), the endpoint configuration the
//!   HTTP adapters share.
//! - [`anthropic`]: Anthropic Messages: the request builder
//!   (`anthropic::build_request`), the
//!   [`EventProjector`](anthropic::EventProjector) from stream payloads to
//!   events, [`AnthropicStream`](anthropic::AnthropicStream) and
//!   [`AnthropicConfig`](anthropic::AnthropicConfig).
//! - [`endpoint`]: [`Endpoint`](endpoint::Endpoint), what an HTTP adapter
//!   needs from any provider's configuration, and the
//!   [`PreparedRequest`](endpoint::PreparedRequest) it sends.
//! - [`limits`]: [`Limits`](limits::Limits), the documented caps on what
//!   one response may make a client hold, settable by the caller.
//! - [`fidelity`]: the final message field by field and each stop
//!   reason, per provider, compared with Pi's own providers.
//! - [`pricing`]: [`Pricing`](pricing::Pricing), a model's prices per
//!   million tokens, which fill `usage.cost` as Pi computes it.
//! - [`options`]: the escape hatches every HTTP configuration has:
//!   [`ExtraHeaders`](options::ExtraHeaders) and the JSON merged into the
//!   body ([`merge_body`](options::merge_body)).
//! - [`surrogates`]: lone UTF-16 surrogate escapes, which JavaScript
//!   writes and serde_json refuses.
//! - [`http`]: what every HTTP adapter shares whatever the provider:
//!   [`ResponseHead`](http::ResponseHead), [`ResponseBody`](http::ResponseBody),
//!   [`TransportError`](http::TransportError) and [`exchange`](http::exchange),
//!   the runtime-neutral loop from one response to events, generic over a
//!   provider's [`ResponseStream`](http::ResponseStream).
//!
//! [`build_request`]: openai::build_request
//!
//! # Dependency direction
//!
//! ```text
//! agentstream        the core: events, messages, the Model trait; no wire protocol
//!     ↑
//! agentstream-wire   this crate: SSE, OpenAI Chat Completions, the exchange loop
//!     ↑
//! agentstream-tokio, agentstream-smol, agentstream-async-std
//!                    the runtime adapters: they move the bytes
//! ```
//!
//! The core knows no wire protocol, and this crate knows no runtime. An
//! adapter sends the request that [`OpenAiConfig::prepare`] builds, hands
//! the response to [`http::exchange`] with its runtime's sleep, and is done.
//! Each adapter re-exports this crate as `agentstream_wire`.
//!
//! [`OpenAiConfig::prepare`]: openai::OpenAiConfig::prepare
//!
//! The crate is `no_std` and needs `alloc`, like the core.
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;

pub mod anthropic;
pub mod cause;
pub mod config;
pub mod endpoint;
mod error_body;
pub mod fidelity;
pub mod host;
pub mod http;
mod json;
pub mod limits;
pub mod model;
pub mod openai;
pub mod options;
pub mod pricing;
pub mod replay;
pub mod request;
pub mod sse;
pub mod surrogates;
pub mod tap;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
