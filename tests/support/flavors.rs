//! The five "stream plus result" flavours under comparison, and the
//! scenarios the benches, the allocation test and the profiling example run
//! on them.
//!
//! Every flavour carries `u64` events and a `u64` result, so the figures
//! compare the synchronization and buffering only.
//!
//! | flavour | events | result |
//! |---|---|---|
//! | `ours` | `agentstream::event_stream::EventStream` | `EventStream::result()` |
//! | `futures` | `futures_channel::mpsc::unbounded` | `futures_channel::oneshot` |
//! | `tokio` | `tokio::sync::mpsc::unbounded_channel` | `tokio::sync::oneshot` |
//! | `async-channel` | `async_channel::unbounded` | `async_channel::bounded(1)` |
//! | `flume` | `flume::unbounded` | `flume::bounded(1)` |
//!
//! async-channel and flume have no oneshot of their own; each uses its own
//! `bounded(1)` channel, which is what a user of that crate would reach for.
//! Peers fan the result out with `futures_util::future::Shared`; ours clones
//! the `ResultFuture`.
use std::fmt::Debug;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::future::{FutureExt, Shared};
use futures_util::Stream;

/// One way to stream events and deliver a terminal result.
pub trait Flavor: 'static {
    /// The name used in bench ids and report columns.
    const NAME: &'static str;
    /// The producer side (events and result).
    type Tx: Send + 'static;
    /// The consumer of the events (pinned while polled: async-channel's
    /// receiver is `!Unpin`).
    type Rx: Send + 'static;
    /// A future for the terminal result.
    type Res: Future<Output = u64> + Send + 'static;
    /// A result future that many tasks can await.
    type Fan: Future<Output = u64> + Clone + Send + Unpin + 'static;

    /// Creates the event channel and the result channel.
    fn channel() -> (Self::Tx, Self::Rx, Self::Res);
    /// Sends one event.
    fn push(tx: &Self::Tx, event: u64);
    /// Delivers the result and closes the event channel.
    fn finish(tx: Self::Tx, result: u64);
    /// Polls for the next event; `Ready(None)` once closed and drained.
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>>;
    /// Makes the result awaitable by many.
    fn fan_out(res: Self::Res) -> Self::Fan;
}

/// A future whose output is a `Result` that must be `Ok`.
#[derive(Clone)]
pub struct Unwrap<F>(F);

impl<F, E> Future for Unwrap<F>
where
    F: Future<Output = Result<u64, E>> + Unpin,
    E: Debug,
{
    type Output = u64;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|outcome| outcome.expect("result delivered"))
    }
}

/// agentstream's `EventStream` with its own result.
pub struct Ours;

type OursStream = agentstream::event_stream::EventStream<u64, u64, ()>;

impl Flavor for Ours {
    const NAME: &'static str = "ours";
    type Tx = agentstream::event_stream::Producer<u64, u64, ()>;
    type Rx = OursStream;
    type Res = Unwrap<agentstream::event_stream::ResultFuture<u64, ()>>;
    type Fan = Self::Res;

    fn channel() -> (Self::Tx, Self::Rx, Self::Res) {
        let (tx, rx) = OursStream::channel();
        let res = Unwrap(rx.result());
        (tx, rx, res)
    }
    fn push(tx: &Self::Tx, event: u64) {
        tx.push(event).expect("stream open");
    }
    fn finish(tx: Self::Tx, result: u64) {
        tx.finish(result).expect("stream open");
    }
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        rx.poll_next(cx)
            .map(|event| event.map(|event| event.expect("no stream error")))
    }
    fn fan_out(res: Self::Res) -> Self::Fan {
        res
    }
}

/// futures-channel `mpsc::unbounded` plus `oneshot`.
pub struct Futures;

impl Flavor for Futures {
    const NAME: &'static str = "futures";
    type Tx = (
        futures_channel::mpsc::UnboundedSender<u64>,
        futures_channel::oneshot::Sender<u64>,
    );
    type Rx = futures_channel::mpsc::UnboundedReceiver<u64>;
    type Res = Unwrap<futures_channel::oneshot::Receiver<u64>>;
    type Fan = Shared<Self::Res>;

