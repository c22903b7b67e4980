//! [`AutoRetry`]: the [`Agent`](super::Agent)'s retry after a turn that
//! ended in a transient error, as Pi's coding agent (`AgentSession`) does
//! it, and [`is_retryable_error`], its test of the error text.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::time::Duration;

use crate::message::{AssistantMessage, StopReason};
use crate::rt::Timer;
use crate::session::is_overflow_error;

type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Pi's default most retries (`retry.maxRetries`).
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Pi's default first delay in milliseconds (`retry.baseDelayMs`).
pub const DEFAULT_BASE_DELAY_MS: u64 = 2000;

/// The retry policy of an [`Agent`](super::Agent) (Pi's `retry` settings).
///
/// When a run ends with an assistant message whose error text
/// [`is_retryable_error`] (an overload, a rate limit, a 5xx, a network
/// error; never a context overflow), the agent emits
/// [`AutoRetryStart`](super::AgentEvent::AutoRetryStart), removes the
/// error message from its transcript, waits `base_delay_ms · 2^(n-1)` on
/// the timer for attempt `n` and continues. The first assistant message
/// without error after that emits
/// [`AutoRetryEnd`](super::AgentEvent::AutoRetryEnd) with `success`; after
/// `max_retries` failed attempts, or an [`abort`](super::Agent::abort)
/// during the wait, it emits one without and the run's outcome is the
/// failure.
///
/// ```
/// use agentstream::agent::AutoRetry;
///
/// // A sleep that ends at once; a host passes its runtime's timer.
/// let policy = AutoRetry::from_fn(|_delay| async {});
/// assert!(policy.enabled);
/// assert_eq!((policy.max_retries, policy.base_delay_ms), (3, 2000));
/// assert_eq!(policy.delay_ms(3), 8000);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct AutoRetry {
    /// Whether failed turns are retried at all (Pi's default: `true`).
    pub enabled: bool,
    /// The most retries in a row (Pi's default: 3).
    pub max_retries: u32,
    /// The first delay in milliseconds, doubled at each attempt (Pi's
    /// default: 2000).
    pub base_delay_ms: u64,
    sleep: Arc<dyn Fn(Duration) -> Sleep + Send + Sync>,
}

impl AutoRetry {
    /// Pi's defaults, waiting on `timer`.
    pub fn new<T>(timer: T) -> Self
    where
        T: Timer + Send + Sync,
        T::Sleep: Send,
    {
        Self::from_fn(move |delay| timer.sleep(delay))
    }

    /// Pi's defaults, each wait being the future `sleep` returns for the
    /// delay.
    pub fn from_fn<F>(sleep: impl Fn(Duration) -> F + Send + Sync + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        Self {
            enabled: true,
            max_retries: DEFAULT_MAX_RETRIES,
            base_delay_ms: DEFAULT_BASE_DELAY_MS,
            sleep: Arc::new(move |delay| Box::pin(sleep(delay)) as Sleep),
        }
    }

    /// The same policy with this many retries at most.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The same policy with this first delay.
    pub fn with_base_delay_ms(mut self, base_delay_ms: u64) -> Self {
        self.base_delay_ms = base_delay_ms;
        self
    }

    /// The same policy, on or off.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// The delay before attempt `attempt` (from 1): `base_delay_ms ·
    /// 2^(attempt-1)`, saturating.
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        let factor = 1u64
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u64::MAX);
        self.base_delay_ms.saturating_mul(factor)
    }

    /// Starts the wait before attempt `attempt`.
    pub(super) fn sleep(&self, attempt: u32) -> Sleep {
        (self.sleep)(Duration::from_millis(self.delay_ms(attempt)))
    }
}

impl fmt::Debug for AutoRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoRetry")
            .field("enabled", &self.enabled)
            .field("max_retries", &self.max_retries)
            .field("base_delay_ms", &self.base_delay_ms)
            .finish_non_exhaustive()
    }
}

