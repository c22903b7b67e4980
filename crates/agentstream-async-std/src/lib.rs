//! Run [`agentstream`] model calls on [async-std](https://docs.rs/async-std).
//!
//! **async-std is discontinued upstream**: its authors recommend
//! [smol](https://docs.rs/smol) instead, and new code should use the
//! `agentstream-smol` crate. This adapter is kept for code bases that still
//! run on async-std; it offers the same things as the other adapters:
//!
//! - [`spawn`] / [`spawn_driver`]: run a call's producer as an async-std
//!   task, so it keeps going while the consumer is busy elsewhere. The
//!   events, the result and the trace are those of the self-driven stream.
//! - [`stream_with_timeout`]: start a call that is aborted after a duration,
//!   measured with async-std's timer, through the call's [`AbortSignal`]. A
//!   call cut off mid-stream ends with `error(aborted)` carrying the text
//!   produced so far.
//! - [`pacer`]: a pause for [`ScriptedModel::with_pacer`], so scripted calls
//!   take real time.
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GoogleModel`: the clients of
//!   `agentstream-smol` (hyper's HTTP/1.1 client on smol's reactor, which
//!   needs no smol executor), re-exported; it works the same on async-std.
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
//! use agentstream_async_std::prelude::*;
//! use futures_util::StreamExt;
//!
//! async_std::task::block_on(async {
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
use std::time::Duration;

use async_std::task::JoinHandle;

mod retry;
pub use retry::{with_retry, AsyncStdSleep};

pub use agentstream;
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, Model, ModelDriver, ModelEvent, ModelStream,
    ResultHandle, ScriptedModel, ScriptedTurn, StreamOptions,
};
pub use agentstream::{EventStream, Producer, StreamError};
pub use agentstream_wire;
pub use async_std;

/// Everything an async-std user of agentstream needs, in one `use`:
///
/// ```
/// use agentstream_async_std::prelude::*;
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
    pub use crate::abort_grace;
    pub use crate::{pacer, spawn, stream_with_timeout};
    #[cfg(feature = "http")]
    pub use crate::{AnthropicModel, GoogleModel, OpenAiCompatModel, ResponsesModel};
    pub use agentstream_wire::prelude::*;
}

/// OpenAI-compatible and Anthropic endpoints: `agentstream-smol`'s clients, which run on
/// async-std's executor unchanged (its IO and timers are smol's reactor).
#[cfg(feature = "http")]
pub use agentstream_smol::{
    AnthropicModel, ClientError, EndpointModel, GoogleModel, Hyper, OpenAiCompatModel,
    ResponsesModel,
};

/// One pause of a [`pacer`].
pub type Pause = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Spawns the stream's producer as an async-std task
/// ([`async_std::task::spawn`]) and returns the stream, which no longer
/// drives it. A stream without a driver is returned unchanged.
///
/// The task ends when the producer is done, or early once the stream and
/// every result handle are dropped (cancel on drop).
pub fn spawn(mut stream: ModelStream) -> ModelStream {
    drop(spawn_driver(&mut stream));
    stream
}

/// Like [`spawn`], but leaves the stream in place and returns the task's
/// [`JoinHandle`], which completes when the producer has stopped. `None` if
/// the stream carries no driver. Dropping the handle detaches the task; it
/// does not cancel it.
pub fn spawn_driver(stream: &mut ModelStream) -> Option<JoinHandle<()>> {
    stream.take_driver().map(async_std::task::spawn)
}

/// Starts a call on `model` that is aborted after `timeout`, and spawns its
/// producer as an async-std task.
///
/// The call gets the signal of a new [`AbortController`]. That controller
/// aborts when the timer ([`async_std::task::sleep`]) fires, or when the
/// signal the caller passed in `options` aborts, whichever comes first. The
/// timer runs inside the producer's task and is dropped with it, so a call
/// that ends (or whose consumer goes away) leaves no timer behind.
/// Mid-stream, the call ends with `error(aborted)` and the text produced so
/// far.
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
        async_std::task::sleep(timeout),
    ))
}

/// The grace period of an abort for
/// [`AgentOptions::with_abort_grace`](agentstream::agent::AgentOptions::with_abort_grace):
/// a tool still running `grace` after the abort is dropped and gets an
/// aborted result. An async-std sleep.
pub fn abort_grace(grace: Duration) -> agentstream::agent::AbortGrace {
    std::sync::Arc::new(move || Box::pin(async_std::task::sleep(grace)))
}

/// A pacer for [`ScriptedModel::with_pacer`]: every pause is an async-std
/// [`sleep`](async_std::task::sleep) of `pause`.
pub fn pacer(pause: Duration) -> impl Fn() -> Pause + Send + Sync + 'static {
    move || Box::pin(async_std::task::sleep(pause))
}