    fn channel() -> (Self::Tx, Self::Rx, Self::Res) {
        let (tx, rx) = futures_channel::mpsc::unbounded();
        let (done, res) = futures_channel::oneshot::channel();
        ((tx, done), rx, Unwrap(res))
    }
    fn push(tx: &Self::Tx, event: u64) {
        tx.0.unbounded_send(event).expect("receiver alive");
    }
    fn finish(tx: Self::Tx, result: u64) {
        let (events, done) = tx;
        done.send(result).expect("receiver alive");
        drop(events);
    }
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        rx.poll_next(cx)
    }
    fn fan_out(res: Self::Res) -> Self::Fan {
        res.shared()
    }
}

/// tokio `mpsc::unbounded_channel` plus `oneshot`.
pub struct Tokio;

impl Flavor for Tokio {
    const NAME: &'static str = "tokio";
    type Tx = (
        tokio::sync::mpsc::UnboundedSender<u64>,
        tokio::sync::oneshot::Sender<u64>,
    );
    type Rx = tokio::sync::mpsc::UnboundedReceiver<u64>;
    type Res = Unwrap<tokio::sync::oneshot::Receiver<u64>>;
    type Fan = Shared<Self::Res>;

    fn channel() -> (Self::Tx, Self::Rx, Self::Res) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (done, res) = tokio::sync::oneshot::channel();
        ((tx, done), rx, Unwrap(res))
    }
    fn push(tx: &Self::Tx, event: u64) {
        tx.0.send(event).expect("receiver alive");
    }
    fn finish(tx: Self::Tx, result: u64) {
        let (events, done) = tx;
        done.send(result).expect("receiver alive");
        drop(events);
    }
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        rx.get_mut().poll_recv(cx)
    }
    fn fan_out(res: Self::Res) -> Self::Fan {
        res.shared()
    }
}

/// async-channel `unbounded` plus `bounded(1)` as the oneshot.
pub struct AsyncChannel;

pin_project_lite::pin_project! {
    /// The result side of [`AsyncChannel`]: the first item of a `bounded(1)`.
    pub struct AsyncChannelResult {
        #[pin]
        rx: async_channel::Receiver<u64>,
    }
}

impl Future for AsyncChannelResult {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        self.project()
            .rx
            .poll_next(cx)
            .map(|result| result.expect("result delivered"))
    }
}

impl Flavor for AsyncChannel {
    const NAME: &'static str = "async-channel";
    type Tx = (async_channel::Sender<u64>, async_channel::Sender<u64>);
    type Rx = async_channel::Receiver<u64>;
    type Res = AsyncChannelResult;
    type Fan = Shared<Self::Res>;

    fn channel() -> (Self::Tx, Self::Rx, Self::Res) {
        let (tx, rx) = async_channel::unbounded();
        let (done, res) = async_channel::bounded(1);
        ((tx, done), rx, AsyncChannelResult { rx: res })
    }
    fn push(tx: &Self::Tx, event: u64) {
        tx.0.try_send(event).expect("receiver alive");
    }
    fn finish(tx: Self::Tx, result: u64) {
        let (events, done) = tx;
        done.try_send(result).expect("receiver alive");
        drop(events);
    }
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        rx.poll_next(cx)
    }
    fn fan_out(res: Self::Res) -> Self::Fan {
        res.shared()
    }
}

/// flume `unbounded` plus `bounded(1)` as the oneshot.
pub struct Flume;

impl Flavor for Flume {
    const NAME: &'static str = "flume";
    type Tx = (flume::Sender<u64>, flume::Sender<u64>);
    type Rx = flume::r#async::RecvStream<'static, u64>;
    type Res = Unwrap<flume::r#async::RecvFut<'static, u64>>;
    type Fan = Shared<Self::Res>;

