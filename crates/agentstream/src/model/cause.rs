//! [`ErrorCause`]: the typed reason behind a call's terminal `error`.
//!
//! The `error` event keeps Pi's JSON: an `errorMessage` string a person
//! reads. A program that wants to act on the failure (retry after a 429,
//! report a timeout, stop on a 401) reads the cause instead, from
//! [`ModelStream::error_cause`](super::ModelStream::error_cause) or
//! [`ModelResult::error_cause`](super::ModelResult::error_cause). It
//! travels beside the event, so the event and its JSON stay unchanged.

use alloc::string::String;
use alloc::sync::Arc;
use core::error::Error;
use core::fmt;
use core::time::Duration;

/// A shared error, kept as the [`source`](Error::source) of a cause.
pub type SharedError = Arc<dyn Error + Send + Sync + 'static>;

/// Why a call ended in `error`, for a program to match on.
///
/// Its [`Display`](fmt::Display) is a short, stable description (listed
/// on each variant); the call's `errorMessage` stays the provider-specific
/// text a person reads.
///
/// ```
/// use agentstream::model::{ErrorCause, HttpFailure, RetryAfter};
/// use core::time::Duration;
///
/// let cause = ErrorCause::Http(
///     HttpFailure::new(429)
///         .with_code(Some("rate_limit_exceeded".into()))
///         .with_retry_after(RetryAfter::parse("20")),
/// );
/// assert_eq!(cause.to_string(), "HTTP 429 (rate_limit_exceeded)");
/// assert!(cause.is_retryable());
/// assert_eq!(cause.retry_after(), Some(RetryAfter::Delay(Duration::from_secs(20))));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ErrorCause {
    /// The response had a status outside 2xx. Displays as `HTTP {status}`,
    /// followed by ` ({code})` when the provider named one.
    Http(HttpFailure),
    /// The provider reported an error inside a 2xx stream (an OpenAI chunk
    /// with `error`, an Anthropic `error` event such as `overloaded_error`),
    /// or ended it with a stop reason the protocol treats as a failure
    /// (`refusal`, `content_filter`). Displays as `the provider reported
    /// an error`, followed by ` ({code})` when it named one.
    Provider(ProviderFailure),
    /// The HTTP client could not deliver the response: a refused
    /// connection, a TLS failure, a reset, a body cut off. The client's
    /// error is the [`source`](Error::source). Displays as `transport
    /// failed`.
    Transport(SharedError),
    /// A timeout passed. Displays as `connect timeout`, `idle timeout` or
    /// `total timeout`, followed by ` after {duration:?}` when known.
    Timeout(TimeoutKind, Option<Duration>),
    /// The caller's signal aborted the call. Displays as `aborted`.
    Aborted,
    /// The response broke the protocol: a body that is not an event
    /// stream, data that is not JSON, a stream that ended without its final
    /// event. Displays as `protocol violation`.
    Protocol,
    /// The request could not be built from the context (a tool call with
    /// no result, an image the provider cannot take): nothing was sent.
    /// Displays as `invalid request`.
    InvalidRequest,
    /// The response exceeded one of the client's limits; the limit's own
    /// error (in the wire crate, `LimitExceeded`, which names the limit) is
    /// the [`source`](Error::source). Displays as `limit exceeded`.
    LimitExceeded(SharedError),
}

impl ErrorCause {
    /// Whether trying the same request again may succeed: HTTP 429 and
    /// 5xx, transport failures and connect timeouts. Never an abort, an
    /// idle or total timeout, a protocol violation, a limit, an error the
    /// provider sent inside a stream, or another 4xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http(http) => matches!(http.status, 429 | 500..=599),
            Self::Transport(_) | Self::Timeout(TimeoutKind::Connect, _) => true,
            _ => false,
        }
    }

    /// The `Retry-After` of an HTTP failure, when the server sent a valid
    /// one.
    pub fn retry_after(&self) -> Option<RetryAfter> {
        match self {
            Self::Http(http) => http.retry_after,
            _ => None,
        }
    }

    /// The HTTP status, for an [`Http`](Self::Http) cause.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http(http) => Some(http.status),
            _ => None,
        }
    }
}

