//! [`Runtime`]: the core's runtime-generic functions as methods of any
//! type that is both a [`Timer`] and a [`Spawn`].

use core::future::Future;
use core::pin::Pin;
use core::time::Duration;

use alloc::boxed::Box;

use super::{DriverTask, Pause, Spawn, Timer};
use crate::agent::{MaybeSend, ToolSpawner};
use crate::message::Context;
use crate::model::{Model, ModelStream, StreamOptions};

/// What a runtime offers once it is a [`Timer`] and a [`Spawn`]: the
/// functions of [`rt`](super) with the runtime filled in, so a host crate
/// writes none of them and a user writes `Tokio.spawn_stream(stream)`,
/// `Smol.pause(length)` or `EventLoop.tool_spawner()`.
///
/// Implemented for every type that implements both traits; bring it into
/// scope (a host crate's prelude re-exports it) to call its methods. The
/// runtime types of the host crates are unit structs, so the methods that
/// keep the runtime (a pause, a spawner, a retrying model) clone it.
///
/// A toy runtime gets all of it from its two impls:
///
/// ```
/// use core::future::{ready, Future, Ready};
/// use core::time::Duration;
///
/// use agentstream::agent::MaybeSend;
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream::rt::{Runtime, Spawn, Timer};
///
/// /// Sleeps end at once; each task runs to its end before `spawn` returns.
/// #[derive(Clone, Copy)]
/// struct OnTheSpot;
///
/// impl Timer for OnTheSpot {
///     type Sleep = Ready<()>;
///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
///     fn now_unix_ms(&self) -> u64 { 0 }
/// }
///
/// impl Spawn for OnTheSpot {
///     fn spawn<F: Future<Output = ()> + MaybeSend + 'static>(&self, task: F) {
///         futures_executor::block_on(task);
///     }
/// }
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)])
///     .with_pacer(OnTheSpot.pause(Duration::from_millis(20)));
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = OnTheSpot.spawn_stream(model.stream(&context, StreamOptions::default()));
/// assert_eq!(futures_executor::block_on(stream.result()).text(), "hi");
/// ```
pub trait Runtime: Timer + Spawn + Sized {
    /// [`rt::spawn`](super::spawn) on this runtime: runs the stream's
    /// producer as a task and returns the stream, which no longer drives
    /// it. A stream without a driver is returned unchanged; on `wasm`
    /// targets the producer need not be `Send` (a
    /// [`LocalModelStream`](crate::model::LocalModelStream)'s).
    ///
    /// The events, the result and the trace are those of the self-driven
    /// stream; the task ends early once the stream and every result handle
    /// are dropped (cancel on drop).
    fn spawn_stream<D>(&self, stream: ModelStream<D>) -> ModelStream<D>
    where
        D: Future<Output = ()> + ?Sized + 'static,
        Pin<Box<D>>: MaybeSend,
    {
        super::spawn(self, stream)
    }

    /// [`rt::spawn_driver`](super::spawn_driver) on this runtime: like
    /// [`spawn_stream`](Self::spawn_stream), but leaves the stream in place
    /// and returns a [`DriverTask`] that completes when the producer has
    /// stopped; `None` if the stream carries no driver.
    fn spawn_driver<D>(&self, stream: &mut ModelStream<D>) -> Option<DriverTask>
    where
        D: Future<Output = ()> + ?Sized + 'static,
        Pin<Box<D>>: MaybeSend,
    {
        super::spawn_driver(self, stream)
    }

    /// [`rt::stream_with_timeout`](super::stream_with_timeout) on this
    /// runtime, [`spawn_stream`](Self::spawn_stream)ed: a call on `model`
    /// aborted after `timeout` on this runtime's timer, its producer a task
    /// of this runtime. A call cut off mid-stream ends with
    /// `error(aborted)` carrying what was produced so far.
    fn stream_with_timeout<M>(
        &self,
        model: &M,
        context: &Context,
        options: StreamOptions,
        timeout: Duration,
    ) -> ModelStream
    where
        M: Model + ?Sized,
        Self::Sleep: Send,
    {
        self.spawn_stream(super::stream_with_timeout(
            self, model, context, options, timeout,
        ))
    }

    /// A [`Pause`] of `length` on this runtime's timer: the pacer of
    /// [`ScriptedModel::with_pacer`](crate::model::ScriptedModel::with_pacer),
    /// so scripted calls take real time, or the grace of
    /// [`AgentOptions::with_abort_grace`](crate::agent::AgentOptions::with_abort_grace).
    fn pause(&self, length: Duration) -> Pause
    where
        Self: Clone + Send + Sync,
        Self::Sleep: Send,
    {
        Pause::new(self.clone(), length)
    }

    /// [`rt::tool_spawner`](super::tool_spawner) on this runtime: every
    /// tool call of the agent loop runs as a task of it (on a
    /// multi-threaded runtime, on its worker threads).
    fn tool_spawner(&self) -> ToolSpawner
    where
        Self: Clone + Send + Sync,
    {
        super::tool_spawner(self.clone())
    }

    /// [`rt::with_retry`](super::with_retry) on this runtime: `model`
    /// retried as `policy` says, waiting on this runtime's timer, its
    /// jitter seeded from the OS.
    #[cfg(feature = "std")]
    fn with_retry<M>(
        &self,
        model: M,
        policy: crate::model::RetryPolicy,
    ) -> crate::model::RetryModel<M, Self>
    where
        Self: Clone,
    {
        super::with_retry(model, policy, self.clone())
    }
}

impl<T: Timer + Spawn> Runtime for T {}
