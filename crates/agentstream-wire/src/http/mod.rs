//! The HTTP exchange, still without IO: the response head and body as a
//! [`Host`](crate::host::Host)'s client reports them, [`TransportError`],
//! and [`exchange`], the runtime-neutral loop that turns one HTTP response
//! into events: the status check, reading a bounded error body, the abort
//! and idle-timeout races, turning transport failures into the call's
//! `error` event with its typed cause. [`EndpointModel`](crate::model::EndpointModel)
//! runs it for every provider on every host; [`ReplayModel`](crate::replay::ReplayModel)
//! runs it over recorded bodies.
//!
//! The provider's part is a [`ResponseStream`]: it decodes the body and
//! maps an HTTP error status to its error message.
//! [`SseStream`](crate::sse::SseStream) is the one of every SSE provider.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::{Drain, Vec};
use core::future::Future;
use core::pin::pin;
use core::time::Duration;

use agentstream::model::{
    AbortSignal, ErrorCause, HttpFailure, ModelEvent, ModelProducer, RetryAfter, TimeoutKind,
};
use futures_util::future::{self, Either};

mod error;
pub use error::{error_report, BoxError, TransportError, TransportErrorKind};

/// How many bytes of a non-2xx response body are read to quote the
/// provider's message.
pub const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// One provider's handling of a streamed response: body bytes in,
/// [`ModelEvent`]s out, plus the provider's reading of an HTTP error.
///
/// [`exchange`] drives it. Every method returns the events it completes;
/// once [`is_finished`](Self::is_finished) is true, exactly one terminal
/// event has been returned and later calls return nothing.
pub trait ResponseStream {
    /// Whether the terminal event was returned.
    fn is_finished(&self) -> bool;

    /// Decodes the next piece of a 2xx body.
    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent>;

    /// The body ended: the remaining events, ending in `done` or, for a
    /// truncated body, `error`.
    fn finish_input(&mut self) -> Drain<'_, ModelEvent>;

    /// The caller's signal aborted the call: `error` with reason `aborted`,
    /// [`ABORTED_MESSAGE`](agentstream::model::ABORTED_MESSAGE) and what was
    /// received so far.
    fn abort(&mut self) -> Drain<'_, ModelEvent>;

    /// A timeout cut the call short: `error` with reason `aborted` (as Pi
    /// reports timeouts), `message` naming which timeout, and what was
    /// received so far.
    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent>;

    /// The transport failed: `error` with `message` and what was received
    /// so far.
    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent>;

    /// The response has a status outside 2xx: one `error` naming the
    /// status and the provider's message from `body` (at most
    /// [`ERROR_BODY_LIMIT`] bytes of it), and `retry_after` (the
    /// `Retry-After` header) when given.
    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent>;
}

/// Pushes `events` into `producer`; `false` when the producer refused one
/// (the stream ended or nobody listens any more), so the caller can stop.
pub fn push_all(
    producer: &mut ModelProducer,
    events: impl IntoIterator<Item = ModelEvent>,
) -> bool {
    events.into_iter().all(|event| producer.push(event).is_ok())
}

/// The head of a response, as a [`Host`](crate::host::Host)'s client
/// reports it: the status and the headers.
///
/// ```
/// use agentstream_wire::http::ResponseHead;
///
/// let head = ResponseHead::new(429).with_header("Retry-After", "20");
/// assert_eq!((head.status, head.header("retry-after")), (429, Some("20")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseHead {
    /// The status code.
    pub status: u16,
    /// The headers the exchange reads (names in lower case), in order.
    pub headers: Vec<(String, String)>,
}

impl ResponseHead {
    /// A head with `status` and no headers.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
        }
    }

    /// Adds the header `name: value` (the name is stored in lower case).
    #[must_use]
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// The first value of the header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The response headers a [`Host`](crate::host::Host) hands to the
/// exchange: only `Retry-After` is read today.
pub const READ_HEADERS: [&str; 1] = ["retry-after"];

/// The body of a response, read piece by piece. Implemented by each
/// adapter over its HTTP client.
pub trait ResponseBody: Send {
    /// One piece of the body.
    type Chunk: AsRef<[u8]> + Send;

    /// The next piece; `Ok(None)` at the end of the body.
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Self::Chunk>, TransportError>> + Send;
}

/// What one step waited for.
enum Step<T> {
    Ready(T),
    Aborted,
    Idle,
}

