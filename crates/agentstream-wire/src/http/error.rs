//! [`TransportError`]: why a host's client could not deliver (more of) a
//! response, with the client's error kept as its source, and
//! [`error_report`], the call's message of it.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use core::error::Error;
use core::fmt;
use core::time::Duration;

/// A boxed error from an HTTP client, kept as the
/// [`source`](Error::source) of a [`TransportError`].
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// What went wrong in a [`TransportError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The connect timeout, or a timeout of the client itself, passed. The
    /// call ends in `error(aborted)`.
    TimedOut,
    /// Anything else: a refused connection, a TLS failure, a reset, a body
    /// cut off mid-stream, a URL the client cannot use. The call ends in
    /// `error` with the error's [report](error_report).
    Failed,
}

/// Why an adapter's HTTP client could not deliver (more of) a response.
///
/// It has a [kind](Self::kind), a message and, usually, the client's own
/// error as its [`source`](Error::source), so nothing of the cause is
/// lost. Its [`Display`](fmt::Display) is the message alone (`timed out`
/// for [`timed_out`](Self::timed_out)); the call's `errorMessage` is
/// [`error_report`] of it: the message followed by each cause.
///
/// ```
/// use agentstream_wire::http::{error_report, TransportError, TransportErrorKind};
///
/// let cause = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// let error = TransportError::failed("cannot connect to 127.0.0.1:9").with_source(cause);
/// assert_eq!(error.kind(), TransportErrorKind::Failed);
/// assert_eq!(error.to_string(), "cannot connect to 127.0.0.1:9");
/// assert_eq!(error_report(&error), "cannot connect to 127.0.0.1:9: connection refused");
///
/// // A transparent wrapper: the client's error says it all.
/// let cause = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the body was cut off");
/// let error = TransportError::from_source(cause);
/// assert_eq!(error.to_string(), "the body was cut off");
/// assert!(TransportError::timed_out().is_timeout());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct TransportError {
    kind: TransportErrorKind,
    /// `None`: transparent, the source is shown in its place.
    message: Option<Cow<'static, str>>,
    source: Option<BoxError>,
    /// For a connect timeout, how long it was.
    pub(super) after: Option<Duration>,
}

impl TransportError {
    /// A timeout: the call ends in `error(aborted)`. Displays as
    /// `timed out`.
    pub fn timed_out() -> Self {
        Self {
            kind: TransportErrorKind::TimedOut,
            message: Some(Cow::Borrowed("timed out")),
            source: None,
            after: None,
        }
    }

    /// The connect timeout passed: a [timeout](Self::is_timeout) that
    /// displays as `connect timeout: no connection within 10s` (for a
    /// timeout of 10 s), the call's `errorMessage`.
    pub fn connect_timed_out(after: Duration) -> Self {
        Self {
            kind: TransportErrorKind::TimedOut,
            message: Some(Cow::Owned(alloc::format!(
                "connect timeout: no connection within {after:?}"
            ))),
            source: None,
            after: Some(after),
        }
    }

    /// A failure described by `message`, such as `cannot connect to
    /// api.example.com:443`. Add the client's error with
    /// [`with_source`](Self::with_source).
    pub fn failed(message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            kind: TransportErrorKind::Failed,
            message: Some(message.into()),
            source: None,
            after: None,
        }
    }

    /// A failure that is the client's `error` and nothing more: it
    /// displays as `error` and its [`source`](Error::source) is `error`'s
    /// source, so a report shows the client's chain unchanged.
    pub fn from_source(error: impl Into<BoxError>) -> Self {
        Self {
            kind: TransportErrorKind::Failed,
            message: None,
            source: Some(error.into()),
            after: None,
        }
    }

    /// Sets the client's error that caused this one.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        if self.message.is_none() {
            // A transparent error keeps showing what it wrapped.
            self.message = Some(Cow::Owned(self.to_string()));
        }
        self.source = Some(source.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> TransportErrorKind {
        self.kind
    }

    /// Whether this is a timeout, which ends the call in `error(aborted)`.
    pub fn is_timeout(&self) -> bool {
        self.kind == TransportErrorKind::TimedOut
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.message, &self.source) {
            (Some(message), _) => f.write_str(message),
            (None, Some(source)) => fmt::Display::fmt(source, f),
            (None, None) => f.write_str("transport failed"),
        }
    }
}

impl Error for TransportError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        let source: &(dyn Error + 'static) = self.source.as_deref()?;
        if self.message.is_some() {
            Some(source)
        } else {
            source.source()
        }
    }
}

/// `error`'s message followed by each of its causes, joined with `: `. A
/// cause whose text the message already contains is skipped (clients often
/// repeat their cause in their own message).
///
/// ```
/// use agentstream_wire::http::{error_report, TransportError};
///
/// let error = TransportError::failed("the request failed")
///     .with_source(std::io::Error::other("reset by peer"));
/// assert_eq!(error_report(&error), "the request failed: reset by peer");
/// ```
pub fn error_report(error: &(dyn Error + 'static)) -> String {
    let mut report = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !text.is_empty() && !report.contains(&text) {
            report.push_str(": ");
            report.push_str(&text);
        }
        source = cause.source();
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[derive(Debug)]
    struct Leaf;

    impl fmt::Display for Leaf {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("leaf cause")
        }
    }

    impl Error for Leaf {}

    /// Repeats its cause in its own message, as some clients do.
    #[derive(Debug)]
    struct Wrapper(Leaf);

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "wrapper ({})", self.0)
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn sources_are_kept_and_reported_once() {
        let error = TransportError::failed("request failed").with_source(Wrapper(Leaf));
        assert_eq!(error.to_string(), "request failed");
        let source = error.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("wrapper (leaf cause)"));
        assert_eq!(error_report(&error), "request failed: wrapper (leaf cause)");

        let transparent = TransportError::from_source(Wrapper(Leaf));
        assert_eq!(transparent.to_string(), "wrapper (leaf cause)");
        let source = transparent.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("leaf cause"));
        assert_eq!(error_report(&transparent), "wrapper (leaf cause)");

        let timeout = TransportError::timed_out().with_source(Leaf);
        assert!(timeout.is_timeout());
        assert_eq!(error_report(&timeout), "timed out: leaf cause");

        let rewrapped = TransportError::from_source(Leaf).with_source(Wrapper(Leaf));
        assert_eq!(rewrapped.to_string(), "leaf cause");
        assert_eq!(rewrapped.kind(), TransportErrorKind::Failed);
    }
}