impl fmt::Display for ErrorCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(http) => fmt::Display::fmt(http, f),
            Self::Provider(provider) => fmt::Display::fmt(provider, f),
            Self::Transport(_) => f.write_str("transport failed"),
            Self::Timeout(kind, after) => {
                f.write_str(kind.as_str())?;
                match after {
                    Some(after) => write!(f, " after {after:?}"),
                    None => Ok(()),
                }
            }
            Self::Aborted => f.write_str("aborted"),
            Self::Protocol => f.write_str("protocol violation"),
            Self::InvalidRequest => f.write_str("invalid request"),
            Self::LimitExceeded(_) => f.write_str("limit exceeded"),
        }
    }
}

impl Error for ErrorCause {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Transport(source) | Self::LimitExceeded(source) => Some(&**source),
            _ => None,
        }
    }
}

/// Which timeout ended a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// No connection (no response head) within the connect timeout.
    Connect,
    /// Nothing received for the idle timeout.
    Idle,
    /// The whole call took longer than its deadline
    /// ([`stream_with_timeout`](crate::rt::stream_with_timeout)).
    Total,
}

impl TimeoutKind {
    /// `connect timeout`, `idle timeout` or `total timeout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect timeout",
            Self::Idle => "idle timeout",
            Self::Total => "total timeout",
        }
    }
}

/// An HTTP status outside 2xx, with what the provider said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpFailure {
    /// The status code.
    pub status: u16,
    /// The provider's error code: OpenAI's `error.code` (or `error.type`
    /// when there is no code), Anthropic's `error.type`.
    pub code: Option<String>,
    /// The `Retry-After` header, when present and valid.
    pub retry_after: Option<RetryAfter>,
}

impl HttpFailure {
    /// A failure with `status` and nothing else.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            code: None,
            retry_after: None,
        }
    }

    /// Sets the provider's error code.
    #[must_use]
    pub fn with_code(mut self, code: Option<String>) -> Self {
        self.code = code;
        self
    }

    /// Sets the `Retry-After`.
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: Option<RetryAfter>) -> Self {
        self.retry_after = retry_after;
        self
    }
}

impl fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        match &self.code {
            Some(code) => write!(f, " ({code})"),
            None => Ok(()),
        }
    }
}

/// An error the provider reported inside a 2xx response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderFailure {
    /// The provider's code: the error's `code` or `type`
    /// (`overloaded_error`), or the stop reason (`refusal`).
    pub code: Option<String>,
}

impl ProviderFailure {
    /// A failure with `code`.
    pub fn new(code: Option<String>) -> Self {
        Self { code }
    }
}

impl fmt::Display for ProviderFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the provider reported an error")?;
        match &self.code {
            Some(code) => write!(f, " ({code})"),
            None => Ok(()),
        }
    }
}

/// The most a [`RetryAfter`] delay can be: one day. Larger values (and
/// absurd dates) saturate to it.
pub const RETRY_AFTER_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// A `Retry-After` header: a delay in seconds, or an HTTP date.
///
/// [`parse`](Self::parse) accepts the two forms of RFC 9110: a number of
/// seconds (`120`) and an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`).
/// Anything else is `None`; hostile values never panic, and delays past
/// [`RETRY_AFTER_MAX`] saturate to it.
///
/// ```
/// use agentstream::model::RetryAfter;
/// use core::time::Duration;
///
/// assert_eq!(RetryAfter::parse(" 2 "), Some(RetryAfter::Delay(Duration::from_secs(2))));
/// assert_eq!(RetryAfter::parse("99999999999999999999999"), Some(RetryAfter::Delay(agentstream::model::RETRY_AFTER_MAX)));
/// let date = RetryAfter::parse("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
/// assert_eq!(date, RetryAfter::At { unix_seconds: 1_445_412_480 });
/// // Ten seconds before that date, the delay is ten seconds.
/// assert_eq!(date.delay(1_445_412_470), Duration::from_secs(10));
/// assert_eq!(RetryAfter::parse("soon"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryAfter {
    /// Wait this long (at most [`RETRY_AFTER_MAX`]).
    Delay(Duration),
    /// Wait until this time, in seconds since the Unix epoch.
    At {
        /// Seconds since 1970-01-01 00:00:00 UTC.
        unix_seconds: u64,
    },
}

