//! Run [`agentstream`] model calls on [tokio](https://tokio.rs).
//!
//! The core crate knows no runtime: a [`ModelStream`] runs its own producer
//! (its *driver*) whenever it is polled. This crate adds what a tokio user
//! expects on top:
//!
//! - [`spawn`] / [`spawn_driver`]: run a call's producer as a tokio task, so
//!   it keeps going while the consumer is busy elsewhere. The events, the
//!   result and the trace are those of the self-driven stream.
//! - [`stream_with_timeout`]: start a call that is aborted after a duration,
//!   measured with tokio's timer, through the call's
//!   [`AbortSignal`]. A call cut off mid-stream ends
//!   with `error(aborted)` carrying the text produced so far.
//! - [`pacer`]: a pause for [`ScriptedModel::with_pacer`], so scripted calls
//!   take real time.
//! - Cancel on drop: a spawned producer stops as soon as the consumer has
//!   dropped the stream and every result handle. The task then completes; it
//!   never leaks and does no further work.
//!
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GoogleModel`:
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
//! .with_pacer(pacer(Duration::from_secs(60)));
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

use std::time::Duration;

use tokio::task::JoinHandle;

#[cfg(feature = "http")]
mod http;
mod retry;
#[cfg(feature = "http")]
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "http")]
pub use http::{
    AnthropicModel, Body, EndpointModel, GoogleModel, OpenAiCompatModel, Reqwest, ResponsesModel,
};
pub use retry::{with_retry, TokioSleep};

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
/// the providers' configurations), this crate's [`spawn`],
/// [`stream_with_timeout`] and [`pacer`], and, with the `http` feature,
/// `OpenAiCompatModel`, `AnthropicModel`, `ResponsesModel` and
/// `GoogleModel`.
pub mod prelude {
    pub use crate::{abort_grace, tool_spawner};
    pub use crate::{pacer, spawn, stream_with_timeout};
    #[cfg(feature = "http")]
    pub use crate::{AnthropicModel, GoogleModel, OpenAiCompatModel, ResponsesModel};
    pub use agentstream_wire::prelude::*;
}

/// Spawns the stream's producer as a tokio task and returns the stream,
/// which no longer drives it. A stream without a driver (its producer runs
/// elsewhere already) is returned unchanged.
///
/// The task ends when the producer is done, or early once the stream and
/// every result handle are dropped (cancel on drop).
///
/// # Panics
/// Outside a tokio runtime, like [`tokio::spawn`].
pub fn spawn(mut stream: ModelStream) -> ModelStream {
    drop(spawn_driver(&mut stream));
    stream
}

/// Like [`spawn`], but leaves the stream in place and returns the task's
/// [`JoinHandle`], which completes when the producer has stopped. `None` if
/// the stream carries no driver. Dropping the handle detaches the task; it
/// does not cancel it.
///
/// # Panics
/// Outside a tokio runtime, like [`tokio::spawn`].
pub fn spawn_driver(stream: &mut ModelStream) -> Option<JoinHandle<()>> {
    stream.take_driver().map(tokio::spawn)
}

/// Starts a call on `model` that is aborted after `timeout`, and spawns its
/// producer as a tokio task.
///
/// The call gets the signal of a new [`AbortController`]. That controller
/// aborts when the timer fires, or when the signal the caller passed in
/// `options` aborts, whichever comes first. The timer runs inside the
/// producer's task and is dropped with it, so a call that ends (or whose
/// consumer goes away) leaves no timer behind. Mid-stream, the call ends with
/// `error(aborted)` and the text produced so far.
///
/// If the model's stream carries no driver (its producer runs elsewhere),
/// the spawned task holds only the timer, until it fires or the caller's
/// signal aborts. See [`agentstream::model::stream_with_deadline`], which
/// this wraps, for a self-driven stream with a deadline.
///
/// # Panics
/// Outside a tokio runtime, or without its timer enabled.
pub fn stream_with_timeout<M: Model + ?Sized>(
    model: &M,
    context: &agentstream::message::Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream {
    spawn(agentstream::model::stream_with_deadline(
        model,
        context,
        options,
        tokio::time::sleep(timeout),
    ))
}

/// A pacer for [`ScriptedModel::with_pacer`]: every pause is a tokio
/// [`sleep`](tokio::time::sleep) of `pause`. The pauses need a tokio runtime
/// with its timer enabled.
pub fn pacer(pause: Duration) -> impl Fn() -> tokio::time::Sleep + Send + Sync + 'static {
    move || tokio::time::sleep(pause)
}

/// The grace period of an abort for
/// [`AgentOptions::with_abort_grace`](agentstream::agent::AgentOptions::with_abort_grace):
/// a tool still running `grace` after the abort is dropped and gets an
/// aborted result. Needs a tokio runtime with its timer enabled.
pub fn abort_grace(grace: Duration) -> agentstream::agent::AbortGrace {
    std::sync::Arc::new(move || Box::pin(tokio::time::sleep(grace)))
}

/// A [`ToolSpawner`](agentstream::agent::ToolSpawner) for
/// [`ToolSet::with_spawner`](agentstream::agent::ToolSet::with_spawner):
/// every tool call runs as a tokio task, so on a multi-threaded runtime
/// the calls of a turn run on its worker threads. Dropping the call's
/// future (an abort past its grace period) aborts the task; a tool that
/// panics gets an error result naming the panic instead of taking the run
/// down.
///
/// # Panics
/// The spawner panics outside a tokio runtime, like [`tokio::spawn`].
pub fn tool_spawner() -> agentstream::agent::ToolSpawner {
    std::sync::Arc::new(|execution| {
        let task = ToolTask(tokio::spawn(execution));
        Box::pin(task)
    })
}

/// A spawned tool call; aborts its task when dropped.
struct ToolTask(JoinHandle<Result<agentstream::agent::ToolOutput, agentstream::agent::ToolError>>);

impl std::future::Future for ToolTask {
    type Output = Result<agentstream::agent::ToolOutput, agentstream::agent::ToolError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|joined| {
            joined.unwrap_or_else(|error| {
                Err(agentstream::agent::ToolError::new(format!(
                    "the tool's task failed: {error}"
                )))
            })
        })
    }
}

impl Drop for ToolTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
