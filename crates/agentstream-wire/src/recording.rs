//! [`RecordingEndpoint`]: an [`Endpoint`] that hands every piece of a response
//! body to a sink as the HTTP client delivered it, to record real
//! responses for [`ReplayModel`](crate::replay::ReplayModel) and
//! `agentstream decode`.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Drain;
use core::fmt;
use core::time::Duration;

use agentstream::message::Context;
use agentstream::model::{AbortSignal, ModelEvent, StreamOptions};

use crate::endpoint::{Endpoint, PreparedRequest, SigningError};
use crate::http::ResponseStream;

/// Where a [`RecordingEndpoint`] sends each piece of a 2xx body, in order.
pub type BodySink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// The old name of [`RecordingEndpoint`].
#[deprecated(note = "renamed to `RecordingEndpoint`")]
pub type TapEndpoint<E> = RecordingEndpoint<E>;
/// The old name of [`RecordingStream`].
#[deprecated(note = "renamed to `RecordingStream`")]
pub type Tapped<S> = RecordingStream<S>;

/// `endpoint`, with every piece of each 2xx response body passed to a
/// [`BodySink`] before it is decoded: the bytes exactly as the client
/// delivered them, one call per piece, so the pieces joined are the body
/// and their lengths are its chunking.
///
/// What the sink sees is what was decoded: the exchange stops reading once
/// the stream has its terminal event (bytes a server sends after `[DONE]`
/// or `message_stop` in a later piece are not read, so not recorded), and
/// the body of an HTTP error status is not a stream and is not passed on.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use agentstream_wire::endpoint::Endpoint;
/// use agentstream_wire::http::ResponseStream;
/// use agentstream_wire::openai::OpenAiConfig;
/// use agentstream_wire::recording::RecordingEndpoint;
///
/// let body = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&body);
/// let recording = RecordingEndpoint::new(OpenAiConfig::new("http://h/v1", "m"), Arc::new(move |piece: &[u8]| {
///     sink.lock().unwrap().extend_from_slice(piece);
/// }));
/// let mut stream = recording.open_stream_at(None, 0);
/// let _ = stream.feed(b"data: [DONE]\n\n").count();
/// assert_eq!(&*body.lock().unwrap(), b"data: [DONE]\n\n");
/// ```
pub struct RecordingEndpoint<E> {
    endpoint: E,
    sink: BodySink,
}

impl<E> RecordingEndpoint<E> {
    /// Records `endpoint`'s response bodies into `sink`.
    pub fn new(endpoint: E, sink: BodySink) -> Self {
        Self { endpoint, sink }
    }

    /// The recorded endpoint.
    pub fn inner(&self) -> &E {
        &self.endpoint
    }
}

impl<E: fmt::Debug> fmt::Debug for RecordingEndpoint<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingEndpoint")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl<E> RecordingEndpoint<E> {
    /// `stream` with each piece passed to the sink first.
    fn recorded<S>(&self, stream: S) -> RecordingStream<S> {
        RecordingStream {
            stream,
            sink: Arc::clone(&self.sink),
        }
    }
}

impl<E: Endpoint> Endpoint for RecordingEndpoint<E> {
    type Stream = RecordingStream<E::Stream>;
    type Error = E::Error;

    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, E::Error> {
        self.endpoint.prepare_call(context, options)
    }

    fn sign(&self, request: &mut PreparedRequest, now_ms: u64) -> Result<(), SigningError> {
        self.endpoint.sign(request, now_ms)
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> Self::Stream {
        self.recorded(self.endpoint.open_stream_at(signal, timestamp_ms))
    }

    fn connect_timeout(&self) -> Option<Duration> {
        self.endpoint.connect_timeout()
    }

    fn idle_timeout(&self) -> Option<Duration> {
        self.endpoint.idle_timeout()
    }
}

/// The stream of a [`RecordingEndpoint`]: `S`, with each fed piece passed to the
/// sink first.
pub struct RecordingStream<S> {
    stream: S,
    sink: BodySink,
}

impl<S: fmt::Debug> fmt::Debug for RecordingStream<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingStream")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl<S: ResponseStream> ResponseStream for RecordingStream<S> {
    fn is_finished(&self) -> bool {
        self.stream.is_finished()
    }

    fn feed(&mut self, bytes: &[u8]) -> Drain<'_, ModelEvent> {
        if !self.stream.is_finished() {
            (self.sink)(bytes);
        }
        self.stream.feed(bytes)
    }

    fn finish_input(&mut self) -> Drain<'_, ModelEvent> {
        self.stream.finish_input()
    }

    fn abort(&mut self) -> Drain<'_, ModelEvent> {
        self.stream.abort()
    }

    fn interrupt(&mut self, message: String) -> Drain<'_, ModelEvent> {
        self.stream.interrupt(message)
    }

    fn fail(&mut self, message: String) -> Drain<'_, ModelEvent> {
        self.stream.fail(message)
    }

    fn http_error(
        &mut self,
        status: u16,
        body: &[u8],
        retry_after: Option<&str>,
    ) -> Drain<'_, ModelEvent> {
        self.stream.http_error(status, body, retry_after)
    }
}
