//! The [`Agent`]'s [`AutoRetry`] policy (#40 section 3), as Pi's coding
//! agent retries a turn that ended in a transient error: scenarios on a
//! scripted model and a manual clock whose sleeps end at once and record
//! their length (no wall clock).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::agent::{Agent, AgentEvent, AgentStop, AutoRetry, ToolSet};
use agentstream::message::{assistant, text, AssistantMessage, Message, StopReason};
use agentstream::model::ScriptedModel;
use agentstream::rt::Timer;
use futures_util::future::join;
use futures_util::StreamExt;
use serde_json::{json, Value};

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::recorded;

/// A manual clock: each sleep moves it on by its length at once.
#[derive(Clone, Default)]
struct ManualClock(Arc<Mutex<Vec<u64>>>);

impl Timer for ManualClock {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, duration: Duration) -> Self::Sleep {
        self.0.lock().unwrap().push(duration.as_millis() as u64);
        std::future::ready(())
    }

    fn now_unix_ms(&self) -> u64 {
        self.0.lock().unwrap().iter().sum()
    }
}

fn failed(error: &str) -> AssistantMessage {
    let mut message = assistant([], StopReason::Error);
    message.error_message = Some(error.into());
    message
}

fn done(answer: &str) -> AssistantMessage {
    assistant([text(answer)], StopReason::Stop)
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn roles(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(Message::role).collect()
}

#[test]
fn a_transient_error_is_retried_after_the_backoff_and_removed_from_the_transcript() {
    let clock = ManualClock::default();
    let model = ScriptedModel::new([
        failed("529 overloaded_error"),
        failed("Connection error."),
        done("at last"),
    ]);
    let agent = Agent::new(model, ToolSet::new()).with_auto_retry(AutoRetry::new(clock.clone()));
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("hi")).unwrap();

    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(outcome.turns, 3);
    assert_eq!(roles(&outcome.messages), ["user", "assistant"]);
    let state = agent.state();
    assert_eq!(roles(&state.messages), ["user", "assistant"]);
    assert!(matches!(&state.messages[1], Message::Assistant(m) if m.text() == "at last"));
    assert!(state.last_error.is_none(), "the retried run succeeded");
    assert_eq!(
        *clock.0.lock().unwrap(),
        [2000, 4000],
        "baseDelayMs · 2^(n-1)"
    );

    let events = events.lock().unwrap();
    let retry_events: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("auto_retry"))
        .collect();
    assert_eq!(
        retry_events,
        [
            &json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "529 overloaded_error"}),
            &json!({"type": "auto_retry_start", "attempt": 2, "maxAttempts": 3, "delayMs": 4000, "errorMessage": "Connection error."}),
            &json!({"type": "auto_retry_end", "success": true, "attempt": 2}),
        ]
    );
    // Each retry is a run of its own (Pi's `agent.continue()`), and the
    // success is reported right after the good message's `message_end`.
    let types = types(&events);
    assert_eq!(types.iter().filter(|t| **t == "agent_start").count(), 3);
    let end = types.iter().position(|t| *t == "auto_retry_end").unwrap();
    assert_eq!(types[end - 1], "message_end");
    assert_eq!(events[end - 1]["message"]["stopReason"], "stop");
    assert_eq!(types[end + 1], "turn_end");
}

#[test]
fn retries_run_out_after_max_retries_with_a_failed_end() {
    let clock = ManualClock::default();
    let model = ScriptedModel::new([
        failed("503 Service Unavailable"),
        failed("503 Service Unavailable"),
        failed("502 Bad Gateway"),
    ]);
    let policy = AutoRetry::new(clock.clone())
        .with_max_retries(2)
        .with_base_delay_ms(10);
    let agent = Agent::new(model, ToolSet::new()).with_auto_retry(policy);
    let events = recorded(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("hi")).unwrap();

    assert_eq!(outcome.stop, AgentStop::Error);
    assert_eq!(outcome.error_message(), Some("502 Bad Gateway"));
    assert_eq!(*clock.0.lock().unwrap(), [10, 20]);
    // The last failure stays: Pi removes an error only before retrying.
    let state = agent.state();
    assert_eq!(roles(&state.messages), ["user", "assistant"]);
    assert_eq!(state.last_error.unwrap().message, "502 Bad Gateway");
    let events = events.lock().unwrap();
    assert_eq!(
        events.last().unwrap(),
        &json!({"type": "auto_retry_end", "success": false, "attempt": 2, "finalError": "502 Bad Gateway"})
    );
}

#[test]
fn overflow_and_permanent_errors_are_not_retried_nor_is_anything_without_the_policy() {
    for (error, policy) in [
        ("prompt is too long: 213462 tokens > 200000 maximum", true),
        ("401 Invalid API key", true),
        ("503 Service Unavailable", false),
    ] {
        let clock = ManualClock::default();
        let model = ScriptedModel::new([failed(error), done("unused")]);
        let mut agent = Agent::new(model, ToolSet::new());
        if policy {
            agent = agent.with_auto_retry(AutoRetry::new(clock.clone()));
        }
        let events = recorded(&agent);
        let outcome = futures_executor::block_on(agent.prompt_text("hi")).unwrap();
        assert_eq!(outcome.stop, AgentStop::Error, "{error}");
        assert!(clock.0.lock().unwrap().is_empty(), "{error}");
        assert!(
            !types(&events.lock().unwrap())
                .iter()
                .any(|t| t.starts_with("auto_retry")),
            "{error}"
        );
    }
    // A disabled policy is no policy.
    let model = ScriptedModel::new([failed("overloaded"), done("unused")]);
    let clock = ManualClock::default();
    let agent = Agent::new(model, ToolSet::new())
        .with_auto_retry(AutoRetry::new(clock.clone()).with_enabled(false));
    let outcome = futures_executor::block_on(agent.prompt_text("hi")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Error);
    assert!(clock.0.lock().unwrap().is_empty());
}

#[test]
fn an_abort_during_the_wait_cancels_the_retry() {
    let model = ScriptedModel::new([failed("rate limit exceeded"), done("unused")]);
    // A wait that never ends by itself.
    let policy = AutoRetry::from_fn(|_| std::future::pending::<()>());
    let agent = Agent::new(model, ToolSet::new()).with_auto_retry(policy);
    let mut events = agent.subscribe();
    let (outcome, ()) = futures_executor::block_on(join(agent.prompt_text("hi"), async {
        while let Some(Ok(event)) = events.next().await {
            if event.type_name() == "auto_retry_start" {
                agent.abort();
            }
            if let AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } = &*event
            {
                assert!(!success);
                assert_eq!(*attempt, 1);
                assert_eq!(final_error.as_deref(), Some("Retry cancelled"));
                return;
            }
        }
        panic!("no auto_retry_end");
    }));
    let outcome = outcome.unwrap();
    assert_eq!(outcome.stop, AgentStop::Error);
    assert!(!agent.is_running());
    // The error message was removed before the wait, as in Pi.
    assert_eq!(roles(&agent.state().messages), ["user"]);
}
