//! The runtime seam: [`Timer`] and [`Spawn`], the two things the core asks
//! of a runtime, and everything built on them once for every runtime.
//!
//! The core knows no runtime. A host crate (`agentstream-tokio`, `-smol`,
//! `-async-std`, `-wasm`) names its runtime with one type that implements
//! both traits, and the functions here run on it unchanged:
//!
//! - [`spawn`] / [`spawn_driver`]: a call's producer as a task of the
//!   runtime, so it keeps going while the consumer is busy elsewhere;
//! - [`stream_with_timeout`]: a call aborted after a duration;
//! - [`Pause`]: a pause of a fixed length, the pacer of a
//!   [`ScriptedModel`](crate::model::ScriptedModel) and the abort grace of
//!   the agent loop;
//! - [`tool_spawner`]: the agent loop's tool calls as tasks;
//! - [`RetryModel`](crate::model::RetryModel): retries waiting on the timer,
//!   with `Retry-After` dates read on its clock ([`with_retry`] seeds its
//!   jitter from the OS).
//!
//! [`Runtime`] puts them all on the runtime type as methods
//! (`Tokio.spawn_stream(stream)`, `Smol.pause(length)`), for every type
//! that implements both traits.
//!
//! On `wasm` targets nothing needs to be `Send` (the bounds are
//! [`MaybeSend`]): a JavaScript event loop's timer and `spawn_local` fit.
//!
//! [`Timer`] shows a toy runtime driving a retry, [`Spawn`] a thread per
//! task.

mod clock;
mod pause;
mod runtime;
mod task;

use core::future::Future;
use core::time::Duration;

pub use clock::Clock;
pub use pause::Pause;
pub use runtime::Runtime;
#[cfg(feature = "std")]
pub use task::with_retry;
pub use task::{spawn, spawn_driver, stream_with_timeout, tool_spawner, DriverTask, TaskFailed};

use crate::agent::{MaybeSend, MaybeSync};

/// A runtime's timer and wall clock: what retries, timeouts, pacers and
/// abort graces wait on, and what stamps a call's messages.
///
/// - [`sleep`](Self::sleep): a future that completes after a duration;
///   dropping it cancels it. The core polls a sleep soon after making it
///   (a timeout's when the call's driver first runs), so a timer that
///   starts counting at the first poll
///   (`async_std::task::sleep`) serves as well as one that starts when it
///   is made (`tokio::time::sleep`).
/// - [`now_unix_ms`](Self::now_unix_ms): the wall clock in milliseconds
///   since the Unix epoch. A host without a wall clock returns 0; a
///   `Retry-After` date is then ignored (the backoff applies).
///
/// `Send` and `Sync` on native targets, through [`MaybeSend`] and
/// [`MaybeSync`]; on `wasm` targets neither is asked. The functions that
/// put a sleep inside a [`ModelStream`](crate::model::ModelStream)'s
/// driver, which is always `Send`, also ask for a `Send`
/// [`Sleep`](Self::Sleep).
///
/// A toy runtime, a manual timer whose sleeps end at once and an executor
/// that runs each task on the spot, driving a retry:
///
/// ```
/// use core::future::{ready, Future, Ready};
/// use core::time::Duration;
/// use std::sync::{Arc, Mutex};
///
/// use agentstream::agent::MaybeSend;
/// use agentstream::message::{user, Context, StopReason};
/// use agentstream::model::{
///     ErrorCause, HttpFailure, Model, ModelEvent, ModelStream, RetryModel, RetryPolicy, StreamOptions,
/// };
/// use agentstream::rt::{Spawn, Timer};
///
/// /// Records each sleep and ends it at once; the clock reads a fixed time.
/// #[derive(Clone, Default)]
/// struct Manual(Arc<Mutex<Vec<Duration>>>);
///
/// impl Timer for Manual {
///     type Sleep = Ready<()>;
///     fn sleep(&self, duration: Duration) -> Ready<()> {
///         self.0.lock().unwrap().push(duration);
///         ready(())
///     }
///     fn now_unix_ms(&self) -> u64 {
///         1_700_000_000_000
///     }
/// }
///
/// /// Runs each task to its end before `spawn` returns.
/// struct OnTheSpot;
///
/// impl Spawn for OnTheSpot {
///     fn spawn<F: Future<Output = ()> + MaybeSend + 'static>(&self, task: F) {
///         futures_executor::block_on(task);
///     }
/// }
///
/// /// A model that fails with HTTP 503 twice, then answers.
/// struct Flaky(Mutex<u32>);
///
/// impl Model for Flaky {
///     fn stream(&self, _: &Context, _: StreamOptions) -> ModelStream {
///         let mut failures = self.0.lock().unwrap();
///         let fail = *failures < 2;
///         *failures += 1;
///         ModelStream::driven(move |mut producer| async move {
///             let mut message = agentstream::message::assistant([], StopReason::Stop);
///             if fail {
///                 message.stop_reason = StopReason::Error;
///                 message.error_message = Some("HTTP 503".into());
///                 let event = ModelEvent::error(agentstream::model::ErrorReason::Error, message);
///                 let _ = producer.push_error(event, ErrorCause::Http(HttpFailure::new(503)));
///             } else {
///                 message.content.push(agentstream::message::text("at last"));
///                 let _ = producer.push(ModelEvent::done(agentstream::model::DoneReason::Stop, message));
///             }
///         })
///     }
/// }
///
/// let timer = Manual::default();
/// let model = RetryModel::new(Flaky(Mutex::new(0)), RetryPolicy::default(), timer.clone());
/// let context = Context::from_messages([user("hi").into()]);
/// // The producer runs as a task of the toy runtime.
/// let mut stream = agentstream::rt::spawn(&OnTheSpot, model.stream(&context, StreamOptions::default()));
/// let message = futures_executor::block_on(stream.result());
/// assert_eq!(message.text(), "at last");
/// assert_eq!(timer.0.lock().unwrap().len(), 2, "two backoffs on the timer");
/// ```
pub trait Timer: MaybeSend + MaybeSync + 'static {
    /// The future of one [`sleep`](Self::sleep).
    type Sleep: Future<Output = ()> + MaybeSend + 'static;

    /// Completes after `duration`.
    fn sleep(&self, duration: Duration) -> Self::Sleep;

    /// The wall-clock time in milliseconds since the Unix epoch; 0 when the
    /// host has no wall clock.
    fn now_unix_ms(&self) -> u64;
}

