//! The stream family of a model call, three names: [`ModelStream`], what
//! [`Model::stream`](super::Model::stream) returns (the events, and the
//! producer future when the stream drives itself), [`ModelProducer`], its
//! producing side, and [`ModelResult`], the one future of the final
//! message, which carries the terminal event's cause with it (value and
//! completion travel together, as through a oneshot channel).
//!
//! The older names stay as deprecated aliases:
//! `AssistantMessageProducer` (now [`ModelProducer`]), `ResultHandle` (a
//! detached [`ModelResult`], `ModelResult<'static>`),
//! `AssistantMessageEventStream` (the channel a [`ModelStream`] wraps), and
//! `ModelDriver` / `LocalModelDriver` (the boxed producer futures, spelled
//! out).

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedFuture, FusedStream, Stream};

use super::cause::ErrorCause;
use super::event::{ErrorReason, EventCause, ModelEvent};
use super::partial::PartialBuilder;
use crate::event_stream::{Closed, EventStream, Producer, RefusedError, ResultFuture, StreamError};
use crate::message::{assistant, AssistantMessage, StopReason};

/// The error message of a stream whose producer went away without a
/// terminal event.
pub const PRODUCER_DROPPED_MESSAGE: &str = "model stream ended without a terminal event";

/// The [`EventStream`] a [`ModelStream`] wraps. It never fails: errors
/// travel as `error` events, and its result is the terminal event itself
/// (`done` or `error`), so the final [`AssistantMessage`] and an `error`'s
/// [`cause`](ModelEvent::error_cause) reach every result awaiter together.
type Events = EventStream<ModelEvent, ModelEvent, Infallible>;

/// The [`EventStream`] a [`ModelStream`] wraps.
#[deprecated(
    since = "0.4.0",
    note = "the channel inside `ModelStream`: use `ModelStream`, or `EventStream<ModelEvent, ModelEvent, Infallible>`"
)]
pub type AssistantMessageEventStream = Events;

/// A boxed `Send` producer future, as [`ModelStream::take_driver`] returns
/// it from a `ModelStream` (and a runtime adapter spawns it).
pub(crate) type SendDriver = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A boxed `Send` producer future.
#[deprecated(
    since = "0.4.0",
    note = "spelled out: `Pin<Box<dyn Future<Output = ()> + Send>>`, what `ModelStream::take_driver` returns"
)]
pub type ModelDriver = SendDriver;

/// A boxed producer future that need not be `Send`.
#[deprecated(
    since = "0.4.0",
    note = "spelled out: `Pin<Box<dyn Future<Output = ()>>>`, what `LocalModelStream::take_driver` returns"
)]
pub type LocalModelDriver = Pin<Box<dyn Future<Output = ()> + 'static>>;

/// A [`ModelStream`] whose driver need not be `Send`, for providers built on
/// `!Send` futures (a browser `fetch`, a single-threaded embedded executor).
/// It is self-driven like any `ModelStream`, but stays on its thread.
///
/// Every `ModelStream` converts into one with [`ModelStream::into_local`].
pub type LocalModelStream = ModelStream<dyn Future<Output = ()>>;

/// The producing side of a model call.
///
/// Pushing a terminal event (`done` or `error`) also resolves the result
/// with its message; later calls are refused, except [`close`](Self::close),
/// which is idempotent. Dropping the producer before a terminal event pushes
/// an `error` event carrying the last partial it pushed and the message
/// [`PRODUCER_DROPPED_MESSAGE`], so no consumer is left without one.
pub struct ModelProducer {
    inner: Producer<ModelEvent, ModelEvent, Infallible>,
    /// The last partial pushed, to build the message of a forced `error`.
    last: Option<PartialBuilder>,
}

pin_project_lite::pin_project! {
    /// Runs `driver` until it completes or the stream is closed.
    struct UntilClosed<D> {
        #[pin]
        driver: D,
        closed: Closed<ModelEvent, Infallible>,
    }
}

