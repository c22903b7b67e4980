//! The host's timer: [`sleep`], and what the core builds from it
//! ([`pacer`], [`abort_grace`], [`stream_with_timeout`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agentstream::model::{stream_with_deadline, Model, ModelStream, StreamOptions};
use gloo_timers::future::TimeoutFuture;

use crate::local::Local;

/// The longest pause one `setTimeout` takes: 2³¹ − 1 ms, about 24.8 days.
/// Hosts fire a longer timeout at once, so [`sleep`] clamps to this.
pub const MAX_SLEEP: Duration = Duration::from_millis(i32::MAX as u64);

/// Completes after `duration`, measured by the host's `setTimeout` on the
/// global object (a browser, a worker or Node), through
/// [`gloo_timers`]' [`TimeoutFuture`].
///
/// The timer starts at once, not on the first poll. The duration is
/// rounded up to whole milliseconds and clamped to [`MAX_SLEEP`]. Dropping
/// the [`Sleep`] clears the timeout, so a pending pause does not keep Node's
/// event loop alive.
///
/// ```no_run
/// use std::time::Duration;
///
/// wasm_bindgen_futures::spawn_local(async {
///     agentstream_wasm::sleep(Duration::from_millis(20)).await;
///     // 20 ms later, as the host's timer measures.
/// });
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    let millis = duration.as_micros().div_ceil(1000).min(i32::MAX as u128) as u32;
    Sleep(Local::new(TimeoutFuture::new(millis)))
}

/// A pause of [`sleep`]: a future whose output is `()`.
///
/// It is `Send`, as the core's pacers and abort graces require; the
/// JavaScript handles inside never leave the one thread this target has.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep(Local<TimeoutFuture>);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// A pacer for
/// [`ScriptedModel::with_pacer`](agentstream::model::ScriptedModel::with_pacer):
/// every pause is a [`sleep`] of `pause`, so scripted calls take real time
/// on the JavaScript event loop.
///
/// ```no_run
/// use std::time::Duration;
/// use agentstream_wasm::prelude::*;
///
/// let model = ScriptedModel::new([assistant([text("slowly")], StopReason::Stop)])
///     .with_pacer(pacer(Duration::from_millis(50)));
/// ```
pub fn pacer(pause: Duration) -> impl Fn() -> Sleep + Send + Sync + 'static {
    move || sleep(pause)
}

/// The grace period of an abort for
/// [`AgentOptions::with_abort_grace`](agentstream::agent::AgentOptions::with_abort_grace):
/// a tool still running `grace` after the abort is dropped and gets an
/// aborted result. A [`sleep`].
///
/// ```no_run
/// use std::time::Duration;
/// use agentstream_wasm::agentstream::agent::AgentOptions;
///
/// let options = AgentOptions::default().with_abort_grace(agentstream_wasm::abort_grace(Duration::from_secs(1)));
/// ```
pub fn abort_grace(grace: Duration) -> agentstream::agent::AbortGrace {
    Arc::new(move || Box::pin(sleep(grace)))
}

/// Starts a call on `model` that is aborted after `timeout` (a [`sleep`]),
/// and [`spawn`](crate::spawn)s its producer on the JavaScript event loop.
///
/// The call gets the signal of a new
/// [`AbortController`](agentstream::model::AbortController), which aborts
/// when the timer fires or when the signal the caller passed in `options`
/// aborts, whichever comes first. The timer lives in the producer's task and
/// is cleared with it. Mid-stream, the call ends with `error(aborted)` and
/// the text produced so far. See
/// [`stream_with_deadline`](agentstream::model::stream_with_deadline),
/// which this wraps.
///
/// ```no_run
/// use std::time::Duration;
/// use agentstream_wasm::prelude::*;
///
/// wasm_bindgen_futures::spawn_local(async {
///     let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
///     let context = Context::from_messages([user("hello").into()]);
///     let options = StreamOptions::default();
///     let mut stream = stream_with_timeout(&model, &context, options, Duration::from_secs(5));
///     assert_eq!(stream.result().await.text(), "hi");
/// });
/// ```
pub fn stream_with_timeout<M: Model + ?Sized>(
    model: &M,
    context: &agentstream::message::Context,
    options: StreamOptions,
    timeout: Duration,
) -> ModelStream {
    crate::spawn(stream_with_deadline(
        model,
        context,
        options,
        sleep(timeout),
    ))
}
