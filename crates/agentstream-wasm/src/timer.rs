//! The host's timer: [`sleep`], the [`EventLoop`](crate::EventLoop)'s
//! [`Timer`](agentstream::rt::Timer).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

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
/// It is `Send`, as the core's pauses and model drivers require; the
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