impl<D: Future<Output = ()>> Future for UntilClosed<D> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if this.driver.poll(cx).is_ready() {
            return Poll::Ready(());
        }
        Pin::new(this.closed).poll(cx)
    }
}

impl ModelProducer {
    /// Pushes an event. A `done` or `error` event also resolves the result
    /// (with the event's message and, for an `error`, the cause it
    /// carries: see [`ModelEvent::with_cause`]).
    ///
    /// # Errors
    /// Refused once a terminal event was pushed, or when nobody observes the
    /// stream any more (see [`Producer::push`]).
    pub fn push(&mut self, event: ModelEvent) -> Result<(), RefusedError<ModelEvent>> {
        if event.is_terminal() {
            // The result shares the event's message (and its cause).
            let outcome = event.clone();
            let pushed = self.inner.push(event);
            // Resolve the result even if nobody reads events any more.
            let finished = self.inner.finish(outcome);
            return match (pushed, finished) {
                (Err(refused), Err(_)) => Err(refused),
                _ => Ok(()),
            };
        }
        if let Some(partial) = event.partial() {
            self.last = Some(PartialBuilder::from_snapshot(partial.clone()));
        }
        self.inner.push(event)
    }

    /// Pushes the terminal `error` event `event` with its `cause`: a
    /// shorthand for `push(event.with_cause(cause))` (see
    /// [`ModelEvent::with_cause`]). The cause travels on the event, so the
    /// stream's [`error_cause`](ModelStream::error_cause) and every result
    /// handle read it from there.
    ///
    /// # Errors
    /// As [`push`](Self::push).
    pub fn push_error(
        &mut self,
        event: ModelEvent,
        cause: ErrorCause,
    ) -> Result<(), RefusedError<ModelEvent>> {
        self.push(event.with_cause(cause))
    }

    /// Whether a terminal event was pushed.
    pub fn is_terminal(&self) -> bool {
        self.inner.is_terminal()
    }

    /// Whether nobody observes the stream any more, so work can stop.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Resolves once nobody observes the stream any more.
    pub fn closed(&self) -> Closed<ModelEvent, Infallible> {
        self.inner.closed()
    }

    /// Ends the stream. After a terminal event this does nothing; before
    /// one, it pushes an `error` event with `error_message`.
    pub fn close(&mut self, error_message: &str) {
        if self.inner.is_terminal() {
            return;
        }
        let error = match &self.last {
            Some(builder) => builder.to_error_message(StopReason::Error, error_message),
            None => {
                let mut message = assistant([], StopReason::Error);
                message.error_message = Some(error_message.into());
                message
            }
        };
        let _ = self.push(ModelEvent::Error {
            reason: ErrorReason::Error,
            error: Arc::new(error),
            cause: EventCause::NONE,
        });
    }
}

impl Drop for ModelProducer {
    fn drop(&mut self) {
        self.close(PRODUCER_DROPPED_MESSAGE);
    }
}

/// The producing side of a model call.
#[deprecated(since = "0.4.0", note = "renamed to `ModelProducer`")]
pub type AssistantMessageProducer = ModelProducer;

impl fmt::Debug for ModelProducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelProducer")
            .field("terminal", &self.is_terminal())
            .finish_non_exhaustive()
    }
}

/// The events of one model call, ending with exactly one `done` or `error`.
///
/// What [`Model::stream`](super::Model::stream) returns. It is a
/// [`Stream`] of [`ModelEvent`]s for its single consumer, and
/// [`result`](Self::result) gives the final [`AssistantMessage`].
///
/// A stream may carry its own producer (a *driver*): polling the stream, or
/// its [`result`](Self::result), runs it, so no runtime is needed. A runtime
/// adapter can instead [`take_driver`](Self::take_driver) and spawn it as a
/// task; the events are the same either way.
///
/// `D` is the driver's future type, boxed. The default, a `Send` future,
/// makes the stream `Send`; [`LocalModelStream`] carries a `!Send` driver.
#[must_use = "streams do nothing unless polled"]
pub struct ModelStream<D: ?Sized = dyn Future<Output = ()> + Send> {
    events: Events,
    driver: Option<Pin<Box<D>>>,
    /// The cause the terminal `error` carried, once this stream yielded
    /// it (the result may be resolved a moment later on another thread).
    cause: EventCause,
}

