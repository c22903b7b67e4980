//! [`RetryModel`]: retries a call that failed before producing anything,
//! following a [`RetryPolicy`].

use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use futures_util::future::{self, Either};
use futures_util::StreamExt;

use super::abort::{AbortSignal, ABORTED_MESSAGE};
use super::cause::{ErrorCause, RetryAfter};
use super::event::{ErrorReason, ModelEvent};
use super::stream::ModelStream;
use super::{Model, StreamOptions};
use crate::message::{Context, StopReason};
use crate::rt::Timer;

/// When and how long [`RetryModel`] waits before trying a call again.
///
/// A call is retried only when its stream's *first* event is its terminal
/// `error` (nothing was yielded to the consumer yet) and the error's
/// [`ErrorCause`] [is retryable](ErrorCause::is_retryable): HTTP 429 and
/// 5xx, transport failures, connect timeouts. Never after an abort, on
/// another 4xx, or once any event went out.
///
/// The wait before retry `n` (0-based):
/// - with a `Retry-After` from the server: exactly that, when it is at
///   most [`max_retry_after`](Self::max_retry_after); a longer one is not
///   retried at all (the error is reported at once, since waiting less
///   than the server asked would likely fail again);
/// - otherwise exponential backoff with full jitter: a uniformly random
///   duration between zero and `min(max_backoff, initial_backoff × 2ⁿ)`,
///   drawn from a small PRNG seeded with [`seed`](Self::seed) when it is
///   set (a reproducible run, for tests), else with the
///   [`RetryModel`]'s entropy (the adapters' `with_retry` draws it from the
///   OS, so processes do not back off in lockstep).
///
/// The defaults ([`RetryPolicy::DEFAULT`]): 2 retries (3 attempts),
/// backoff from 500 ms up to 8 s, `Retry-After` honoured up to 60 s, no
/// fixed seed.
///
/// ```
/// use agentstream::model::RetryPolicy;
/// use core::time::Duration;
///
/// let policy = RetryPolicy::default().with_max_retries(4).with_initial_backoff(Duration::from_millis(100));
/// assert_eq!(policy.max_retries, 4);
/// assert_eq!(policy.max_backoff, Duration::from_secs(8));
/// // The ceiling of each retry's jittered backoff.
/// assert_eq!(policy.backoff_ceiling(0), Duration::from_millis(100));
/// assert_eq!(policy.backoff_ceiling(3), Duration::from_millis(800));
/// assert_eq!(policy.backoff_ceiling(60), Duration::from_secs(8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// How many times a call is tried again after its first attempt.
    /// Default 2.
    pub max_retries: u32,
    /// The backoff ceiling of the first retry. Default 500 ms.
    pub initial_backoff: Duration,
    /// The largest backoff ceiling. Default 8 s.
    pub max_backoff: Duration,
    /// The longest `Retry-After` waited for. Default 60 s.
    pub max_retry_after: Duration,
    /// A fixed seed of the jitter, for reproducible runs. Default `None`:
    /// the [`RetryModel`]'s entropy ([`DEFAULT_SEED`] unless set with
    /// [`RetryModel::with_entropy`]).
    pub seed: Option<u64>,
}