    fn channel() -> (Self::Tx, Self::Rx, Self::Res) {
        let (tx, rx) = flume::unbounded();
        let (done, res) = flume::bounded(1);
        ((tx, done), rx.into_stream(), Unwrap(res.into_recv_async()))
    }
    fn push(tx: &Self::Tx, event: u64) {
        tx.0.send(event).expect("receiver alive");
    }
    fn finish(tx: Self::Tx, result: u64) {
        let (events, done) = tx;
        done.send(result).expect("receiver alive");
        drop(events);
    }
    fn poll_recv(rx: Pin<&mut Self::Rx>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        rx.poll_next(cx)
    }
    fn fan_out(res: Self::Res) -> Self::Fan {
        res.shared()
    }
}

/// Runs `$body` once per flavour, with `$fl` bound to the flavour type, in
/// the order of the report's columns (ours first).
#[macro_export]
macro_rules! for_each_flavor {
    ($fl:ident => $body:block) => {{
        {
            type $fl = $crate::Ours;
            $body
        }
        {
            type $fl = $crate::Futures;
            $body
        }
        {
            type $fl = $crate::Tokio;
            $body
        }
        {
            type $fl = $crate::AsyncChannel;
            $body
        }
        {
            type $fl = $crate::Flume;
            $body
        }
    }};
}

/// A waker that records that it was woken. Cloning it bumps a reference
/// count and allocates nothing.
#[derive(Default)]
pub struct Flag(AtomicBool);

impl Flag {
    /// A new flag and a waker that sets it.
    pub fn waker() -> (Arc<Flag>, Waker) {
        let flag = Arc::new(Flag::default());
        let waker = Waker::from(flag.clone());
        (flag, waker)
    }

    /// Whether a wake arrived since the last call.
    pub fn take(&self) -> bool {
        self.0.swap(false, Ordering::Acquire)
    }
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Polls the next event with `cx`, which must find it ready.
pub fn expect_event<Fl: Flavor>(rx: Pin<&mut Fl::Rx>, cx: &mut Context<'_>) -> Option<u64> {
    match Fl::poll_recv(rx, cx) {
        Poll::Ready(event) => event,
        Poll::Pending => panic!("{}: event not ready", Fl::NAME),
    }
}

/// Polls a future with `cx`, which must find it ready.
pub fn expect_ready<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> F::Output {
    match future.poll(cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("future not ready"),
    }
}

/// Scenario 1: push `n` events, finish, drain, await the result. Nothing
/// ever parks, so a no-op waker is enough.
pub fn burst<Fl: Flavor>(n: u64) -> u64 {
    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    let (tx, rx, res) = Fl::channel();
    let (mut rx, res) = (pin!(rx), pin!(res));
    for event in 0..n {
        Fl::push(&tx, event);
    }
    Fl::finish(tx, n);
    let mut sum = 0u64;
    while let Some(event) = expect_event::<Fl>(rx.as_mut(), &mut cx) {
        sum = sum.wrapping_add(event);
    }
    sum.wrapping_add(expect_ready(res, &mut cx))
}

/// Scenario 4: one call's whole life with a parked consumer: create, park
/// the consumer, push one event, finish, wake, drain, await the result.
pub fn lifecycle<Fl: Flavor>(cx: &mut Context<'_>) -> u64 {
    let (tx, rx, res) = Fl::channel();
    let (mut rx, res) = (pin!(rx), pin!(res));
    assert!(Fl::poll_recv(rx.as_mut(), cx).is_pending());
    Fl::push(&tx, 1);
    Fl::finish(tx, 2);
    let mut sum = 0u64;
    while let Some(event) = expect_event::<Fl>(rx.as_mut(), cx) {
        sum += event;
    }
    sum + expect_ready(res, cx)
}

/// Drains `rx`, then awaits `res`; returns the sum of everything received.
pub async fn consume<Fl: Flavor>(rx: Fl::Rx, res: Fl::Res) -> u64 {
    let mut rx = pin!(rx);
    let mut sum = 0u64;
    while let Some(event) = std::future::poll_fn(|cx| Fl::poll_recv(rx.as_mut(), cx)).await {
        sum = sum.wrapping_add(event);
    }
    sum.wrapping_add(res.await)
}