impl ModelStream {
    /// A stream and the producer that feeds it, with no driver: the producer
    /// is run by the caller.
    pub fn channel() -> (ModelProducer, Self) {
        let (inner, events) = EventStream::channel();
        let producer = ModelProducer { inner, last: None };
        (
            producer,
            Self {
                events,
                driver: None,
                cause: EventCause::NONE,
            },
        )
    }

    /// A stream whose producer is `driver`, run whenever the stream or its
    /// result is polled. `make_driver` receives the producer.
    ///
    /// The driver stops early, dropping the producer, as soon as nobody
    /// observes the stream any more (the stream and every result handle are
    /// gone), so a spawned driver never outlives its consumer.
    pub fn driven<D>(make_driver: impl FnOnce(ModelProducer) -> D) -> Self
    where
        D: Future<Output = ()> + Send + 'static,
    {
        let (producer, mut stream) = Self::channel();
        let closed = producer.inner.closed();
        stream.driver = Some(Box::pin(UntilClosed {
            driver: make_driver(producer),
            closed,
        }));
        stream
    }

    /// Like [`driven`](Self::driven), for a driver that is not `Send`. The
    /// stream it returns stays on its thread.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use agentstream::message::{assistant, text, StopReason};
    /// use agentstream::model::{DoneReason, LocalModelStream, ModelEvent, ModelStream};
    /// use futures_util::StreamExt;
    ///
    /// // A producer holding an `Rc` is `!Send`, so its future is not `Send`.
    /// let shared = Rc::new("hi");
    /// let mut stream: LocalModelStream = ModelStream::driven_local(move |mut producer| async move {
    ///     let message = assistant([text(*shared)], StopReason::Stop);
    ///     let _ = producer.push(ModelEvent::done(DoneReason::Stop, message));
    /// });
    /// let types: Vec<_> = futures_executor::block_on(stream.by_ref().map(|e| e.type_name()).collect());
    /// assert_eq!(types, ["done"]);
    /// ```
    pub fn driven_local<D>(make_driver: impl FnOnce(ModelProducer) -> D) -> LocalModelStream
    where
        D: Future<Output = ()> + 'static,
    {
        let (producer, stream) = Self::channel();
        let closed = producer.inner.closed();
        let mut stream = stream.into_local();
        stream.driver = Some(Box::pin(UntilClosed {
            driver: make_driver(producer),
            closed,
        }));
        stream
    }

    /// The same stream, typed as a [`LocalModelStream`]: for code that
    /// handles `Send` and `!Send` providers alike.
    pub fn into_local(self) -> LocalModelStream {
        ModelStream {
            events: self.events,
            driver: self
                .driver
                .map(|driver| driver as Pin<Box<dyn Future<Output = ()>>>),
            cause: self.cause,
        }
    }

    /// Installs `driver` as the future this stream runs when polled,
    /// replacing (and dropping) any previous one. Used to wrap a driver, for
    /// example with a deadline.
    pub(crate) fn set_driver(&mut self, driver: SendDriver) {
        self.driver = Some(driver);
    }
}

impl<D: Future<Output = ()> + ?Sized> ModelStream<D> {
    /// Takes the producer future out, for a runtime to spawn. The stream no
    /// longer drives it. The future completes when the producer is done, or
    /// early when nobody observes the stream any more; dropping it drops the
    /// producer, which ends the stream with an `error` event.
    pub fn take_driver(&mut self) -> Option<Pin<Box<D>>> {
        self.driver.take()
    }

