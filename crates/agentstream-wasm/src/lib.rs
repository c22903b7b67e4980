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

use std::future::Future;
use std::time::Duration;

pub use agentstream::rt::Runtime;
use agentstream::rt::{Spawn, Timer};

pub use abort::{to_js_signal, JsAbortBridge};
pub use agentstream_wire::host::ClientError;
#[cfg(feature = "catalogue")]
pub use fetch::model_from_catalogue;
pub use fetch::{AnthropicModel, EndpointModel, Fetch, FetchBody, OpenAiCompatModel};
pub use fetch::{AzureModel, BedrockModel, GeminiModel, MistralModel, ResponsesModel};
pub use timer::{sleep, Sleep, MAX_SLEEP};

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
/// let _stream: ModelStream = EventLoop.spawn_stream(model.stream(&context, StreamOptions::default()));
/// ```
///
/// It holds what every adapter's prelude holds
/// ([`agentstream_wire::prelude`]: the [`Model`] trait and its types, the
/// scripted test double, the agent loop, the
/// [`Context`](agentstream::message::Context) and the message builders,
/// the providers' configurations), and this crate's [`EventLoop`], the
/// [`Runtime`] trait that gives it its methods (`EventLoop.spawn_stream`,
/// `EventLoop.stream_with_timeout`, `EventLoop.pause`,
/// `EventLoop.tool_spawner`) and models.
pub mod prelude {
    pub use crate::{AnthropicModel, AzureModel, BedrockModel, GeminiModel, MistralModel};
    pub use crate::{EventLoop, JsAbortBridge, Runtime};
    pub use crate::{OpenAiCompatModel, ResponsesModel};
    pub use agentstream_wire::prelude::*;
}

/// The JavaScript event loop as agentstream's [`Timer`] (the host's
/// `setTimeout` through [`sleep`], and `Date.now()`) and [`Spawn`]
/// ([`wasm_bindgen_futures::spawn_local`], whose tasks need not be
/// `Send`): what the core's runtime-generic code ([`agentstream::rt`])
/// runs on here, through the methods of [`Runtime`].
///
/// A spawned producer ([`Runtime::spawn_stream`], which takes a
/// [`LocalModelStream`] too) first runs in a later microtask: code after
/// the spawn, up to the next `await`, always runs before the first event
/// is produced. On this target a panic aborts the module
/// (`panic = "abort"`), so unlike the native runtimes' there is no
/// panicking tool task to report ([`Runtime::tool_spawner`]).
///
/// ```no_run
/// use std::time::Duration;
/// use agentstream_wasm::prelude::*;
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)])
///     .with_pacer(EventLoop.pause(Duration::from_millis(50)));
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = EventLoop.spawn_stream(model.stream(&context, StreamOptions::default()));
/// wasm_bindgen_futures::spawn_local(async move {
///     assert_eq!(stream.result().await.text(), "hi");
/// });
/// let _tools = ToolSet::new().with_spawner(EventLoop.tool_spawner());
/// ```
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
