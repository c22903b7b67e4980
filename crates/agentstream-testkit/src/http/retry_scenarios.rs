//! The retry policy end to end: the core's
//! [`RetryModel`] around each adapter's HTTP model, against scripted
//! failures of the mock server, written once and run by every adapter.
//!
//! The checks count attempts (the requests the server recorded) and the
//! waits the model asked for; none measures time. The timer is the
//! adapter's runtime ([`Timer`]), wrapped so that each requested wait is
//! recorded and then shortened to a millisecond.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::message::{user, AssistantMessage, Context, StopReason};
use agentstream::model::{
    AbortController, ErrorCause, Model, ModelEvent, RetryModel, RetryPolicy, StreamOptions,
    ABORTED_MESSAGE,
};
use agentstream::rt::Timer;
use agentstream_wire::openai::OpenAiConfig;
use futures_util::StreamExt;
use serde_json::json;

use crate::http::fixtures::scripted;
use crate::http::scenarios::TEST_KEY;
use crate::http::{answer_payloads, sse_body, BodyEnd, MockServer, Reply};
use crate::http::{assert_stopped, refused_port};

fn context() -> Context {
    Context::from_messages([user("Say hello").into()])
}

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(server.base_url(), "test-model").with_api_key(TEST_KEY)
}

/// A small policy: 10 ms backoff ceilings doubling to 40 ms.
fn policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(3)
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(40))
}

/// The waits a model asked for.
type Waits = Arc<Mutex<Vec<Duration>>>;

/// A runtime's timer that records each requested wait, then sleeps at
/// most 1 ms of it, or, with `abort`, aborts the call and sleeps all of it.
struct Recording<T> {
    timer: T,
    waits: Waits,
    abort: Option<Arc<AbortController>>,
}

impl<T: Timer> Timer for Recording<T> {
    type Sleep = T::Sleep;

    fn sleep(&self, wait: Duration) -> T::Sleep {
        self.waits.lock().expect("log").push(wait);
        match &self.abort {
            Some(controller) => {
                controller.abort();
                self.timer.sleep(wait)
            }
            None => self.timer.sleep(wait.min(Duration::from_millis(1))),
        }
    }

    fn now_unix_ms(&self) -> u64 {
        self.timer.now_unix_ms()
    }
}

/// `timer`, recording each requested wait and sleeping at most 1 ms of it.
fn recording<T: Timer>(timer: T) -> (Waits, Recording<T>) {
    let waits = Waits::default();
    let recorded = Recording {
        timer,
        waits: Arc::clone(&waits),
        abort: None,
    };
    (waits, recorded)
}

fn ok_reply() -> Reply {
    Reply::sse(vec![sse_body(&answer_payloads(&[], &["at last"]))])
}

fn status(code: u16, retry_after: Option<&str>) -> Reply {
    let headers: Vec<(&str, &str)> = retry_after
        .map(|r| ("retry-after", r))
        .into_iter()
        .collect();
    Reply::json(code, &headers, &json!({"error": {"message": "try later"}}))
}

async fn call<M: Model>(model: &M) -> (Vec<ModelEvent>, AssistantMessage, Option<ErrorCause>) {
    let mut stream = model.stream(&context(), StreamOptions::default());
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let findings = agentstream::model::validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}");
    let message = stream.result().await;
    (events, message, stream.error_cause())
}

/// 503, 503, then 200: the call succeeds on its third attempt, the
/// consumer sees only that attempt's events, the three requests are the
/// same, and each backoff is within its jittered ceiling.
pub async fn retries_server_errors_then_succeeds<M, T>(make: impl Fn(OpenAiConfig) -> M, timer: T)
where
    M: Model + Send + Sync + 'static,
    T: Timer + Clone + Send + Sync,
    T::Sleep: Send,
{
    let server = scripted(vec![status(503, None), status(503, None), ok_reply()]);
    let (waits, recorded) = recording(timer);
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let (events, message, cause) = call(&model).await;
    assert_stopped(&message);
    assert_eq!(message.text(), "at last");
    assert!(cause.is_none());
    assert_eq!(
        events.iter().filter(|e| e.type_name() == "start").count(),
        1
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.body == requests[0].body));
    let waits = waits.lock().expect("waits").clone();
    assert_eq!(waits.len(), 2);
    assert!(waits[0] <= Duration::from_millis(10), "{waits:?}");
    assert!(waits[1] <= Duration::from_millis(20), "{waits:?}");
}

/// 429 with `Retry-After: 1`: exactly one second is waited, then the retry
/// succeeds. With a cap below what the server asks, the call is not
/// retried and reports the 429 with its cause.
pub async fn honours_retry_after_up_to_its_cap<M, T>(make: impl Fn(OpenAiConfig) -> M, timer: T)
where
    M: Model + Send + Sync + 'static,
    T: Timer + Clone + Send + Sync,
    T::Sleep: Send,
{
    let server = scripted(vec![status(429, Some("1")), ok_reply()]);
    let (waits, recorded) = recording(timer.clone());
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let (_, message, _) = call(&model).await;
    assert_eq!(message.text(), "at last");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(*waits.lock().expect("waits"), [Duration::from_secs(1)]);

    let server = scripted(vec![status(429, Some("120")), ok_reply()]);
    let (waits, recorded) = recording(timer);
    let capped = policy().with_max_retry_after(Duration::from_secs(30));
    let model = RetryModel::new(make(config(&server)), capped, recorded);
    let (_, message, cause) = call(&model).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(cause.and_then(|c| c.status()), Some(429));
    assert_eq!(server.requests().len(), 1);
    assert!(waits.lock().expect("waits").is_empty());
}