    /// Resolves to the final message, driving the producer if this stream
    /// carries it. Events are not consumed: they stay readable.
    pub fn result(&mut self) -> ModelResult<'_, D> {
        ModelResult {
            driver: Some(&mut self.driver),
            inner: self.events.result(),
        }
    }

    /// A detached [`ModelResult`] for another task: `'static`, `Send` and
    /// cloneable. It does not drive the producer: something else must (this
    /// stream being polled, or a spawned driver).
    pub fn result_handle(&self) -> ModelResult<'static> {
        ModelResult {
            driver: None,
            inner: self.events.result(),
        }
    }

    /// The typed cause of the call's terminal `error`: the one that event
    /// carries ([`ModelEvent::error_cause`]), read once this stream
    /// yielded the event or its result resolved: `None` before, after
    /// `done`, and for a model that gives no cause (the event's
    /// `errorMessage` is always there). HTTP models built on the wire crate
    /// attach one to every failure they report; the scripted model attaches
    /// its signal's [`cause`](super::AbortSignal::cause) to an abort.
    ///
    /// ```
    /// use agentstream::message::{assistant, StopReason};
    /// use agentstream::model::{ErrorCause, ErrorReason, ModelEvent, ModelStream};
    ///
    /// let (mut producer, mut stream) = ModelStream::channel();
    /// let mut message = assistant([], StopReason::Aborted);
    /// message.error_message = Some("Request was aborted".into());
    /// producer
    ///     .push_error(ModelEvent::error(ErrorReason::Aborted, message), ErrorCause::Aborted)
    ///     .unwrap();
    /// let result = futures_executor::block_on(stream.result());
    /// assert_eq!(result.stop_reason, StopReason::Aborted);
    /// assert!(matches!(stream.error_cause(), Some(ErrorCause::Aborted)));
    /// ```
    pub fn error_cause(&self) -> Option<ErrorCause> {
        self.cause
            .get()
            .cloned()
            .or_else(|| outcome_cause(self.events.peek_result()))
    }

    fn poll_driver(driver: &mut Option<Pin<Box<D>>>, cx: &mut Context<'_>) {
        if let Some(future) = driver {
            if future.as_mut().poll(cx).is_ready() {
                *driver = None;
            }
        }
    }
}

/// The message of the `error` event that stands in for a missing terminal
/// event.
fn producer_dropped() -> AssistantMessage {
    let mut message = assistant([], StopReason::Error);
    message.error_message = Some(PRODUCER_DROPPED_MESSAGE.into());
    message
}

