//! Run [`agentstream`] model calls on [tokio](https://tokio.rs).
//!
//! The core crate knows no runtime: a [`ModelStream`] runs its own producer
//! (its *driver*) whenever it is polled. This crate adds what a tokio user
//! expects on top:
//!
//! - [`Tokio`]: the runtime as the core's [`Timer`] and [`Spawn`]. The
//!   functions below are the core's runtime-generic ones ([`agentstream::rt`])
//!   on it, each one line.
//! - [`spawn`] / [`spawn_driver`]: run a call's producer as a tokio task, so
//!   it keeps going while the consumer is busy elsewhere. The events, the
//!   result and the trace are those of the self-driven stream.
//! - [`stream_with_timeout`]: start a call that is aborted after a duration,
//!   measured with tokio's timer, through the call's
//!   [`AbortSignal`]. A call cut off mid-stream ends
//!   with `error(aborted)` carrying the text produced so far.
//! - [`pause`]: a pause for [`ScriptedModel::with_pacer`], so scripted calls
//!   take real time, or for the agent loop's abort grace.
//! - [`tool_spawner`], [`with_retry`]: tool calls as tokio tasks; retries
//!   waiting on tokio's timer.
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
//! .with_pacer(pause(Duration::from_secs(60)));
//! let context = Context::from_messages([user("hi").into()]);
//!
//! let mut first = spawn(model.stream(&context, StreamOptions::default()));
//! while let Some(event) = first.next().await {
//!     println!("{}", event.type_name());
//! }
//! assert_eq!(first.result().await.text(), "hello");
//!
//! let options = StreamOptions::default();
//! let mut second = stream_with_timeout(&model, &context, options, Duration::from_secs(1));
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

use agentstream::agent::ToolSpawner;
use agentstream::model::{RetryModel, RetryPolicy};
use agentstream::rt::{self, DriverTask, Pause, Spawn, Timer};

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "http")]
pub use http::{
    AnthropicModel, Body, EndpointModel, GeminiModel, OpenAiCompatModel, Reqwest, ResponsesModel,
};

/// The old name of [`GeminiModel`].
#[cfg(feature = "http")]
#[deprecated(note = "renamed to `GeminiModel`")]
pub type GoogleModel = GeminiModel;

pub use agentstream;
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, Model, ModelDriver, ModelEvent, ModelStream,
    ResultHandle, ScriptedModel, ScriptedTurn, StreamOptions,
};
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
/// the providers' configurations), this crate's [`Tokio`], [`spawn`],
/// [`stream_with_timeout`], [`pause`], [`tool_spawner`] and
/// [`with_retry`], and, with the `http` feature,
/// `OpenAiCompatModel`, `AnthropicModel`, `ResponsesModel` and
/// `GeminiModel`.
pub mod prelude {
    pub use crate::{pause, spawn, stream_with_timeout, tool_spawner, with_retry, Tokio};
    #[cfg(feature = "http")]
    pub use crate::{AnthropicModel, GeminiModel, OpenAiCompatModel, ResponsesModel};
    pub use agentstream_wire::prelude::*;
}

/// The tokio runtime as agentstream's [`Timer`] ([`tokio::time::sleep`]
/// and the system clock) and [`Spawn`] ([`tokio::spawn`]): what the
/// core's runtime-generic code ([`agentstream::rt`]) runs on here. The
/// functions of this crate are that code with `Tokio` filled in.
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

/// [`rt::spawn`] on [`Tokio`]: runs the stream's producer as a tokio task
/// and returns the stream, which no longer drives it.
///
/// # Panics
/// Outside a tokio runtime, like [`tokio::spawn`].
pub fn spawn(stream: ModelStream) -> ModelStream {
    rt::spawn(&Tokio, stream)
}

/// [`rt::spawn_driver`] on [`Tokio`]: like [`spawn`], but leaves the
/// stream in place and returns a [`DriverTask`] that completes when the
/// producer has stopped.
///
/// # Panics
/// Outside a tokio runtime, like [`tokio::spawn`].
pub fn spawn_driver(stream: &mut ModelStream) -> Option<DriverTask> {
    rt::spawn_driver(&Tokio, stream)
}

/// [`rt::stream_with_timeout`] on [`Tokio`], [`spawn`]ed: a call on
/// `model` aborted after `timeout`, its producer a tokio task.
///
/// # Panics
/// Outside a tokio runtime, or without its timer enabled.
pub fn stream_with_timeout<M: Model + ?Sized>(
    model: &M,
    context: &agentstream::message::Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream {
    spawn(rt::stream_with_timeout(
        &Tokio, model, context, options, timeout,
    ))
}

/// A [`Pause`] of `length` on [`Tokio`]'s timer: the pacer of
/// [`ScriptedModel::with_pacer`] or the grace of
/// [`AgentOptions::with_abort_grace`](agentstream::agent::AgentOptions::with_abort_grace).
pub fn pause(length: Duration) -> Pause {
    Pause::new(Tokio, length)
}

/// [`rt::tool_spawner`] on [`Tokio`]: every tool call runs as a tokio
/// task, so on a multi-threaded runtime the calls of a turn run on its
/// worker threads.
///
/// # Panics
/// The spawner panics outside a tokio runtime, like [`tokio::spawn`].
pub fn tool_spawner() -> ToolSpawner {
    rt::tool_spawner(Tokio)
}

/// [`rt::with_retry`] on [`Tokio`]: `model` retried as `policy` says,
/// waiting on tokio's timer.
///
/// ```
/// use agentstream_tokio::prelude::*;
/// use agentstream::model::RetryPolicy;
///
/// let model = with_retry(ScriptedModel::new(Vec::<ScriptedTurn>::new()), RetryPolicy::default());
/// assert_eq!(model.policy().max_retries, 2);
/// ```
pub fn with_retry<M>(model: M, policy: RetryPolicy) -> RetryModel<M, Tokio> {
    rt::with_retry(model, policy, Tokio)
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