impl RetryPolicy {
    /// The defaults, as a constant.
    pub const DEFAULT: RetryPolicy = RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(8),
        max_retry_after: Duration::from_secs(60),
        seed: None,
    };

    /// Sets [`max_retries`](Self::max_retries).
    #[must_use]
    pub const fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets [`initial_backoff`](Self::initial_backoff).
    #[must_use]
    pub const fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// Sets [`max_backoff`](Self::max_backoff).
    #[must_use]
    pub const fn with_max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// Sets [`max_retry_after`](Self::max_retry_after).
    #[must_use]
    pub const fn with_max_retry_after(mut self, cap: Duration) -> Self {
        self.max_retry_after = cap;
        self
    }

    /// Fixes the jitter's [`seed`](Self::seed).
    #[must_use]
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The most retry `retry` (0-based) waits without a `Retry-After`:
    /// `min(max_backoff, initial_backoff × 2^retry)`, saturating.
    pub fn backoff_ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.initial_backoff
            .checked_mul(factor)
            .unwrap_or(Duration::MAX)
            .min(self.max_backoff)
    }

    /// The wait before retry `retry` after `cause`, or `None` when the call
    /// must not be retried (the cause is not retryable, the retries are
    /// used up, or the server asked for longer than
    /// [`max_retry_after`](Self::max_retry_after)). `now_unix_seconds`
    /// resolves an HTTP-date `Retry-After`; without a clock such a date is
    /// ignored and the backoff applies.
    pub fn delay(
        &self,
        retry: u32,
        cause: &ErrorCause,
        now_unix_seconds: Option<u64>,
        jitter: &mut Jitter,
    ) -> Option<Duration> {
        if retry >= self.max_retries || !cause.is_retryable() {
            return None;
        }
        let asked = match cause.retry_after() {
            Some(RetryAfter::Delay(delay)) => Some(delay),
            Some(at @ RetryAfter::At { .. }) => now_unix_seconds.map(|now| at.delay(now)),
            None => None,
        };
        match asked {
            Some(delay) if delay > self.max_retry_after => None,
            Some(delay) => Some(delay),
            None => Some(jitter.below(self.backoff_ceiling(retry))),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The jitter's seed of a [`RetryModel`] given no entropy and a policy
/// with no fixed seed (a host without a clock or an OS).
pub const DEFAULT_SEED: u64 = 0x5EED;

/// The system clock in milliseconds since the Unix epoch (0 for a clock
/// set before it): the clock of the std hosts' [`Timer`]s.
#[cfg(feature = "std")]
pub fn system_unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// 64 bits from the OS's randomness (through the keys of
/// `std::hash::RandomState`), for [`RetryModel::with_entropy`] (as
/// [`rt::with_retry`](crate::rt::with_retry) does).
#[cfg(feature = "std")]
pub fn os_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::hash::RandomState::new().build_hasher().finish()
}

/// The jitter source of a [`RetryPolicy`]: SplitMix64, a small
/// deterministic PRNG (not for cryptography).
///
/// ```
/// use agentstream::model::Jitter;
/// use core::time::Duration;
///
/// let mut a = Jitter::new(7);
/// let mut b = Jitter::new(7);
/// let ceiling = Duration::from_millis(500);
/// let draw = a.below(ceiling);
/// assert_eq!(draw, b.below(ceiling));
/// assert!(draw <= ceiling);
/// ```
#[derive(Debug, Clone)]
pub struct Jitter {
    state: u64,
}

impl Jitter {
    /// A source seeded with `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A duration drawn uniformly from `0..=ceiling`, in nanoseconds.
    pub fn below(&mut self, ceiling: Duration) -> Duration {
        let max = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        let nanos = match max.checked_add(1) {
            Some(span) => self.next_u64() % span,
            None => self.next_u64(),
        };
        Duration::from_nanos(nanos)
    }
}

/// A [`Model`] that tries a call on `model` again when it fails before
/// producing anything, as its [`RetryPolicy`] says, waiting on a runtime's
/// [`Timer`] (the host crates' `with_retry` pass theirs) and resolving an
/// HTTP-date `Retry-After` with the timer's clock (a timer whose clock
/// reads 0 has none: such a date is then ignored and the backoff applies).
///
/// Retries are invisible to the consumer: it sees the events of the one
/// attempt that produced something, or the last attempt's `error`, with
/// that attempt's [`error_cause`](ModelStream::error_cause). The caller's
/// signal aborting during a wait ends the call at once with
/// `error(aborted)` and [`ErrorCause::Aborted`]. Each call clones the
/// context (the retries need it after `stream` returns).
///
/// See the [`rt`](crate::rt) module for a retry driven by a manual timer.
///
/// ```
/// use core::future::{ready, Ready};
/// use std::time::Duration;
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{ErrorReason, Model, RetryModel, RetryPolicy, ScriptedModel, ScriptedTurn, StreamOptions};
/// use agentstream::rt::Timer;
///
/// /// Sleeps end at once; no wall clock.
/// struct Instant;
/// impl Timer for Instant {
///     type Sleep = Ready<()>;
///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
///     fn now_unix_ms(&self) -> u64 { 0 }
/// }
///
/// // A scripted failure has no retryable cause: it is reported as is.
/// let inner = ScriptedModel::new([ScriptedTurn::failure(ErrorReason::Error, "boom")]);
/// let model = RetryModel::new(inner, RetryPolicy::default(), Instant);
/// let context = Context::from_messages([user("hi").into()]);
/// let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
/// assert_eq!(message.error_message.as_deref(), Some("boom"));
/// ```
pub struct RetryModel<M, T> {
    model: Arc<M>,
    policy: RetryPolicy,
    timer: Arc<T>,
    /// The jitter's seed when the policy fixes none.
    entropy: u64,
    /// Calls started, to give each its own jitter sequence.
    calls: AtomicUsize,
}

impl<M, T> RetryModel<M, T> {
    /// Wraps `model`; waits on `timer`.
    pub fn new(model: M, policy: RetryPolicy, timer: T) -> Self {
        Self {
            model: Arc::new(model),
            policy,
            timer: Arc::new(timer),
            entropy: DEFAULT_SEED,
            calls: AtomicUsize::new(0),
        }
    }

    /// Seeds the jitter with `entropy` unless the policy fixes a
    /// [`seed`](RetryPolicy::seed): the adapters pass a value from the OS
    /// (see [`os_entropy`]), so processes that fail together do not retry
    /// in lockstep. Default: [`DEFAULT_SEED`].
    #[must_use]
    pub fn with_entropy(mut self, entropy: u64) -> Self {
        self.entropy = entropy;
        self
    }

    /// The jitter of call number `call`: the policy's fixed seed, else the
    /// entropy, mixed with the call number.
    fn jitter_for(&self, call: usize) -> Jitter {
        let seed = self.policy.seed.unwrap_or(self.entropy);
        Jitter::new(seed ^ (call as u64).wrapping_mul(0xA076_1D64_78BD_642F))
    }

    /// The policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.model
    }
}