/// A runtime's executor: runs a future to its end as a task of its own,
/// detached (like hyper's `rt::Executor`).
///
/// On native targets the tasks are `Send` (a multi-threaded runtime may
/// move them); on `wasm` targets they need not be (`spawn_local`), so a
/// [`LocalModelStream`](crate::model::LocalModelStream)'s producer can be
/// spawned too.
///
/// A task that panics should end without taking the runtime down, as
/// tokio's and smol's do; [`spawn_driver`]'s and [`tool_spawner`]'s
/// handles then report a [`TaskFailed`].
///
/// A thread per task (on wasm, the task on the spot), each running its
/// task with a `block_on`: enough for a producer that needs no runtime of
/// its own (see [`Timer`] for a toy
/// runtime with a timer too).
///
/// ```
/// use core::future::Future;
/// use agentstream::agent::MaybeSend;
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{Model, ScriptedModel, StreamOptions};
/// use agentstream::rt::{self, Spawn};
///
/// struct Threads;
///
/// impl Spawn for Threads {
///     fn spawn<F: Future<Output = ()> + MaybeSend + 'static>(&self, task: F) {
///         #[cfg(not(target_family = "wasm"))]
///         std::thread::spawn(move || futures_executor::block_on(task));
///         // No threads on wasm, and the task need not be `Send`: run it
///         // on the spot.
///         #[cfg(target_family = "wasm")]
///         futures_executor::block_on(task);
///     }
/// }
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let context = Context::from_messages([user("hello").into()]);
/// let mut stream = model.stream(&context, StreamOptions::default());
/// let task = rt::spawn_driver(&Threads, &mut stream).expect("a scripted call has a driver");
/// futures_executor::block_on(async {
///     assert_eq!(task.await, Ok(()));
///     assert_eq!(stream.result().await.text(), "hi");
/// });
/// ```
pub trait Spawn: MaybeSend + MaybeSync + 'static {
    /// Runs `task` to its end, detached from the caller.
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + MaybeSend + 'static;
}

impl<T: Timer + ?Sized> Timer for alloc::sync::Arc<T> {
    type Sleep = T::Sleep;

    fn sleep(&self, duration: Duration) -> T::Sleep {
        (**self).sleep(duration)
    }

    fn now_unix_ms(&self) -> u64 {
        (**self).now_unix_ms()
    }
}

impl<S: Spawn + ?Sized> Spawn for alloc::sync::Arc<S> {
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + MaybeSend + 'static,
    {
        (**self).spawn(task);
    }
}