/// Waits for `work`, unless the signal aborts or the idle timeout passes
/// first.
async fn step<T, S>(
    work: impl Future<Output = T>,
    signal: Option<&AbortSignal>,
    idle: Option<Duration>,
    sleep: &impl Fn(Duration) -> S,
) -> Step<T>
where
    S: Future<Output = ()>,
{
    let aborted = async {
        match signal {
            Some(signal) => signal.aborted().await,
            None => future::pending().await,
        }
    };
    let idle = async {
        match idle {
            Some(duration) => sleep(duration).await,
            None => future::pending().await,
        }
    };
    // The abort and the timer are polled first, so an abort that already
    // happened wins over data that is ready.
    let interrupt = async {
        match future::select(pin!(aborted), pin!(idle)).await {
            Either::Left(_) => Step::<T>::Aborted,
            Either::Right(_) => Step::Idle,
        }
    };
    match future::select(pin!(interrupt), pin!(work)).await {
        Either::Left((interrupt, _)) => interrupt,
        Either::Right((value, _)) => Step::Ready(value),
    }
}

/// The `errorMessage` of a call ended by its idle timeout `after`:
/// `idle timeout: nothing received for 30s`.
pub fn idle_timeout_message(after: Duration) -> String {
    alloc::format!("idle timeout: nothing received for {after:?}")
}

fn idle_message(idle: Option<Duration>) -> String {
    idle_timeout_message(idle.unwrap_or_default())
}

/// Runs one HTTP exchange: awaits `response` (the adapter's client sending
/// the request), then feeds the body to `stream` and pushes every event
/// into `producer`, until the stream has its terminal event.
///
/// - A status outside 2xx: up to [`ERROR_BODY_LIMIT`] bytes of the body are
///   read and the call ends with [`ResponseStream::http_error`] (for
///   OpenAI, naming the status, the provider's message and `Retry-After`).
/// - A 2xx body is fed to the stream as it arrives (for OpenAI, a body that
///   is not an event stream, such as a JSON error with status 200, ends in
///   `error` quoting it).
/// - `signal` aborting, or `idle_timeout` passing with nothing received
///   (measured with `sleep`, the runtime's timer), ends the call in
///   `error(aborted)` with what was received so far; the request is
///   dropped, which closes the connection. The `errorMessage` tells the
///   two apart: [`ABORTED_MESSAGE`](agentstream::model::ABORTED_MESSAGE)
///   for the signal, [`idle_timeout_message`] for the timer.
/// - A [timeout](TransportError::is_timeout) of the client (the connect
///   timeout) is `error(aborted)` too, with its [`error_report`] as the
///   message; any other
///   [`TransportError`] ends in `error` with its [`error_report`] (for a
///   body cut off mid-stream, after `the response body broke off: `).
///
/// Every `error` it ends a call with also records its typed
/// [`ErrorCause`] on the producer, read back with
/// [`ModelStream::error_cause`](agentstream::model::ModelStream::error_cause):
/// the table is in [`cause`](crate::cause).
///
/// It returns early when nobody listens to the stream any more.
pub async fn exchange<P, B, R, S>(
    producer: ModelProducer,
    stream: P,
    signal: Option<AbortSignal>,
    idle_timeout: Option<Duration>,
    sleep: impl Fn(Duration) -> S,
    response: R,
) where
    P: ResponseStream,
    B: ResponseBody,
    R: Future<Output = Result<(ResponseHead, B), TransportError>>,
    S: Future<Output = ()>,
{
    exchange_at(
        producer,
        stream,
        signal,
        idle_timeout,
        sleep,
        response,
        None,
    )
    .await;
}

