// The crate's documentation is for `wasm32-unknown-unknown`, where its items
// exist; elsewhere the crate is empty and says so.
#![cfg_attr(target_arch = "wasm32", doc = include_str!("lib.md"))]
#![cfg_attr(not(target_arch = "wasm32"), doc = include_str!("other-targets.md"))]
#![cfg(target_arch = "wasm32")]
#![warn(missing_docs)]

mod abort;
mod fetch;
#[cfg(feature = "js-api")]
pub mod js;
mod local;
mod timer;
mod tools;

use std::future::Future;
use std::time::Duration;

use agentstream::rt::{self, Spawn, Timer};

pub use abort::{to_js_signal, JsAbortBridge};
pub use agentstream_wire::host::ClientError;
pub use fetch::{AnthropicModel, EndpointModel, Fetch, FetchBody, OpenAiCompatModel};
pub use fetch::{GeminiModel, ResponsesModel};
pub use timer::{pause, sleep, stream_with_timeout, Sleep, MAX_SLEEP};
pub use tools::tool_spawner;

pub use agentstream;
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, LocalModelStream, Model, ModelEvent,
    ModelStream, ScriptedModel, ScriptedTurn, StreamOptions,
};
pub use agentstream_wire;

/// Everything a WebAssembly user of agentstream needs, in one `use`:
///
/// ```no_run
/// use agentstream_wasm::prelude::*;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let context = Context::from_messages([user("hello").into()]);
/// let _stream: ModelStream = spawn(model.stream(&context, StreamOptions::default()));
/// ```
///
/// It holds what every adapter's prelude holds
/// ([`agentstream_wire::prelude`]: the [`Model`] trait and its types, the
/// scripted test double, the agent loop, the
/// [`Context`](agentstream::message::Context) and the message builders,
/// the providers' configurations), and this crate's [`EventLoop`],
/// [`spawn`], [`stream_with_timeout`], [`pause`], [`tool_spawner`] and
/// models.
pub mod prelude {
    pub use crate::{pause, spawn, stream_with_timeout, tool_spawner, EventLoop, JsAbortBridge};
    pub use crate::{AnthropicModel, GeminiModel, OpenAiCompatModel, ResponsesModel};
    pub use agentstream_wire::prelude::*;
}

/// The JavaScript event loop as agentstream's [`Timer`] (the host's
/// `setTimeout` through [`sleep`], and `Date.now()`) and [`Spawn`]
/// ([`wasm_bindgen_futures::spawn_local`], whose tasks need not be
/// `Send`): what the core's runtime-generic code ([`agentstream::rt`])
/// runs on here. The functions of this crate are that code with
/// `EventLoop` filled in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EventLoop;

impl Timer for EventLoop {
    type Sleep = Sleep;

    fn sleep(&self, duration: Duration) -> Sleep {
        sleep(duration)
    }

    /// `Date.now()` (a float cast to `u64` saturates; NaN gives 0).
    fn now_unix_ms(&self) -> u64 {
        js_sys::Date::now() as u64
    }
}

impl Spawn for EventLoop {
    fn spawn<F: Future<Output = ()> + 'static>(&self, task: F) {
        wasm_bindgen_futures::spawn_local(task);
    }
}

/// Spawns the stream's producer as a task of the JavaScript event loop
/// ([`wasm_bindgen_futures::spawn_local`]) and returns the stream, which no
/// longer drives it. A stream without a driver is returned unchanged. The
/// producer need not be `Send` (a [`LocalModelStream`]'s, say).
///
/// The producer first runs in a later microtask: code after `spawn`, up to
/// the next `await`, always runs before the first event is produced. The
/// task ends when the producer is done, or early once the stream and every
/// result handle are dropped (cancel on drop).
///
/// ```no_run
/// use agentstream_wasm::prelude::*;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = spawn(model.stream(&context, StreamOptions::default()));
/// wasm_bindgen_futures::spawn_local(async move {
///     assert_eq!(stream.result().await.text(), "hi");
/// });
/// ```
pub fn spawn<D: Future<Output = ()> + ?Sized + 'static>(stream: ModelStream<D>) -> ModelStream<D> {
    rt::spawn(&EventLoop, stream)
}

/// Like [`spawn`], for a [`LocalModelStream`] (a producer that is not
/// `Send`, holding JavaScript handles of its own, say).
///
/// ```no_run
/// use std::rc::Rc;
/// use agentstream_wasm::agentstream::message::{assistant, text, StopReason};
/// use agentstream_wasm::agentstream::model::{DoneReason, ModelEvent, ModelStream};
///
/// let shared = Rc::new("hi");
/// let stream = ModelStream::driven_local(move |mut producer| async move {
///     let message = assistant([text(*shared)], StopReason::Stop);
///     let _ = producer.push(ModelEvent::done(DoneReason::Stop, message));
/// });
/// let _stream = agentstream_wasm::spawn_local_stream(stream);
/// ```
pub fn spawn_local_stream(stream: LocalModelStream) -> LocalModelStream {
    spawn(stream)
}