impl<M, T> fmt::Debug for RetryModel<M, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryModel")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<M, T> Model for RetryModel<M, T>
where
    M: Model + Send + Sync + 'static,
    T: Timer + Send + Sync,
    T::Sleep: Send,
{
    /// The wrapped model's clock, or else the retry timer's.
    fn clock(&self) -> Option<crate::rt::Clock> {
        self.model.clock().or_else(|| {
            let timer = Arc::clone(&self.timer);
            Some(crate::rt::Clock::from_fn(move || timer.now_unix_ms()))
        })
    }

    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        let model = Arc::clone(&self.model);
        let policy = self.policy;
        let timer = Arc::clone(&self.timer);
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut jitter = self.jitter_for(call);
        let context = context.clone();
        ModelStream::driven(move |mut producer| async move {
            let signal = options.signal.clone();
            let mut retry = 0;
            loop {
                let mut stream = model.stream(&context, options.clone());
                let Some(first) = stream.next().await else {
                    return;
                };
                let wait = match first.error_cause() {
                    Some(cause) => {
                        // A clock reading 0 is no clock.
                        let now_ms = timer.now_unix_ms();
                        let now = (now_ms != 0).then_some(now_ms / 1000);
                        policy.delay(retry, cause, now, &mut jitter)
                    }
                    _ => None,
                };
                let Some(wait) = wait else {
                    forward(&mut producer, first, stream).await;
                    return;
                };
                drop(stream);
                if !wait_or_abort(timer.sleep(wait), signal.as_ref()).await {
                    let mut message = match first {
                        ModelEvent::Error { error, .. } => Arc::unwrap_or_clone(error),
                        _ => return,
                    };
                    message.content.clear();
                    message.stop_reason = StopReason::Aborted;
                    message.error_message = Some(ABORTED_MESSAGE.into());
                    let event = ModelEvent::error(ErrorReason::Aborted, message);
                    let cause = signal
                        .as_ref()
                        .map_or(ErrorCause::Aborted, AbortSignal::cause);
                    let _ = producer.push_error(event, cause);
                    return;
                }
                retry += 1;
            }
        })
    }
}

