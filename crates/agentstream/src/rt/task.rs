//! What the core builds on a [`Spawn`] and a [`Timer`]: spawned producers
//! and tool calls, timeouts and retries.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::{pin, Pin};
use core::task::{Context as TaskContext, Poll};
use core::time::Duration;

use futures_util::future::{self, Either};

use super::{Spawn, Timer};
use crate::agent::{MaybeSend, SendExecution, ToolError, ToolOutput, ToolSpawner};
use crate::event_stream::ResultFuture;
use crate::message::Context;
use crate::model::{Model, ModelStream, StreamOptions};

/// Spawns the stream's producer as a task of `spawner` and returns the
/// stream, which no longer drives it. A stream without a driver (its
/// producer runs elsewhere already) is returned unchanged.
///
/// The task ends when the producer is done, or early once the stream and
/// every result handle are dropped (cancel on drop). The events, the result
/// and the trace are those of the self-driven stream.
pub fn spawn<S, D>(spawner: &S, mut stream: ModelStream<D>) -> ModelStream<D>
where
    S: Spawn,
    D: Future<Output = ()> + ?Sized + 'static,
    Pin<Box<D>>: MaybeSend,
{
    if let Some(driver) = stream.take_driver() {
        spawner.spawn(driver);
    }
    stream
}

/// Like [`spawn`], but leaves the stream in place and returns a
/// [`DriverTask`] that completes when the producer has stopped; `None` if
/// the stream carries no driver. Dropping the `DriverTask` detaches the
/// task; it does not cancel it.
pub fn spawn_driver<S, D>(spawner: &S, stream: &mut ModelStream<D>) -> Option<DriverTask>
where
    S: Spawn,
    D: Future<Output = ()> + ?Sized + 'static,
    Pin<Box<D>>: MaybeSend,
{
    let driver = stream.take_driver()?;
    let (producer, watch) = crate::channel::<(), (), Infallible>();
    let done = watch.result();
    drop(watch);
    spawner.spawn(async move {
        driver.await;
        let _ = producer.finish(());
    });
    Some(DriverTask { done })
}

/// A producer spawned by [`spawn_driver`]: resolves when it has stopped,
/// to [`TaskFailed`] if its task ended without finishing (it panicked, or
/// the runtime dropped it).
#[must_use = "futures do nothing unless polled"]
pub struct DriverTask {
    done: ResultFuture<(), Infallible>,
}

impl Future for DriverTask {
    type Output = Result<(), TaskFailed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.done)
            .poll(cx)
            .map(|done| done.map_err(|_| TaskFailed))
    }
}

impl fmt::Debug for DriverTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverTask").finish_non_exhaustive()
    }
}

/// A spawned task ended without its result: it panicked, or its runtime
/// dropped it (a runtime shutting down, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TaskFailed;

impl fmt::Display for TaskFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the task ended without a result (it panicked, or its runtime dropped it)")
    }
}

impl core::error::Error for TaskFailed {}

/// Starts a call on `model` that is aborted after `timeout`, measured with
/// `timer`.
///
/// The call gets the signal of a new
/// [`AbortController`](crate::model::AbortController), which aborts when
/// the timer fires or when the signal the caller passed in `options`
/// aborts, whichever comes first (an already aborted caller signal aborts
/// at once). Mid-stream, the call ends with `error(aborted)` and what was
/// produced so far. When the timer ends the call, its
/// [`error_cause`](ModelStream::error_cause) is
/// [`Timeout(Total)`](crate::model::TimeoutKind::Total), whatever the model
/// recorded (it only saw its signal abort).
///
/// The timer is polled as part of the stream's driver, before each of the
/// producer's steps, and dropped with it: a call that ends, or whose
/// consumer goes away, leaves no timer behind. The returned stream is
/// self-driven; [`spawn`] it to run it as a task. If the model's stream had
/// no driver (its producer runs elsewhere), the timer alone becomes the
/// driver.
pub fn stream_with_timeout<T, M>(
    timer: &T,
    model: &M,
    context: &Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream
where
    T: Timer,
    T::Sleep: Send,
    M: Model + ?Sized,
{
    crate::model::stream_with_deadline(model, context, options, timer.sleep(timeout))
}

/// The message of a tool call whose task ended without a result.
const TOOL_TASK_FAILED: &str =
    "the tool's task failed: it ended without a result (it panicked, or its runtime dropped it)";

/// A [`ToolSpawner`] for
/// [`ToolSet::with_spawner`](crate::agent::ToolSet::with_spawner): every
/// tool call runs as a task of `spawner` (on a multi-threaded runtime, on
/// its worker threads). Dropping the call's future (an abort past its
/// grace period) stops the task at its next step; a tool whose task ends
/// without a result (a panic) gets an error result instead of taking the
/// run down.
pub fn tool_spawner<S>(spawner: S) -> ToolSpawner
where
    S: Spawn + Send + Sync,
{
    Arc::new(move |execution: SendExecution| {
        let (producer, watch) = crate::channel::<(), Result<ToolOutput, ToolError>, Infallible>();
        let outcome = watch.result();
        drop(watch);
        spawner.spawn(async move {
            let closed = pin!(producer.closed());
            if let Either::Left((output, _)) = future::select(execution, closed).await {
                let _ = producer.finish(output);
            }
        });
        Box::pin(async move {
            outcome
                .await
                .unwrap_or_else(|_| Err(ToolError::new(TOOL_TASK_FAILED)))
        })
    })
}

/// `model` wrapped in a [`RetryModel`](crate::model::RetryModel) that
/// waits on `timer` and reads `Retry-After` dates on its clock, its jitter
/// seeded from the OS ([`os_entropy`](crate::model::os_entropy)) unless
/// the policy fixes a seed, so that processes failing together do not
/// retry in lockstep.
#[cfg(feature = "std")]
pub fn with_retry<M, T: Timer>(
    model: M,
    policy: crate::model::RetryPolicy,
    timer: T,
) -> crate::model::RetryModel<M, T> {
    crate::model::RetryModel::new(model, policy, timer).with_entropy(crate::model::os_entropy())
}
