//! Run [`agentstream`] model calls on [smol](https://docs.rs/smol).
//!
//! The core crate knows no runtime: a [`ModelStream`] runs its own producer
//! (its *driver*) whenever it is polled. This crate adds what a smol user
//! expects on top:
//!
//! - [`spawn`] / [`spawn_on`] / [`spawn_driver_on`]: run a call's producer
//!   as a task on smol's global executor or on an [`Executor`] of your own,
//!   so it keeps going while the consumer is busy elsewhere. The events, the
//!   result and the trace are those of the self-driven stream.
//! - [`stream_with_timeout`]: start a call that is aborted after a duration,
//!   measured with smol's [`Timer`], through the call's [`AbortSignal`]. A
//!   call cut off mid-stream ends with `error(aborted)` carrying the text
//!   produced so far.
//! - [`pacer`]: a pause for [`ScriptedModel::with_pacer`], so scripted calls
//!   take real time.
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GoogleModel`:
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
//!     .with_pacer(pacer(Duration::from_secs(60)));
//!     let context = Context::from_messages([user("hi").into()]);
//!
//!     let mut first = spawn(model.stream(&context, StreamOptions::default()));
//!     while let Some(event) = first.next().await {
//!         println!("{}", event.type_name());
//!     }
//!     assert_eq!(first.result().await.text(), "hello");
//!
//!     let options = StreamOptions::default();
//!     let mut second = stream_with_timeout(&model, &context, options, Duration::from_secs(1));
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

#[cfg(feature = "http")]
mod http;
mod retry;
#[cfg(feature = "http")]
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "http")]
pub use http::{
    AnthropicModel, EndpointModel, GoogleModel, Hyper, HyperBody, OpenAiCompatModel, ResponsesModel,
};
pub use retry::{with_retry, SmolSleep};

pub use agentstream;
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, Model, ModelDriver, ModelEvent, ModelStream,
    ResultHandle, ScriptedModel, ScriptedTurn, StreamOptions,
};
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

/// Spawns the stream's producer as a detached task on smol's global
/// executor ([`smol::spawn`]) and returns the stream, which no longer drives
/// it. A stream without a driver is returned unchanged.
///
/// The task ends when the producer is done, or early once the stream and
/// every result handle are dropped (cancel on drop).
pub fn spawn(mut stream: ModelStream) -> ModelStream {
    if let Some(driver) = stream.take_driver() {
        smol::spawn(driver).detach();
    }
    stream
}

/// Like [`spawn`], on `executor` instead of the global one.
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

/// Starts a call on `model` that is aborted after `timeout`, and spawns its
/// producer on smol's global executor.
///
/// The call gets the signal of a new [`AbortController`]. That controller
/// aborts when the [`Timer`] fires, or when the signal the caller passed in
/// `options` aborts, whichever comes first. The timer runs inside the
/// producer's task and is dropped with it, so a call that ends (or whose
/// consumer goes away) leaves no timer behind. Mid-stream, the call ends with
/// `error(aborted)` and the text produced so far.
///
/// If the model's stream carries no driver (its producer runs elsewhere),
/// the spawned task holds only the timer, until it fires or the caller's
/// signal aborts. See [`agentstream::model::stream_with_deadline`], which
/// this wraps, for a self-driven stream with a deadline.
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
        Pause(Timer::after(timeout)),
    ))
}

/// A pacer for [`ScriptedModel::with_pacer`]: every pause is a smol
/// [`Timer`] of `pause`.
pub fn pacer(pause: Duration) -> impl Fn() -> Pause + Send + Sync + 'static {
    move || Pause(Timer::after(pause))
}

/// The grace period of an abort for
/// [`AgentOptions::with_abort_grace`](agentstream::agent::AgentOptions::with_abort_grace):
/// a tool still running `grace` after the abort is dropped and gets an
/// aborted result. A smol [`Timer`].
pub fn abort_grace(grace: Duration) -> agentstream::agent::AbortGrace {
    std::sync::Arc::new(move || Box::pin(Pause(Timer::after(grace))))
}

/// A [`ToolSpawner`](agentstream::agent::ToolSpawner) for
/// [`ToolSet::with_spawner`](agentstream::agent::ToolSet::with_spawner):
/// every tool call runs as a task on smol's global executor (its own
/// threads). Dropping the call's future cancels the task.
pub fn tool_spawner() -> agentstream::agent::ToolSpawner {
    std::sync::Arc::new(|execution| Box::pin(smol::spawn(execution)))
}

/// One pause of a [`pacer`]: a smol [`Timer`] whose output is `()`.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Pause(Timer);

impl Future for Pause {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