/// Pi's transient-error patterns, each matched case-insensitively: `~` is
/// its `.?` (any one character but a line terminator, or none), `|`
/// separates alternatives spelled out here where Pi writes `d?`.
const PATTERNS: &[&str] = &[
    "overloaded",
    "provider~returned~error",
    "rate~limit",
    "too many requests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "service~unavailable",
    "server~error",
    "internal~error",
    "network~error",
    "connection~error",
    "connection~refused",
    "connection~lost",
    "websocket~closed",
    "websocket~error",
    "other side closed",
    "fetch failed",
    "upstream~connect",
    "reset before headers",
    "socket hang up",
    "ended without",
    "http2 request did not get a response",
    "timed out",
    "time out",
    "timeout",
    "terminated",
    "retry delay",
];

/// Whether `message` ended in a transient error that Pi's coding agent
/// retries (its `_isRetryableError`): stop reason `error`, a non-empty
/// error text matching one of its patterns (overloaded, rate limit, 429,
/// 5xx, service unavailable, network and connection errors, fetch
/// failed, timeouts, …), and not a context overflow (compaction's case).
///
/// ```
/// use agentstream::agent::is_retryable_error;
/// use agentstream::message::{assistant, StopReason};
///
/// let mut m = assistant([], StopReason::Error);
/// m.error_message = Some("529 Overloaded".into());
/// assert!(is_retryable_error(&m));
/// m.error_message = Some("prompt is too long: 213462 tokens > 200000 maximum".into());
/// assert!(!is_retryable_error(&m), "an overflow is compacted, not retried");
/// ```
pub fn is_retryable_error(message: &AssistantMessage) -> bool {
    if message.stop_reason != StopReason::Error {
        return false;
    }
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else {
        return false;
    };
    // With stop reason `error`, `isContextOverflow` is the text test alone.
    if is_overflow_error(text) {
        return false;
    }
    let chars: alloc::vec::Vec<char> = text.chars().collect();
    PATTERNS.iter().any(|pattern| {
        let pattern: alloc::vec::Vec<char> = pattern.chars().collect();
        (0..=chars.len()).any(|start| matches_at(&chars, start, &pattern))
    })
}

/// Whether `pattern` matches `text` from `at`, ASCII case-insensitively.
fn matches_at(text: &[char], at: usize, pattern: &[char]) -> bool {
    let Some((&first, rest)) = pattern.split_first() else {
        return true;
    };
    if first == '~' {
        // JavaScript's `.` (no `s`, no `u` flag): one UTF-16 unit that is
        // not a line terminator, so never a character outside the BMP.
        let one = text.get(at).is_some_and(|&c| {
            (c as u32) <= 0xFFFF && !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
        });
        return (one && matches_at(text, at + 1, rest)) || matches_at(text, at, rest);
    }
    // Without the `u` flag, `/i` folds no non-ASCII character to ASCII,
    // and the patterns are ASCII.
    text.get(at)
        .is_some_and(|c| c.eq_ignore_ascii_case(&first) && matches_at(text, at + 1, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::assistant;

    fn error(text: &str) -> AssistantMessage {
        let mut m = assistant([], StopReason::Error);
        m.error_message = Some(text.into());
        m
    }

    #[test]
    fn patterns_as_pi_matches_them() {
        for text in [
            "Overloaded",
            "Provider returned error",
            "provider_returned-error",
            "RATE LIMIT exceeded",
            "ratelimit",
            "HTTP 503",
            "Request timed out",
            "request time out",
            "socket hang up",
            "WebSocket closed",
            "upstream connect error",
            "stream ended without a message",
        ] {
            assert!(is_retryable_error(&error(text)), "{text}");
        }
        for text in [
            "",
            "Invalid API key",
            "rate\nlimit",
            "rate\u{1F600}limit",
            "rate--limit",
            "tim out",
        ] {
            assert!(!is_retryable_error(&error(text)), "{text:?}");
        }
        let mut ok = error("503");
        ok.stop_reason = StopReason::Stop;
        assert!(!is_retryable_error(&ok), "only an error stop is retried");
        let mut none = error("x");
        none.error_message = None;
        assert!(!is_retryable_error(&none));
    }

    #[test]
    fn delays_double_and_saturate() {
        let policy = AutoRetry::from_fn(|_| async {});
        assert_eq!([1, 2, 3].map(|n| policy.delay_ms(n)), [2000, 4000, 8000]);
        assert_eq!(policy.delay_ms(200), u64::MAX);
    }
}
