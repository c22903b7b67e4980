//! [`Host`]: the seam between the one call path of this crate and a
//! runtime. A host sends a request and hands back the response head and a
//! stream of body chunks, and names its runtime's [`Timer`] (the idle
//! timeout's sleeps, the messages' timestamps); nothing else.
//! Request building, per-call options, the exchange loop, timeouts, the
//! typed error cause and the timestamp are [`EndpointModel`]'s, written
//! once for every host.
//!
//! [`EndpointModel`]: crate::model::EndpointModel

use core::error::Error;
use core::fmt;
use core::future::Future;
use core::time::Duration;

use agentstream::rt::Timer;
use alloc::string::String;

use crate::endpoint::PreparedRequest;
use crate::http::{BoxError, ResponseBody, ResponseHead, TransportError, READ_HEADERS};

/// What a runtime adapter implements so that every provider runs on it.
///
/// - [`send`](Self::send): send one request (method, URL, headers and
///   body, as [`PreparedRequest::headers_in_order`] lists them) and resolve
///   to the response head (status and headers) and its body, read piece
///   by piece. A failure is a [`TransportError`]; a connection not
///   established within `connect_timeout` is
///   [`TransportError::connect_timed_out`].
/// - [`timer`](Self::timer): the runtime's [`Timer`], whose sleeps time
///   the idle timeout and whose clock stamps the call's messages.
///
/// The URL has been checked before `send` sees it: its scheme is `http`
/// or `https` and it has a host (see [`parse_url`](crate::model::parse_url)).
///
/// ```
/// use core::future::{ready, Ready};
/// use std::time::Duration;
/// use agentstream::message::{user, Context};
/// use agentstream::model::{Model, StreamOptions};
/// use agentstream::rt::Timer;
/// use agentstream_wire::endpoint::PreparedRequest;
/// use agentstream_wire::host::{ClientError, Host};
/// use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
/// use agentstream_wire::model::OpenAiCompatModel;
/// use agentstream_wire::openai::OpenAiConfig;
///
/// /// A host whose every response is one recorded body.
/// struct Canned;
/// struct Once(Option<Vec<u8>>);
///
/// impl ResponseBody for Once {
///     type Chunk = Vec<u8>;
///     fn next_chunk(&mut self) -> Ready<Result<Option<Vec<u8>>, TransportError>> {
///         ready(Ok(self.0.take()))
///     }
/// }
///
/// impl Host for Canned {
///     type Body = Once;
///     fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
///         Ok(Canned)
///     }
///     fn send(
///         &self,
///         request: PreparedRequest,
///         _connect_timeout: Option<Duration>,
///     ) -> Ready<Result<(ResponseHead, Once), TransportError>> {
///         assert_eq!(request.url, "http://h/v1/chat/completions");
///         let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n";
///         ready(Ok((ResponseHead::new(200), Once(Some(body.to_vec())))))
///     }
///     type Timer = Canned;
///     fn timer(&self) -> &Canned {
///         self
///     }
/// }
///
/// /// Sleeps that never end, a clock that stands still.
/// impl Timer for Canned {
///     type Sleep = core::future::Pending<()>;
///     fn sleep(&self, _duration: Duration) -> core::future::Pending<()> {
///         core::future::pending()
///     }
///     fn now_unix_ms(&self) -> u64 {
///         1_700_000_000_000
///     }
/// }
///
/// let model = OpenAiCompatModel::<Canned>::new(OpenAiConfig::new("http://h/v1", "m")).unwrap();
/// let context = Context::from_messages([user("hello").into()]);
/// let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
/// assert_eq!((message.text().as_str(), message.timestamp), ("hi", 1_700_000_000_000));
/// ```
pub trait Host: Send + Sync + 'static {
    /// A response body, read piece by piece.
    type Body: ResponseBody;

    /// The runtime's timer and clock (the host crate's runtime type).
    type Timer: Timer<Sleep: Send> + Send + Sync;

    /// The host's own client for an endpoint whose connections must be
    /// established within `connect_timeout` (a client that can only take
    /// the timeout when it is built, such as reqwest's, takes it here).
    ///
    /// # Errors
    /// A [`ClientError`] when the client cannot be built (TLS
    /// initialisation, say).
    fn for_endpoint(connect_timeout: Option<Duration>) -> Result<Self, ClientError>
    where
        Self: Sized;

    /// Sends `request` and waits for the response head.
    fn send(
        &self,
        request: PreparedRequest,
        connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, Self::Body), TransportError>> + Send;

    /// The runtime's timer: its sleeps time the idle timeout, its clock
    /// stamps the call's messages.
    fn timer(&self) -> &Self::Timer;
}

/// The response head a [`Host::send`] resolves to: `status` and those of
/// the [`READ_HEADERS`] that `header` finds (a lookup by lower-case name
/// in the client's response headers). Every host builds its head here, so
/// a header the exchange starts to read reaches it from every runtime.
///
/// ```
/// use agentstream_wire::host::response_head;
///
/// let head = response_head(429, |name| (name == "retry-after").then(|| "2".to_owned()));
/// assert_eq!((head.status, head.header("retry-after")), (429, Some("2")));
/// ```
pub fn response_head(status: u16, mut header: impl FnMut(&str) -> Option<String>) -> ResponseHead {
    READ_HEADERS
        .iter()
        .fold(ResponseHead::new(status), |head, name| match header(name) {
            Some(value) => head.with_header(name, value),
            None => head,
        })
}

/// A [`Host`] could not build its HTTP client. The client's error is the
/// [`source`](Error::source).
#[derive(Debug)]
pub struct ClientError {
    source: BoxError,
}

impl ClientError {
    /// The client could not be built because of `source`.
    pub fn new(source: impl Into<BoxError>) -> Self {
        Self {
            source: source.into(),
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot build the HTTP client")
    }
}

impl Error for ClientError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        let source: &(dyn Error + 'static) = &*self.source;
        Some(source)
    }
}