/// Forwards `first` and the rest of `stream` (a terminal `error` with the
/// cause it carries).
async fn forward(producer: &mut super::ModelProducer, first: ModelEvent, mut stream: ModelStream) {
    let mut event = first;
    loop {
        let terminal = event.is_terminal();
        if producer.push(event).is_err() || terminal {
            return;
        }
        match stream.next().await {
            Some(next) => event = next,
            None => return,
        }
    }
}

/// Waits for `sleep`; `false` when `signal` aborts first.
async fn wait_or_abort(sleep: impl Future<Output = ()>, signal: Option<&AbortSignal>) -> bool {
    let Some(signal) = signal else {
        sleep.await;
        return true;
    };
    if signal.is_aborted() {
        return false;
    }
    match future::select(pin!(signal.aborted()), pin!(sleep)).await {
        Either::Left(_) => false,
        Either::Right(_) => !signal.is_aborted(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cause::{HttpFailure, TimeoutKind};

    fn http(status: u16, retry_after: Option<RetryAfter>) -> ErrorCause {
        ErrorCause::Http(HttpFailure::new(status).with_retry_after(retry_after))
    }

    #[test]
    fn the_entropy_seeds_the_jitter_unless_the_policy_fixes_a_seed() {
        let ceiling = Duration::from_secs(3600);
        let draw = |model: RetryModel<(), ()>| model.jitter_for(0).below(ceiling);
        let free = RetryPolicy::DEFAULT;
        let a = draw(RetryModel::new((), free, ()).with_entropy(1));
        let b = draw(RetryModel::new((), free, ()).with_entropy(2));
        assert_ne!(a, b, "two processes with their own entropy back off apart");
        let fixed = free.with_seed(7);
        let c = draw(RetryModel::new((), fixed, ()).with_entropy(1));
        let d = draw(RetryModel::new((), fixed, ()).with_entropy(2));
        assert_eq!(c, d, "a fixed seed is reproducible whatever the entropy");
        let e = draw(RetryModel::new((), free, ()));
        let f = draw(RetryModel::new((), free.with_seed(DEFAULT_SEED), ()));
        assert_eq!(e, f, "without entropy the default seed applies");
    }

    #[test]
    fn delays_follow_the_policy() {
        let policy = RetryPolicy::DEFAULT;
        let mut jitter = Jitter::new(3);
        for retry in 0..2 {
            let wait = policy.delay(retry, &http(503, None), None, &mut jitter);
            assert!(wait.is_some_and(|w| w <= policy.backoff_ceiling(retry)));
        }
        assert_eq!(policy.delay(2, &http(503, None), None, &mut jitter), None);
        for cause in [
            http(400, None),
            http(404, None),
            ErrorCause::Aborted,
            ErrorCause::Protocol,
            ErrorCause::Timeout(TimeoutKind::Idle, None),
        ] {
            assert_eq!(
                policy.delay(0, &cause, None, &mut jitter),
                None,
                "{cause:?}"
            );
        }
        let seconds = |s| Some(RetryAfter::Delay(Duration::from_secs(s)));
        assert_eq!(
            policy.delay(0, &http(429, seconds(60)), None, &mut jitter),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            policy.delay(0, &http(429, seconds(61)), None, &mut jitter),
            None
        );
        let at = Some(RetryAfter::At {
            unix_seconds: 1_000,
        });
        assert_eq!(
            policy.delay(0, &http(503, at), Some(990), &mut jitter),
            Some(Duration::from_secs(10))
        );
        // A date in the past: retry at once.
        assert_eq!(
            policy.delay(0, &http(503, at), Some(5_000), &mut jitter),
            Some(Duration::ZERO)
        );
        // No clock: the backoff.
        let wait = policy.delay(0, &http(503, at), None, &mut jitter);
        assert!(wait.is_some_and(|w| w <= policy.initial_backoff));
    }

    #[test]
    fn hostile_settings_saturate() {
        let policy = RetryPolicy::DEFAULT
            .with_initial_backoff(Duration::MAX)
            .with_max_backoff(Duration::MAX);
        assert_eq!(policy.backoff_ceiling(u32::MAX), Duration::MAX);
        let mut jitter = Jitter::new(0);
        let _ = jitter.below(Duration::MAX);
        assert_eq!(jitter.below(Duration::ZERO), Duration::ZERO);
    }
}