impl RetryAfter {
    /// Parses a header value; `None` when it is neither form.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        if value.bytes().all(|b| b.is_ascii_digit()) {
            // Digits only: saturate instead of overflowing.
            let mut seconds: u64 = 0;
            for digit in value.bytes() {
                seconds = seconds
                    .saturating_mul(10)
                    .saturating_add(u64::from(digit - b'0'));
            }
            let max = RETRY_AFTER_MAX.as_secs();
            return Some(Self::Delay(Duration::from_secs(seconds.min(max))));
        }
        parse_http_date(value).map(|unix_seconds| Self::At { unix_seconds })
    }

    /// How long to wait, at `now_unix_seconds`: the delay itself, or the
    /// time left until the date (zero once it passed), at most
    /// [`RETRY_AFTER_MAX`].
    pub fn delay(self, now_unix_seconds: u64) -> Duration {
        match self {
            Self::Delay(delay) => delay.min(RETRY_AFTER_MAX),
            Self::At { unix_seconds } => {
                Duration::from_secs(unix_seconds.saturating_sub(now_unix_seconds))
                    .min(RETRY_AFTER_MAX)
            }
        }
    }
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into Unix
/// seconds.
fn parse_http_date(value: &str) -> Option<u64> {
    let mut parts = value.split_ascii_whitespace();
    let weekday = parts.next()?;
    if !weekday.ends_with(',') || weekday.len() != 4 {
        return None;
    }
    let day: u64 = number(parts.next()?, 2)?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: u64 = number(parts.next()?, 4)?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = number(clock.next()?, 2)?;
    let minute: u64 = number(clock.next()?, 2)?;
    let second: u64 = number(clock.next()?, 2)?;
    if clock.next().is_some() || parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if year < 1970 || !(1..=month_days).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Four-digit years from 1970: the day count is not negative.
    let days = crate::civil::days_from_civil(
        i64::try_from(year).ok()?,
        u32::try_from(month).ok()?,
        u32::try_from(day).ok()?,
    );
    Some(u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Exactly `width` ASCII digits.
fn number(text: &str, width: usize) -> Option<u64> {
    if text.len() != width || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn retry_after_forms() {
        assert_eq!(
            RetryAfter::parse("0"),
            Some(RetryAfter::Delay(Duration::ZERO))
        );
        assert_eq!(
            RetryAfter::parse("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(RetryAfter::At { unix_seconds: 0 })
        );
        assert_eq!(
            RetryAfter::parse("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(RetryAfter::At {
                unix_seconds: 951_825_600
            })
        );
        for hostile in [
            "",
            "-1",
            "1.5",
            "Wed, 21 Oct 2015 07:28:00 UTC",
            "Wed, 99 Oct 2015 07:28:00 GMT",
            "Wed, 21 Oct 15 07:28:00 GMT",
            "Wed, 21 Oct 2015 07:28 GMT",
            "Wed, 21 Oct 2015 07:28:00 GMT extra",
            "Wed, 21 Oct 1969 07:28:00 GMT",
            "Wed, 21 Oct 2015 24:00:00 GMT",
            "Sat, 29 Feb 2025 00:00:00 GMT",
            "Thu, 31 Apr 2025 00:00:00 GMT",
            "ä, 21 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(RetryAfter::parse(hostile), None, "{hostile:?}");
        }
        let far = RetryAfter::parse("Fri, 31 Dec 9999 23:59:59 GMT").unwrap();
        assert_eq!(far.delay(0), RETRY_AFTER_MAX);
        assert_eq!(far.delay(u64::MAX), Duration::ZERO);
    }

    #[test]
    fn display_and_source() {
        let timeout = ErrorCause::Timeout(TimeoutKind::Idle, Some(Duration::from_secs(30)));
        assert_eq!(timeout.to_string(), "idle timeout after 30s");
        assert!(!timeout.is_retryable());
        let connect = ErrorCause::Timeout(TimeoutKind::Connect, None);
        assert_eq!(connect.to_string(), "connect timeout");
        assert!(connect.is_retryable());
        assert_eq!(ErrorCause::Aborted.to_string(), "aborted");
        assert!(!ErrorCause::Http(HttpFailure::new(400)).is_retryable());
        assert!(ErrorCause::Http(HttpFailure::new(503)).is_retryable());
        #[derive(Debug)]
        struct Leaf;
        impl fmt::Display for Leaf {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("leaf")
            }
        }
        impl Error for Leaf {}
        let transport = ErrorCause::Transport(Arc::new(Leaf));
        assert_eq!(transport.to_string(), "transport failed");
        assert_eq!(transport.source().unwrap().to_string(), "leaf");
        assert!(transport.source().unwrap().downcast_ref::<Leaf>().is_some());
        let provider = ErrorCause::Provider(ProviderFailure::new(Some("overloaded_error".into())));
        assert_eq!(
            provider.to_string(),
            "the provider reported an error (overloaded_error)"
        );
    }
}