/// Never retried: a 400, a failure after the first event (a disconnect
/// mid-stream), and a 503 once the retries are used up (four attempts
/// with three retries, the last error and its cause reported).
pub async fn what_is_not_retried<M, T>(make: impl Fn(OpenAiConfig) -> M, timer: T)
where
    M: Model + Send + Sync + 'static,
    T: Timer + Clone + Send + Sync,
    T::Sleep: Send,
{
    let server = scripted(vec![status(400, None), ok_reply()]);
    let (waits, recorded) = recording(timer.clone());
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let (_, message, cause) = call(&model).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(cause.and_then(|c| c.status()), Some(400));
    assert_eq!(server.requests().len(), 1);
    assert!(waits.lock().expect("waits").is_empty());

    let partial = sse_body(&answer_payloads(&[], &["half", " more"])[..2]);
    let server = scripted(vec![
        Reply::sse(vec![partial]).with_end(BodyEnd::Disconnect),
        ok_reply(),
    ]);
    let (waits, recorded) = recording(timer.clone());
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let (events, message, cause) = call(&model).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "half");
    assert_eq!(events[0].type_name(), "start");
    assert!(matches!(cause, Some(ErrorCause::Transport(_))), "{cause:?}");
    assert_eq!(server.requests().len(), 1);
    assert!(waits.lock().expect("waits").is_empty());

    let server = scripted(vec![status(503, None)]);
    let (waits, recorded) = recording(timer);
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let (events, message, cause) = call(&model).await;
    assert_eq!(events.len(), 1);
    assert!(message
        .error_message
        .unwrap_or_default()
        .starts_with("HTTP 503"));
    assert_eq!(cause.and_then(|c| c.status()), Some(503));
    assert_eq!(server.requests().len(), 4);
    assert_eq!(waits.lock().expect("waits").len(), 3);
}

/// The caller aborts while the model waits to retry: the call ends at once
/// in `error(aborted)` with [`ErrorCause::Aborted`], after one attempt. An
/// already aborted signal makes no retry either.
pub async fn abort_during_the_wait<M, T>(make: impl Fn(OpenAiConfig) -> M, timer: T)
where
    M: Model + Send + Sync + 'static,
    T: Timer + Clone + Send + Sync,
    T::Sleep: Send,
{
    let server = scripted(vec![status(503, Some("5")), ok_reply()]);
    let controller = Arc::new(AbortController::new());
    let aborter = Arc::clone(&controller);
    let waits = Waits::default();
    // A wait that aborts the call, then would last the 5 s asked for.
    let recorded = Recording {
        timer,
        waits: Arc::clone(&waits),
        abort: Some(aborter),
    };
    let model = RetryModel::new(make(config(&server)), policy(), recorded);
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = model.stream(&context(), options);
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert_eq!(events.len(), 1);
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert!(matches!(stream.error_cause(), Some(ErrorCause::Aborted)));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(*waits.lock().expect("waits"), [Duration::from_secs(5)]);

    // Already aborted: the inner model aborts before sending anything.
    let (_, message, cause) = {
        let mut stream = model.stream(
            &context(),
            StreamOptions::default().with_signal(controller.signal()),
        );
        let events: Vec<ModelEvent> = stream.by_ref().collect().await;
        let message = stream.result().await;
        (events, message, stream.error_cause())
    };
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert!(matches!(cause, Some(ErrorCause::Aborted)));
    assert_eq!(server.requests().len(), 1);
}

/// A refused connection is retried (a transport failure); the jitter is
/// the same for the same seed and call, and stays within each ceiling.
pub async fn transport_failures_and_seeded_jitter<M, T>(make: impl Fn(OpenAiConfig) -> M, timer: T)
where
    M: Model + Send + Sync + 'static,
    T: Timer + Clone + Send + Sync,
    T::Sleep: Send,
{
    let port = refused_port();
    let refused = || OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "test-model");
    let mut runs = Vec::new();
    for seed in [1, 1, 2] {
        let (waits, recorded) = recording(timer.clone());
        let model = RetryModel::new(make(refused()), policy().with_seed(seed), recorded);
        let (_, message, cause) = call(&model).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert!(matches!(cause, Some(ErrorCause::Transport(_))), "{cause:?}");
        let waits = waits.lock().expect("waits").clone();
        assert_eq!(waits.len(), 3, "three retries");
        for (retry, wait) in waits.iter().enumerate() {
            let ceiling = policy().backoff_ceiling(u32::try_from(retry).unwrap_or(u32::MAX));
            assert!(*wait <= ceiling, "{wait:?} > {ceiling:?}");
        }
        runs.push(waits);
    }
    assert_eq!(runs[0], runs[1], "the same seed gives the same waits");
    assert_ne!(runs[0], runs[2], "another seed gives other waits");
}

/// The adapter's own `with_retry` (its timer and clock): 503 then 200
/// succeeds on the second attempt.
pub async fn adapter_with_retry<R: Model>(make: impl Fn(OpenAiConfig, RetryPolicy) -> R) {
    let server = scripted(vec![status(503, None), ok_reply()]);
    let fast = RetryPolicy::default().with_initial_backoff(Duration::from_millis(1));
    let model = make(config(&server), fast);
    let (_, message, cause) = call(&model).await;
    assert_eq!(message.text(), "at last", "{:?}", message.error_message);
    assert!(cause.is_none());
    assert_eq!(server.requests().len(), 2);
}
