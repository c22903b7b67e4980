//! Run [`agentstream`] model calls on [async-std](https://docs.rs/async-std).
//!
//! **async-std is discontinued upstream**: its authors recommend
//! [smol](https://docs.rs/smol) instead, and new code should use the
//! `agentstream-smol` crate. This adapter is kept for code bases that still
//! run on async-std; it offers the same things as the other adapters:
//!
//! - [`AsyncStd`]: the runtime as the core's [`Timer`] and [`Spawn`], and
//!   so a [`Runtime`], whose methods are the core's runtime-generic code
//!   ([`agentstream::rt`]) on async-std:
//!   - [`spawn_stream`](Runtime::spawn_stream) /
//!     [`spawn_driver`](Runtime::spawn_driver): run a call's producer as an
//!     async-std task, so it keeps going while the consumer is busy
//!     elsewhere. The events, the result and the trace are those of the
//!     self-driven stream.
//!   - [`stream_with_timeout`](Runtime::stream_with_timeout): start a call
//!     that is aborted after a duration, measured with async-std's timer,
//!     through the call's [`AbortSignal`]. A call cut off mid-stream ends
//!     with `error(aborted)` carrying the text produced so far.
//!   - [`pause`](Runtime::pause): a pause for
//!     [`ScriptedModel::with_pacer`], so scripted calls take real time, or
//!     for the agent loop's abort grace.
//!   - [`tool_spawner`](Runtime::tool_spawner),
//!     [`with_retry`](Runtime::with_retry): tool calls as async-std tasks;
//!     retries waiting on async-std's timer.
//! - With the `http` feature, `OpenAiCompatModel`, `AnthropicModel`,
//!   `ResponsesModel` and `GeminiModel`: the clients of
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
//!     .with_pacer(AsyncStd.pause(Duration::from_secs(60)));
//!     let context = Context::from_messages([user("hi").into()]);
//!
//!     let mut first = AsyncStd.spawn_stream(model.stream(&context, StreamOptions::default()));
//!     while let Some(event) = first.next().await {
//!         println!("{}", event.type_name());
//!     }
//!     assert_eq!(first.result().await.text(), "hello");
//!
//!     let options = StreamOptions::default();
//!     let mut second = AsyncStd.stream_with_timeout(&model, &context, options, Duration::from_secs(1));
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

pub use agentstream::rt::Runtime;
use agentstream::rt::{Spawn, Timer};

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
/// the providers' configurations), this crate's [`AsyncStd`] and the
/// [`Runtime`] trait that gives it its methods (`AsyncStd.spawn_stream`,
/// `AsyncStd.stream_with_timeout`, `AsyncStd.pause`,
/// `AsyncStd.tool_spawner`, `AsyncStd.with_retry`), and, with the `http` feature,
/// `OpenAiCompatModel`, `AnthropicModel`, `ResponsesModel`,
/// `GeminiModel`, `BedrockModel`, `AzureModel` and `MistralModel`.
pub mod prelude {
    #[cfg(feature = "http")]
    pub use crate::{
        AnthropicModel, AzureModel, BedrockModel, GeminiModel, MistralModel, OpenAiCompatModel,
        ResponsesModel,
    };
    pub use crate::{AsyncStd, Runtime};
    pub use agentstream_wire::prelude::*;
}

/// OpenAI-compatible and Anthropic endpoints: `agentstream-smol`'s clients, which run on
/// async-std's executor unchanged (its IO and timers are smol's reactor).
#[cfg(feature = "http")]
pub use agentstream_smol::{
    AnthropicModel, AzureModel, BedrockModel, ClientError, EndpointModel, GeminiModel, Hyper,
    MistralModel, OpenAiCompatModel, ResponsesModel,
};

/// A model of pi-ai's catalogue as a configured model, in one call:
/// `agentstream-smol`'s, which runs on async-std unchanged.
#[cfg(all(feature = "http", feature = "catalogue"))]
pub use agentstream_smol::model_from_catalogue;

/// The old name of [`GeminiModel`].
#[cfg(feature = "http")]
#[deprecated(note = "renamed to `GeminiModel`")]
pub type GoogleModel = GeminiModel;

/// async-std as agentstream's [`Timer`] ([`async_std::task::sleep`] and
/// the system clock) and [`Spawn`] ([`async_std::task::spawn`]): what the
/// core's runtime-generic code ([`agentstream::rt`]) runs on here, through
/// the methods of [`Runtime`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AsyncStd;

impl Timer for AsyncStd {
    /// `async_std::task::sleep`'s future has no name: it is boxed.
    type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

    fn sleep(&self, duration: Duration) -> Self::Sleep {
        Box::pin(async_std::task::sleep(duration))
    }

    fn now_unix_ms(&self) -> u64 {
        agentstream::model::system_unix_millis()
    }
}

impl Spawn for AsyncStd {
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(async_std::task::spawn(task));
    }
}