/// [`exchange`] for a request to `url`, which a 404 names.
pub(crate) async fn exchange_at<P, B, R, S>(
    mut producer: ModelProducer,
    mut stream: P,
    signal: Option<AbortSignal>,
    idle_timeout: Option<Duration>,
    sleep: impl Fn(Duration) -> S,
    response: R,
    url: Option<&str>,
) where
    P: ResponseStream,
    B: ResponseBody,
    R: Future<Output = Result<(ResponseHead, B), TransportError>>,
    S: Future<Output = ()>,
{
    if signal.as_ref().is_some_and(AbortSignal::is_aborted) {
        end_with(&mut producer, abort_cause(signal.as_ref()), stream.abort());
        return;
    }
    let (head, mut body) = match step(response, signal.as_ref(), idle_timeout, &sleep).await {
        Step::Ready(Ok(response)) => response,
        Step::Ready(Err(error)) if !error.is_timeout() => {
            let events = stream.fail(error_report(&error));
            end_with(&mut producer, transport_cause(error), events);
            return;
        }
        Step::Ready(Err(error)) => {
            let cause = ErrorCause::Timeout(TimeoutKind::Connect, error.after);
            end_with(&mut producer, cause, stream.interrupt(error_report(&error)));
            return;
        }
        Step::Aborted => {
            end_with(&mut producer, abort_cause(signal.as_ref()), stream.abort());
            return;
        }
        Step::Idle => {
            let cause = ErrorCause::Timeout(TimeoutKind::Idle, idle_timeout);
            end_with(
                &mut producer,
                cause,
                stream.interrupt(idle_message(idle_timeout)),
            );
            return;
        }
    };
    if !(200..300).contains(&head.status) {
        let mut text = Vec::new();
        while text.len() < ERROR_BODY_LIMIT {
            match step(body.next_chunk(), signal.as_ref(), idle_timeout, &sleep).await {
                Step::Ready(Ok(Some(chunk))) => {
                    let chunk = chunk.as_ref();
                    let room = ERROR_BODY_LIMIT - text.len();
                    text.extend_from_slice(&chunk[..room.min(chunk.len())]);
                }
                // The status is what matters: report it with what was read.
                Step::Ready(Ok(None) | Err(_)) | Step::Idle => break,
                Step::Aborted => {
                    end_with(&mut producer, abort_cause(signal.as_ref()), stream.abort());
                    return;
                }
            }
        }
        let retry_after = head.header("retry-after");
        let cause = ErrorCause::Http(
            HttpFailure::new(head.status)
                .with_code(crate::cause::error_code(&text))
                .with_retry_after(retry_after.and_then(RetryAfter::parse)),
        );
        let events = stream.http_error(head.status, &text, retry_after);
        match url.filter(|_| head.status == 404) {
            // A wrong base URL is the usual 404: say which URL it was.
            Some(url) => {
                let events = events.map(|mut event| {
                    if let ModelEvent::Error { error, .. } = &mut event {
                        // The event was just made: `make_mut` copies nothing.
                        let message = Arc::make_mut(error)
                            .error_message
                            .get_or_insert_with(String::new);
                        message.push_str(" (POST ");
                        message.push_str(url);
                        message.push(')');
                    }
                    event
                });
                end_with(&mut producer, cause, events);
            }
            None => {
                end_with(&mut producer, cause, events);
            }
        }
        return;
    }
    // One buffer for every chunk's events, to look at the last one.
    let mut buffer: Vec<ModelEvent> = Vec::new();
    loop {
        let (cause, events) =
            match step(body.next_chunk(), signal.as_ref(), idle_timeout, &sleep).await {
                Step::Ready(Ok(Some(chunk))) => (None, stream.feed(chunk.as_ref())),
                Step::Ready(Ok(None)) => (None, stream.finish_input()),
                Step::Ready(Err(error)) if !error.is_timeout() => {
                    let mut message = String::from("the response body broke off: ");
                    message.push_str(&error_report(&error));
                    (Some(transport_cause(error)), stream.fail(message))
                }
                Step::Ready(Err(error)) => {
                    let cause = ErrorCause::Timeout(TimeoutKind::Idle, error.after);
                    (Some(cause), stream.interrupt(error_report(&error)))
                }
                Step::Aborted => (Some(abort_cause(signal.as_ref())), stream.abort()),
                Step::Idle => (
                    Some(ErrorCause::Timeout(TimeoutKind::Idle, idle_timeout)),
                    stream.interrupt(idle_message(idle_timeout)),
                ),
            };
        buffer.extend(events);
        if let Some(last) = buffer.last().filter(|e| e.is_terminal()) {
            // A failure the stream found in the body carries its cause;
            // one the exchange caused, the exchange's.
            let cause = cause.or_else(|| last.error_cause().cloned());
            let cause = cause.unwrap_or(ErrorCause::Protocol);
            if !end_with(&mut producer, cause, buffer.drain(..)) {
                return;
            }
        } else if !push_all(&mut producer, buffer.drain(..)) {
            return;
        }
        if stream.is_finished() {
            return;
        }
    }
}

/// A transport failure as a cause, the error kept as its source.
fn transport_cause(error: TransportError) -> ErrorCause {
    ErrorCause::Transport(alloc::sync::Arc::new(error))
}

/// The cause of a call `signal` aborted: the signal's (a deadline gives
/// its timeout), else [`ErrorCause::Aborted`].
fn abort_cause(signal: Option<&AbortSignal>) -> ErrorCause {
    signal.map_or(ErrorCause::Aborted, AbortSignal::cause)
}

/// Pushes `events`, attaching `cause` to the terminal `error` among them
/// (a terminal `done` ignores it).
fn end_with(
    producer: &mut ModelProducer,
    cause: ErrorCause,
    events: impl IntoIterator<Item = ModelEvent>,
) -> bool {
    let mut pushed = true;
    let mut cause = Some(cause);
    for mut event in events {
        if let (ModelEvent::Error { .. }, Some(cause)) = (&event, cause.take()) {
            event.attach_cause(cause);
        }
        pushed = pushed && producer.push(event).is_ok();
        if !pushed {
            break;
        }
    }
    pushed
}
