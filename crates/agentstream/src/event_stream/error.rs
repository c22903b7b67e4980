//! Error types of the event stream.

use core::fmt;

/// Why a consumer or result awaiter did not get a successful end.
///
/// Yielded once by [`EventStream`](super::EventStream) before it ends, and
/// returned by [`ResultFuture`](super::ResultFuture).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamError<F> {
    /// The producer called [`Producer::fail`](super::Producer::fail) with this error.
    Failed(F),
    /// The [`Producer`](super::Producer) was dropped without calling
    /// [`finish`](super::Producer::finish) or [`fail`](super::Producer::fail).
    ProducerDropped,
}

impl<F> StreamError<F> {
    /// Returns the producer's error, or `None` for [`StreamError::ProducerDropped`].
    pub fn into_failure(self) -> Option<F> {
        match self {
            Self::Failed(error) => Some(error),
            Self::ProducerDropped => None,
        }
    }
}

impl<F: fmt::Display> fmt::Display for StreamError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(error) => write!(f, "EventStream failed: {error}"),
            Self::ProducerDropped => f.write_str("EventStream producer dropped without a result"),
        }
    }
}

impl<F: core::error::Error + 'static> core::error::Error for StreamError<F> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Failed(error) => Some(error),
            Self::ProducerDropped => None,
        }
    }
}

/// Why a [`Producer`](super::Producer) call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The stream already ended with [`Producer::finish`](super::Producer::finish).
    Finished,
    /// The stream already ended with [`Producer::fail`](super::Producer::fail).
    Failed,
    /// The [`EventStream`](super::EventStream) and every
    /// [`ResultFuture`](super::ResultFuture) are gone: nobody can observe the
    /// stream any more, so the producer may stop its work.
    Closed,
}

/// A refused [`Producer`](super::Producer) call. It hands back the value that
/// could not be delivered.
///
/// Its `Display` wording is stable:
/// - `EventStream is already terminal (finished)`
/// - `EventStream is already terminal (failed)`
/// - `EventStream is closed: no consumer or result awaiter is left`
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RefusedError<T> {
    reason: RefusalReason,
    value: T,
}

impl<T> RefusedError<T> {
    pub(crate) fn new(reason: RefusalReason, value: T) -> Self {
        Self { reason, value }
    }

    /// Why the call was refused.
    pub fn reason(&self) -> RefusalReason {
        self.reason
    }

    /// Whether the stream had already finished or failed.
    pub fn is_terminal(&self) -> bool {
        matches!(self.reason, RefusalReason::Finished | RefusalReason::Failed)
    }

    /// Whether nobody is left to observe the stream.
    pub fn is_closed(&self) -> bool {
        self.reason == RefusalReason::Closed
    }

    /// Returns the event, result or error that was not delivered.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> fmt::Debug for RefusedError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefusedError")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for RefusedError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.reason {
            RefusalReason::Finished => "EventStream is already terminal (finished)",
            RefusalReason::Failed => "EventStream is already terminal (failed)",
            RefusalReason::Closed => "EventStream is closed: no consumer or result awaiter is left",
        })
    }
}

impl<T> core::error::Error for RefusedError<T> {}
