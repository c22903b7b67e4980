//! agentstream-wire: the wire protocols of [`agentstream`], sans IO, and
//! the one call path from a context to events.
//!
//! Bytes and JSON go in, [`ModelEvent`](agentstream::model::ModelEvent)s
//! come out. Nothing here opens a socket, spawns a task or reads a clock:
//! a [`Host`](host::Host) does, and each runtime adapter implements one.
//!
//! - [`model`]: [`EndpointModel`](model::EndpointModel), the call path:
//!   the timestamp, the request with the call's options, the URL check,
//!   the exchange, the typed cause; `OpenAiCompatModel<H>`,
//!   `AnthropicModel<H>`, `ResponsesModel<H>` and `GeminiModel<H>` name it
//!   per provider.
//! - [`host`]: [`Host`](host::Host), what a runtime implements (send,
//!   sleep, wall clock).
//! - [`config`]: [`EndpointConfig`](config::EndpointConfig), every
//!   provider's configuration, generic over its [`Protocol`](config::Protocol),
//!   whose body writer takes one borrowed [`Call`](config::Call).
//! - [`sse`]: the incremental SSE decoder, its encoder, and
//!   [`SseStream`](sse::SseStream), the decoder over a provider's projector.
//! - [`openai`]: OpenAI-compatible Chat Completions: the request builder,
//!   the [`OpenAiProjector`](openai::OpenAiProjector),
//!   [`OpenAiStream`](openai::OpenAiStream) and
//!   [`OpenAiConfig`](openai::OpenAiConfig).
//! - [`anthropic`]: Anthropic Messages: the request builder, the
//!   [`AnthropicProjector`](anthropic::AnthropicProjector),
//!   [`AnthropicStream`](anthropic::AnthropicStream) and
//!   [`AnthropicConfig`](anthropic::AnthropicConfig).
//! - [`responses`]: OpenAI Responses: the request builder
//!   (written by
//!   [`OpenAiResponses`](responses::OpenAiResponses)), the
//!   [`ResponsesProjector`](responses::ResponsesProjector) and
//!   [`ResponsesConfig`](responses::ResponsesConfig).
//! - [`gemini`]: Google Gemini `streamGenerateContent` (the Gemini API or
//!   Vertex AI): the request builder
//!   (written by [`Gemini`](gemini::Gemini)), the
//!   [`GeminiProjector`](gemini::GeminiProjector) and
//!   [`GeminiConfig`](gemini::GeminiConfig).
//! - [`http`]: [`exchange`](http::exchange), the response loop, with
//!   [`ResponseHead`](http::ResponseHead), [`ResponseBody`](http::ResponseBody)
//!   and [`TransportError`](http::TransportError).
//! - [`endpoint`]: [`Endpoint`](endpoint::Endpoint), what the call path
//!   needs from a configuration, and the [`PreparedRequest`](endpoint::PreparedRequest).
//! - [`recording`] and [`replay`]: recording response bodies, and
//!   [`ReplayModel`](replay::ReplayModel) replaying them through the real
//!   exchange.
//! - `server` (the `server` feature): the protocols' server halves. Each
//!   provider folder holds, beside its request builder and projector, a
//!   `decode` module (the request body read back into a Pi context) and
//!   an `encode` module (model events written as the provider's stream);
//!   `server` holds what they share (`DecodedRequest`, `ApiError`, the SSE
//!   `Events` buffer). `agentstream-serve` carries them over HTTP.
//! - [`request`], [`cause`], [`limits`], [`options`], [`pricing`],
//!   [`surrogates`], [`fidelity`]: what every provider shares (the
//!   request error, the typed causes, the response limits, extra headers
//!   and body, prices, lone surrogates, the fidelity notes against Pi).
//!
//! # Dependency direction
//!
//! ```text
//! agentstream        the core: events, messages, the Model trait; no wire protocol
//!     ↑
//! agentstream-wire   this crate: SSE, the providers, the call path over `Host`
//!     ↑
//! agentstream-tokio, -smol, -async-std, -wasm
//!                    the hosts: they move the bytes, and name the models
//! ```
//!
//! The core knows no wire protocol, and this crate knows no runtime. Each
//! adapter re-exports this crate as `agentstream_wire`.
//!
//! The crate is `no_std` and needs `alloc`, like the core.
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;

pub mod anthropic;
mod api;
pub mod azure;
pub mod bedrock;
pub mod cause;
pub mod config;
mod cut_json;
pub mod endpoint;
pub mod env;
mod error_body;
mod event_writer;
pub mod eventstream;
pub mod fidelity;
pub mod gemini;
pub mod host;
pub mod http;
mod json;
pub mod limits;
pub mod mistral;
pub mod model;
pub mod openai;
pub mod options;
pub mod prelude;
pub mod pricing;
pub mod recording;
pub mod replay;
pub mod request;
pub mod responses;
#[cfg(feature = "server")]
pub mod server;
pub mod sse;
pub mod surrogates;

// Feature `catalogue`: pi-ai's model catalogue as configured endpoints.
#[cfg(feature = "catalogue")]
pub mod catalogue;

pub use api::{Api, ProtocolVisitor};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
