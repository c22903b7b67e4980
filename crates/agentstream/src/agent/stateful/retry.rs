//! The [`Agent`]'s [`AutoRetry`] policy at work: after a run that ended in
//! a transient error, remove the error message, wait, continue.

use alloc::sync::Arc;
use core::future::Future;
use core::task::Poll;

use super::{drain, Agent, AutoRetry};
use crate::agent::auto_retry::is_retryable_error;
use crate::agent::events::AgentEvent;
use crate::agent::options::{AgentOptions, AgentOutcome};
use crate::agent::run::run_agent;
use crate::agent::toolset::ToolSet;
use crate::message::Message;
use crate::model::{AbortController, Model};

/// What Pi's `auto_retry_end` reports after an abort during the wait.
const RETRY_CANCELLED: &str = "Retry cancelled";

/// What a run's retries and continuations run again with: the model,
/// tools and options the run started with, and its abort controller.
pub(super) struct Rerun<'a, M> {
    pub(super) model: &'a Arc<M>,
    pub(super) tools: &'a Arc<ToolSet<'static>>,
    pub(super) options: &'a AgentOptions,
    pub(super) controller: &'a Arc<AbortController>,
}

impl<M: Model> Agent<M> {
    /// Sets the retry policy after failed turns (from the next run on);
    /// `None` (the default) retries nothing.
    pub fn set_auto_retry(&self, policy: Option<AutoRetry>) {
        self.replace_in(|inner| &mut inner.auto_retry, policy);
    }

    /// The same agent with this retry policy.
    pub fn with_auto_retry(self, policy: AutoRetry) -> Self {
        self.set_auto_retry(Some(policy));
        self
    }

    /// Retries `outcome` while its last assistant message is a transient
    /// error and the policy allows, returning the outcome of the whole
    /// (the messages every attempt added, less the removed error
    /// messages; the turns of all; the last attempt's stop).
    pub(super) async fn retry_failed(
        &self,
        mut outcome: AgentOutcome,
        run: &Rerun<'_, M>,
    ) -> AgentOutcome {
        loop {
            let Some(policy) = self.inner.with(|inner| inner.auto_retry.clone()) else {
                return outcome;
            };
            let Some(error) = last_assistant_error(&outcome.messages) else {
                return outcome;
            };
            if !policy.enabled {
                return outcome;
            }
            let attempt = self.inner.with(|inner| {
                inner.retry_attempt += 1;
                inner.retry_attempt
            });
            if attempt > policy.max_retries {
                self.inner.with(|inner| inner.retry_attempt = 0);
                self.hub.publish(AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt: attempt - 1,
                    final_error: Some(error),
                });
                return outcome;
            }
            self.hub.publish(AgentEvent::AutoRetryStart {
                attempt,
                max_attempts: policy.max_retries,
                delay_ms: policy.delay_ms(attempt),
                error_message: error,
            });
            // The error message leaves the transcript (a session keeps it).
            self.drop_failed_message(Some(&mut outcome));
            if !wait_unless_aborted(policy.sleep(attempt), run.controller).await {
                self.inner.with(|inner| inner.retry_attempt = 0);
                self.hub.publish(AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some(RETRY_CANCELLED.into()),
                });
                return outcome;
            }
            let next = self.run_again(run).await;
            merge(&mut outcome, next);
        }
    }

    /// Removes the failed assistant message that ended the run from the
    /// transcript and from `outcome`, if given (Pi's `messages.slice(0,
    /// -1)`).
    pub(super) fn drop_failed_message(&self, outcome: Option<&mut AgentOutcome>) {
        self.inner.with(|inner| {
            if inner
                .messages
                .last()
                .is_some_and(|m| m.role() == "assistant")
            {
                inner.messages.pop();
            }
        });
        if let Some(outcome) = outcome {
            if matches!(outcome.messages.last(), Some(Message::Assistant(_))) {
                outcome.messages.pop();
            }
        }
    }

    /// Runs the loop again on the transcript as it is (Pi's `continue()`),
    /// with the queued steering messages first; on a transcript ending in
    /// an assistant message (after a threshold compaction), the queued
    /// follow-up messages when no steering waits.
    pub(super) async fn run_again(&self, run: &Rerun<'_, M>) -> AgentOutcome {
        let (context, after_answer) = self.inner.with(|inner| {
            inner.last_error = None;
            let after_answer = inner
                .messages
                .last()
                .is_some_and(|m| m.role() == "assistant");
            (inner.context(), after_answer)
        });
        let prompts = self.queues.with(|q| {
            let steering = drain(&mut q.steering, q.steering_mode);
            if steering.is_empty() && after_answer {
                drain(&mut q.follow_up, q.follow_up_mode)
            } else {
                steering
            }
        });
        run_agent(
            &**run.model,
            run.tools,
            context,
            prompts,
            run.options.clone(),
            |event| self.observe(event),
        )
        .await
    }

    /// Pi's reset of the retry counter on an assistant message without
    /// error: the `auto_retry_end` to publish after `event`, if any.
    pub(super) fn retry_succeeded(&self, event: &AgentEvent) -> Option<AgentEvent> {
        let AgentEvent::MessageEnd { message } = event else {
            return None;
        };
        let assistant = message.as_assistant()?;
        if assistant.stop_reason == crate::message::StopReason::Error {
            return None;
        }
        let attempt = self
            .inner
            .with(|inner| core::mem::take(&mut inner.retry_attempt));
        (attempt > 0).then_some(AgentEvent::AutoRetryEnd {
            success: true,
            attempt,
            final_error: None,
        })
    }
}

/// Adds a further run to an outcome: its messages and turns, its stop.
pub(super) fn merge(outcome: &mut AgentOutcome, next: AgentOutcome) {
    outcome.messages.extend(next.messages);
    outcome.turns += next.turns;
    outcome.stop = next.stop;
    outcome.error_cause = next.error_cause;
}

/// The error text of the run's last assistant message when it is one Pi
/// retries.
fn last_assistant_error(messages: &[Message]) -> Option<alloc::string::String> {
    let last = messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) => Some(a),
        _ => None,
    })?;
    if !is_retryable_error(last) {
        return None;
    }
    last.error_message.clone()
}

/// Waits for `sleep`; `false` when `controller` aborts first.
async fn wait_unless_aborted(
    sleep: impl Future<Output = ()>,
    controller: &AbortController,
) -> bool {
    let signal = controller.signal();
    let mut aborted = core::pin::pin!(signal.aborted());
    let mut sleep = core::pin::pin!(sleep);
    core::future::poll_fn(|cx| {
        if aborted.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        sleep.as_mut().poll(cx).map(|()| true)
    })
    .await
}
