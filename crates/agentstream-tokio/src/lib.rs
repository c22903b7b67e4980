//! Run [`agentstream`] model calls on [tokio](https://tokio.rs).
//!
//! The core crate knows no runtime: a [`ModelStream`] runs its own producer
//! (its *driver*) whenever it is polled. This crate adds what a tokio user
//! expects on top:
//!
//! - [`Tokio`]: the runtime as the core's [`Timer`] and [`Spawn`], and so
//!   a [`Runtime`], whose methods are the core's runtime-generic code
//!   ([`agentstream::rt`]) on tokio:
//!   - [`spawn_stream`](Runtime::spawn_stream) /
//!     [`spawn_driver`](Runtime::spawn_driver): run a call's producer as a
//!     tokio task, so it keeps going while the consumer is busy elsewhere.
//!     The events, the result and the trace are those of the self-driven
//!     stream.
//!   - [`stream_with_timeout`](Runtime::stream_with_timeout): start a call
//!     that is aborted after a duration, measured with tokio's timer,
//!     through the call's [`AbortSignal`]. A call cut off mid-stream ends
//!     with `error(aborted)` carrying the text produced so far.
//!   - [`pause`](Runtime::pause): a pause for
//!     [`ScriptedModel::with_pacer`], so scripted calls take real time, or
//!     for the agent loop's abort grace.
//!   - [`tool_spawner`](Runtime::tool_spawner),
//!     [`with_retry`](Runtime::with_retry): tool calls as tokio tasks;
//!     retries waiting on tokio's timer.
//! - Cancel on drop: a spawned producer stops as soon as the consumer has
//!   dropped the stream and every result handle. The task then completes; it
//!   never leaks and does no further work.
//!
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GeminiModel`:
//!   real models behind the same boundary, streaming from any
//!   OpenAI-compatible endpoint, Anthropic's Messages API, OpenAI's
//!   Responses API or Google Gemini over
//!   reqwest.
//!
//! Everything here needs to run inside a tokio runtime with the timer
//! enabled (`Builder::enable_time`, which `#[tokio::main]` does).
//!
//! [`prelude`] brings everything a call needs into scope in one `use`. The
//! crates underneath are re-exported: [`agentstream`], the core, and
//! [`agentstream_wire`], the wire protocols (SSE, OpenAI Chat Completions).
//!
//! ```
//! use std::num::NonZeroUsize;
//! use std::time::Duration;
//!
//! use agentstream_tokio::prelude::*;
//! use futures_util::StreamExt;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     ScriptedTurn::message(assistant([text("hello")], StopReason::Stop)),
//!     // Ten deltas with a long pause between them: the timeout cuts it off.
//!     ScriptedTurn::message(assistant([text("a long answer")], StopReason::Stop))
//!         .chunked(NonZeroUsize::new(10).unwrap()),
//! ])
//! .with_pacer(Tokio.pause(Duration::from_secs(60)));
//! let context = Context::from_messages([user("hi").into()]);
//!
//! let mut first = Tokio.spawn_stream(model.stream(&context, StreamOptions::default()));
//! while let Some(event) = first.next().await {
//!     println!("{}", event.type_name());
//! }
//! assert_eq!(first.result().await.text(), "hello");
//!
//! let options = StreamOptions::default();
//! let mut second = Tokio.stream_with_timeout(&model, &context, options, Duration::from_secs(1));
//! let result = second.result().await;
//! assert_eq!(result.stop_reason, StopReason::Aborted);
//! assert_eq!(result.text(), "a "); // the first of ten deltas
//! # });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On docs.rs, items behind the `http` feature say so.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::future::Future;
use std::time::Duration;

pub use agentstream::rt::Runtime;
use agentstream::rt::{Spawn, Timer};

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "http")]
pub use http::{
    AnthropicModel, AzureModel, BedrockModel, Body, EndpointModel, GeminiModel, MistralModel,
    OpenAiCompatModel, Reqwest, ResponsesModel,
};

