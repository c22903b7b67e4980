//! Run [`agentstream`] model calls on [smol](https://docs.rs/smol).
//!
//! The core crate knows no runtime: a [`ModelStream`] runs its own producer
//! (its *driver*) whenever it is polled. This crate adds what a smol user
//! expects on top:
//!
//! - [`Smol`]: the runtime as the core's [`Timer`](agentstream::rt::Timer)
//!   and [`Spawn`], and so a [`Runtime`], whose methods are the core's
//!   runtime-generic code ([`agentstream::rt`]) on smol:
//!   - [`spawn_stream`](Runtime::spawn_stream): run a call's producer as a
//!     task on smol's global executor ([`spawn_on`] / [`spawn_driver_on`]:
//!     on an [`Executor`] of your own), so it keeps going while the
//!     consumer is busy elsewhere. The events, the result and the trace are
//!     those of the self-driven stream.
//!   - [`stream_with_timeout`](Runtime::stream_with_timeout): start a call
//!     that is aborted after a duration, measured with smol's [`Timer`],
//!     through the call's [`AbortSignal`]. A call cut off mid-stream ends
//!     with `error(aborted)` carrying the text produced so far.
//!   - [`pause`](Runtime::pause): a pause for
//!     [`ScriptedModel::with_pacer`], so scripted calls take real time, or
//!     for the agent loop's abort grace.
//!   - [`tool_spawner`](Runtime::tool_spawner),
//!     [`with_retry`](Runtime::with_retry): tool calls as smol tasks;
//!     retries waiting on smol's timer.
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GeminiModel`:
//!   real models behind the same boundary, streaming from any
//!   OpenAI-compatible endpoint, Anthropic's Messages API, OpenAI's
//!   Responses API or Google Gemini over hyper's HTTP/1.1 client on smol's networking.
//! - Cancel on drop: a spawned producer stops as soon as the consumer has
//!   dropped the stream and every result handle. The task then completes; it
//!   never leaks and does no further work.
//!
//! [`prelude`] brings everything a call needs into scope in one `use`. The
//! crates underneath are re-exported: [`agentstream`], the core, and
//! [`agentstream_wire`], the wire protocols (SSE, OpenAI Chat Completions).
//!
//! ```
//! use std::num::NonZeroUsize;
//! use std::time::Duration;
//!
//! use agentstream_smol::prelude::*;
//! use futures_util::StreamExt;
//!
//! smol::block_on(async {
//!     let model = ScriptedModel::new([
//!         ScriptedTurn::message(assistant([text("hello")], StopReason::Stop)),
//!         // Ten deltas with a long pause between them: the timeout cuts it off.
//!         ScriptedTurn::message(assistant([text("a long answer")], StopReason::Stop))
//!             .chunked(NonZeroUsize::new(10).unwrap()),
//!     ])
//!     .with_pacer(Smol.pause(Duration::from_secs(60)));
//!     let context = Context::from_messages([user("hi").into()]);
//!
//!     let mut first = Smol.spawn_stream(model.stream(&context, StreamOptions::default()));
//!     while let Some(event) = first.next().await {
//!         println!("{}", event.type_name());
//!     }
//!     assert_eq!(first.result().await.text(), "hello");
//!
//!     let options = StreamOptions::default();
//!     let mut second = Smol.stream_with_timeout(&model, &context, options, Duration::from_secs(1));
//!     let result = second.result().await;
//!     assert_eq!(result.stop_reason, StopReason::Aborted);
//!     assert_eq!(result.text(), "a "); // the first of ten deltas
//! });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On docs.rs, items behind the `http` feature say so.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pub use agentstream::rt::Runtime;
use agentstream::rt::Spawn;

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "http")]
pub use http::{
    AnthropicModel, AzureModel, BedrockModel, EndpointModel, GeminiModel, Hyper, HyperBody,
    MistralModel, OpenAiCompatModel, ResponsesModel,
};

/// A model of pi-ai's catalogue as a configured model on this host, in
/// one call: the protocol its api names, its base URL, headers, prices,
/// compat flags, reasoning facts and pi-ai's default output limit (see
/// [`agentstream_wire::catalogue`]).
///
/// # Errors
/// A [`CatalogueModelError`](agentstream_wire::catalogue::CatalogueModelError)
/// for an api this crate does not speak, a refused header, or a client
/// that cannot be built.
#[cfg(all(feature = "http", feature = "catalogue"))]
pub fn model_from_catalogue(
    model: &agentstream_models::Model,
    api_key: Option<&str>,
) -> Result<
    Box<dyn agentstream::model::Model + Send + Sync>,
    agentstream_wire::catalogue::CatalogueModelError,
> {
    agentstream_wire::catalogue::model_from_catalogue::<Hyper>(model, api_key)
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
pub use smol::{Executor, Task, Timer};

/// Everything a smol user of agentstream needs, in one `use`:
///
/// ```
/// use agentstream_smol::prelude::*;
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
/// the providers' configurations), this crate's [`Smol`] and the
/// [`Runtime`] trait that gives it its methods (`Smol.spawn_stream`,
/// `Smol.stream_with_timeout`, `Smol.pause`, `Smol.tool_spawner`,
/// `Smol.with_retry`), and, with the `http` feature,
/// `OpenAiCompatModel`, `AnthropicModel`, `ResponsesModel`,
/// `GeminiModel`, `BedrockModel`, `AzureModel` and `MistralModel`.
pub mod prelude {
    #[cfg(feature = "http")]
    pub use crate::{
        AnthropicModel, AzureModel, BedrockModel, GeminiModel, MistralModel, OpenAiCompatModel,
        ResponsesModel,
    };
    pub use crate::{Runtime, Smol};
    pub use agentstream_wire::prelude::*;
}

/// smol as agentstream's [`Timer`](agentstream::rt::Timer) (smol's [`Timer`] and the
/// system clock) and [`Spawn`] (detached tasks on smol's global executor,
/// [`smol::spawn`]): what the core's runtime-generic code
/// ([`agentstream::rt`]) runs on here, through the methods of
/// [`Runtime`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Smol;

impl agentstream::rt::Timer for Smol {
    type Sleep = Sleep;

    fn sleep(&self, duration: Duration) -> Sleep {
        Sleep(Timer::after(duration))
    }

    fn now_unix_ms(&self) -> u64 {
        agentstream::model::system_unix_millis()
    }
}

impl Spawn for Smol {
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        smol::spawn(task).detach();
    }
}

/// Like [`Runtime::spawn_stream`] on [`Smol`], on `executor` instead of
/// the global one.
pub fn spawn_on(executor: &Executor<'_>, mut stream: ModelStream) -> ModelStream {
    if let Some(task) = spawn_driver_on(executor, &mut stream) {
        task.detach();
    }
    stream
}

/// Spawns the stream's producer on `executor`, leaves the stream in place,
/// and returns the [`Task`], which completes when the producer has stopped.
/// `None` if the stream carries no driver.
///
/// As always with smol, dropping a `Task` cancels it: the producer is
/// dropped and the stream ends with an `error` event. Await the task, or
/// [`detach`](Task::detach) it to let the producer run on its own.
pub fn spawn_driver_on(executor: &Executor<'_>, stream: &mut ModelStream) -> Option<Task<()>> {
    stream.take_driver().map(|driver| executor.spawn(driver))
}

/// One sleep of [`Smol`]'s timer: a smol [`Timer`] whose output is `()`.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep(Timer);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