impl<D: Future<Output = ()> + ?Sized> Stream for ModelStream<D> {
    type Item = ModelEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ModelEvent>> {
        let this = self.get_mut();
        // Pull-based: the driver runs only when nothing is buffered, so the
        // producer never runs ahead of the consumer (an abort seen by the
        // consumer takes effect at the very next event).
        let mut polled = this.events.poll_event(None);
        if polled.is_pending() {
            Self::poll_driver(&mut this.driver, cx);
            polled = this.events.poll_event(Some(cx.waker()));
        }
        match polled {
            Poll::Ready(Some(Ok(event))) => {
                if let ModelEvent::Error { cause, .. } = &event {
                    this.cause.clone_from(cause);
                }
                Poll::Ready(Some(event))
            }
            // Only reachable if the producer was leaked past its drop glue.
            Poll::Ready(Some(Err(StreamError::ProducerDropped))) => {
                Poll::Ready(Some(ModelEvent::Error {
                    reason: ErrorReason::Error,
                    error: Arc::new(producer_dropped()),
                    cause: EventCause::NONE,
                }))
            }
            Poll::Ready(Some(Err(StreamError::Failed(never)))) => match never {},
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<D: Future<Output = ()> + ?Sized> FusedStream for ModelStream<D> {
    fn is_terminated(&self) -> bool {
        self.events.is_terminated()
    }
}

impl<D: ?Sized> fmt::Debug for ModelStream<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelStream")
            .field("events", &self.events)
            .field("self_driven", &self.driver.is_some())
            .field(
                "error_cause",
                &self
                    .cause
                    .get()
                    .cloned()
                    .or_else(|| outcome_cause(self.events.peek_result())),
            )
            .finish()
    }
}

/// The cause a resolved result (the terminal event) carries.
fn outcome_cause(outcome: Option<ModelEvent>) -> Option<ErrorCause> {
    outcome.as_ref().and_then(ModelEvent::error_cause).cloned()
}

/// The result's message: taken out of its `Arc` without a copy when the
/// terminal event and every other handle are gone.
fn settle(outcome: Result<ModelEvent, StreamError<Infallible>>) -> AssistantMessage {
    match outcome {
        Ok(ModelEvent::Done { message, .. }) => Arc::unwrap_or_clone(message),
        Ok(ModelEvent::Error { error, .. }) => Arc::unwrap_or_clone(error),
        // Only terminal events resolve the result.
        Ok(_) => producer_dropped(),
        Err(StreamError::ProducerDropped) => producer_dropped(),
        Err(StreamError::Failed(never)) => match never {},
    }
}

/// The final message of a call, with the cause of its terminal `error`
/// ([`error_cause`](Self::error_cause)) once it resolved: value and
/// completion travel together.
///
/// [`ModelStream::result`] gives one that drives the stream's producer
/// while it is awaited (when the stream carries it);
/// [`ModelStream::result_handle`] a detached one, `ModelResult<'static>`
/// (`'static`, `Send`, cloneable), for another task, which does not drive
/// the producer. A clone is always detached.
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::{Model, ModelResult, ScriptedModel, StreamOptions};
///
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let mut stream = model.stream(&Default::default(), StreamOptions::default());
/// let detached: ModelResult<'static> = stream.result_handle();
/// let message = futures_executor::block_on(stream.result());
/// assert_eq!(message.text(), "hi");
/// assert_eq!(futures_executor::block_on(detached).text(), "hi");
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct ModelResult<'a, D: ?Sized = dyn Future<Output = ()> + Send> {
    /// The stream's driver slot, polled while the result is awaited; `None`
    /// for a detached result.
    driver: Option<&'a mut Option<Pin<Box<D>>>>,
    inner: ResultFuture<ModelEvent, Infallible>,
}

impl<D: ?Sized> ModelResult<'_, D> {
    /// The typed cause of the call's terminal `error`, once the result
    /// resolved (it is the cause that event carries); see
    /// [`ModelStream::error_cause`].
    pub fn error_cause(&self) -> Option<ErrorCause> {
        outcome_cause(self.inner.peek())
    }
}

impl<D: Future<Output = ()> + ?Sized> Future for ModelResult<'_, D> {
    type Output = AssistantMessage;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AssistantMessage> {
        let this = self.get_mut();
        if let Some(driver) = this.driver.as_deref_mut() {
            ModelStream::poll_driver(driver, cx);
        }
        Pin::new(&mut this.inner).poll(cx).map(settle)
    }
}

impl<D: Future<Output = ()> + ?Sized> FusedFuture for ModelResult<'_, D> {
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}

impl<D: ?Sized> Clone for ModelResult<'_, D> {
    /// A detached copy: it reads the same result but drives nothing.
    fn clone(&self) -> Self {
        ModelResult {
            driver: None,
            inner: self.inner.clone(),
        }
    }
}

impl<D: ?Sized> fmt::Debug for ModelResult<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelResult")
            .field(
                "self_driven",
                &self.driver.as_ref().is_some_and(|driver| driver.is_some()),
            )
            .finish_non_exhaustive()
    }
}

/// A detached future for a call's final message.
#[deprecated(
    since = "0.4.0",
    note = "merged into `ModelResult`: `ModelStream::result_handle` returns a detached `ModelResult<'static>`"
)]
pub type ResultHandle = ModelResult<'static>;