/// A model of pi-ai's catalogue as a configured model on this host, in
/// one call: the protocol its api names (Chat Completions with its compat
/// flags, Anthropic, Responses, Gemini, Azure OpenAI Responses, Mistral,
/// Bedrock), its base URL, headers, prices, reasoning facts and pi-ai's
/// default output limit (see [`agentstream_wire::catalogue`]).
///
/// ```
/// let model = agentstream_models::get_model("anthropic", "claude-sonnet-4-5").unwrap();
/// let configured = agentstream_tokio::model_from_catalogue(model, Some("sk-ant")).unwrap();
/// # drop(configured);
/// let mistral = agentstream_models::get_model("mistral", "codestral-latest").unwrap();
/// let configured = agentstream_tokio::model_from_catalogue(mistral, Some("key")).unwrap();
/// # drop(configured);
/// ```
///
/// # Errors
/// A [`CatalogueModelError`](agentstream_wire::catalogue::CatalogueModelError)
/// for an api this crate does not speak, a refused header, or a client
/// that cannot be built.
#[cfg(all(feature = "http", feature = "catalogue"))]
pub fn model_from_catalogue(
    model: &agentstream_models::Model,
    api_key: Option<&str>,
) -> Result<Box<dyn Model + Send + Sync>, agentstream_wire::catalogue::CatalogueModelError> {
    agentstream_wire::catalogue::model_from_catalogue::<Reqwest>(model, api_key)
}

/// The old name of [`GeminiModel`].
#[cfg(feature = "http")]
#[deprecated(note = "renamed to `GeminiModel`")]
pub type GoogleModel = GeminiModel;

pub use agentstream;
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, Model, ModelEvent, ModelProducer, ModelResult,
    ModelStream, ScriptedModel, ScriptedTurn, StreamOptions,
};
// The names the core deprecated (#36), re-exported for one release.
#[allow(deprecated)]
pub use agentstream::model::{ModelDriver, ResultHandle};
pub use agentstream::{EventStream, Producer, StreamError};
pub use agentstream_wire;

/// Everything a tokio user of agentstream needs, in one `use`:
///
/// ```
/// use agentstream_tokio::prelude::*;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let context = Context::from_messages([user("hello").into()]);
/// let _stream: ModelStream = model.stream(&context, StreamOptions::default());
/// ```
///
/// It holds what every adapter's prelude holds
/// ([`agentstream_wire::prelude`]: the [`Model`] trait and its types, the
/// scripted test double, the agent loop and its tools, the
/// [`Context`](agentstream::message::Context) and the message builders,
/// the providers' configurations), this crate's [`Tokio`] and the
/// [`Runtime`] trait that gives it its methods (`Tokio.spawn_stream`,
/// `Tokio.stream_with_timeout`, `Tokio.pause`, `Tokio.tool_spawner`,
/// `Tokio.with_retry`), and, with the `http` feature,
/// `OpenAiCompatModel`, `AnthropicModel`, `ResponsesModel`,
/// `GeminiModel`, `BedrockModel`, `AzureModel` and `MistralModel`.
pub mod prelude {
    #[cfg(feature = "http")]
    pub use crate::{
        AnthropicModel, AzureModel, BedrockModel, GeminiModel, MistralModel, OpenAiCompatModel,
        ResponsesModel,
    };
    pub use crate::{Runtime, Tokio};
    pub use agentstream_wire::prelude::*;
}

/// The tokio runtime as agentstream's [`Timer`] ([`tokio::time::sleep`]
/// and the system clock) and [`Spawn`] ([`tokio::spawn`]): what the
/// core's runtime-generic code ([`agentstream::rt`]) runs on here, through
/// the methods of [`Runtime`].
///
/// Its sleeps and tasks need a tokio runtime with the timer enabled; used
/// outside one, they panic like [`tokio::spawn`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Tokio;

impl Timer for Tokio {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, duration: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(duration)
    }

    fn now_unix_ms(&self) -> u64 {
        agentstream::model::system_unix_millis()
    }
}

impl Spawn for Tokio {
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(tokio::spawn(task));
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
