//! The host's timer: [`sleep`], and what the core builds from it
//! ([`pacer`], [`abort_grace`], [`stream_with_timeout`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agentstream::model::{stream_with_deadline, Model, ModelStream, StreamOptions};
use futures_util::task::AtomicWaker;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

use crate::local::Local;

#[wasm_bindgen]
extern "C" {
    // The global object's timer functions: `globalThis.setTimeout` exists in
    // browsers, workers, Node and Deno alike (`window` does not). Node
    // returns a `Timeout` object rather than a number, hence `JsValue`.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, milliseconds: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
}

/// The longest pause one `setTimeout` takes: 2³¹ − 1 ms, about 24.8 days.
/// Hosts fire a longer timeout at once, so [`sleep`] clamps to this.
pub const MAX_SLEEP: Duration = Duration::from_millis(i32::MAX as u64);

/// Completes after `duration`, measured by the host's `setTimeout` on the
/// global object (a browser, a worker or Node).
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
    let millis = duration.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    let shared = Arc::new(Shared::default());
    let fire = Arc::clone(&shared);
    let callback = Closure::<dyn FnMut()>::new(move || {
        fire.fired.store(true, Ordering::Release);
        fire.waker.wake();
    });
    let handle = set_timeout(
        wasm_bindgen::JsCast::unchecked_ref(callback.as_ref()),
        millis,
    );
    Sleep {
        shared,
        armed: Local::new(Some(Armed {
            handle,
            _callback: callback,
        })),
    }
}

/// A pause of [`sleep`]: a future whose output is `()`.
///
/// It is `Send`, as the core's pacers and abort graces require; the
/// JavaScript handles inside never leave the one thread this target has.
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    shared: Arc<Shared>,
    /// The pending timeout; `None` once it fired and was seen.
    armed: Local<Option<Armed>>,
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("fired", &self.shared.fired.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

/// What the timeout's callback shares with the future.
#[derive(Default)]
struct Shared {
    fired: AtomicBool,
    waker: AtomicWaker,
}

/// A timeout that was set, with the callback it calls.
struct Armed {
    handle: JsValue,
    /// Kept alive until the timeout fired or was cleared.
    _callback: Closure<dyn FnMut()>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.shared.fired.load(Ordering::Acquire) {
            self.shared.waker.register(cx.waker());
            if !self.shared.fired.load(Ordering::Acquire) {
                return Poll::Pending;
            }
        }
        // The callback has run (it never runs again): free it.
        self.armed.inner = None;
        Poll::Ready(())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(armed) = self.armed.inner.take() {
            if !self.shared.fired.load(Ordering::Acquire) {
                clear_timeout(&armed.handle);
            }
        }
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
