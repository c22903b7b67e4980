//! The [`Agent`]'s [`AutoCompaction`] policy at work, after the retries:
//! an overflow is compacted and continued once, a context past the
//! threshold is compacted.

use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::retry::{merge, Rerun};
use super::{Agent, AutoCompaction};
use crate::agent::events::AgentEvent;
use crate::agent::options::AgentOutcome;
use crate::message::{AssistantMessage, Message, StopReason};
use crate::model::{AbortController, Model};
use crate::session::{
    calculate_context_tokens, estimate_context_tokens, is_context_overflow, should_compact,
    AgentMessage, SummaryOptions,
};

/// Pi's text when an overflow comes back after its compact-and-retry.
const OVERFLOW_RECOVERY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

impl<M: Model> Agent<M> {
    /// Sets the compaction policy (from the next run on); `None` (the
    /// default) compacts nothing.
    pub fn set_auto_compaction(&self, policy: Option<AutoCompaction>) {
        self.replace_in(|inner| &mut inner.auto_compaction, policy);
    }

    /// The same agent with this compaction policy.
    pub fn with_auto_compaction(self, policy: AutoCompaction) -> Self {
        self.set_auto_compaction(Some(policy));
        self
    }

    /// What follows a run, as in Pi's `agent_end` handling: the retries,
    /// then the compaction check; an overflow's compaction continues the
    /// run, and the whole repeats on the new outcome.
    pub(super) async fn after_run(
        &self,
        mut outcome: AgentOutcome,
        run: &Rerun<'_, M>,
    ) -> AgentOutcome {
        loop {
            outcome = self.retry_failed(outcome, run).await;
            if run.controller.is_aborted() || !self.compact_after(&mut outcome).await {
                return outcome;
            }
            // An abort while the compaction ran: no continuation (Pi's
            // abort() reaches neither; see the agent session oracle).
            if run.controller.is_aborted() {
                return outcome;
            }
            let next = self.run_again(run).await;
            merge(&mut outcome, next);
        }
    }

    /// Pi's `_checkCompaction` after a run, on its last assistant message
    /// (an aborted one is left alone); `true` when the run is to continue
    /// (an overflow compacted, or messages queued during a threshold
    /// compaction).
    async fn compact_after(&self, outcome: &mut AgentOutcome) -> bool {
        let Some(last) = last_assistant(&outcome.messages) else {
            return false;
        };
        if last.stop_reason == StopReason::Aborted {
            return false;
        }
        self.check_compaction(&last, Some(outcome)).await
    }

    /// Pi's check before a prompt is sent (`_checkCompaction(last,
    /// false)`): the transcript's last assistant message, an aborted one
    /// included, unless a compaction came after it. An overflow found here
    /// is compacted (`willRetry` as Pi reports it) and the prompt is the
    /// retry: Pi schedules a `continue()` that the running prompt turns
    /// away.
    pub(super) async fn compact_before_prompt(&self) {
        let last = self.inner.with(|inner| {
            if inner.compacted_since_answer {
                return None;
            }
            inner
                .messages
                .iter()
                .rev()
                .find_map(|m| m.as_assistant().cloned())
        });
        if let Some(last) = last {
            self.check_compaction(&last, None).await;
        }
    }

    /// The overflow and threshold cases of Pi's `_checkCompaction` for
    /// `last`; `outcome` is the run's, when a run just ended.
    async fn check_compaction(
        &self,
        last: &AssistantMessage,
        outcome: Option<&mut AgentOutcome>,
    ) -> bool {
        let Some(policy) = self.inner.with(|inner| inner.auto_compaction.clone()) else {
            return false;
        };
        if !policy.settings.enabled {
            return false;
        }
        // Pi's same-model check: an overflow from the model the agent
        // used before a switch does not compact for the new one.
        let same_model = match &policy.model {
            Some((provider, id)) => *provider == last.provider && *id == last.model,
            None => true,
        };
        if same_model && is_context_overflow(last, Some(policy.context_window)) {
            let attempted = self
                .inner
                .with(|inner| core::mem::replace(&mut inner.overflow_attempted, true));
            if attempted {
                self.hub.publish(AgentEvent::CompactionEnd {
                    reason: "overflow",
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(OVERFLOW_RECOVERY_FAILED.into()),
                });
                return false;
            }
            self.drop_failed_message(outcome);
            return self.run_compaction(&policy, "overflow", true).await && self.can_continue();
        }
        let tokens = if last.stop_reason == StopReason::Error {
            let messages: Vec<AgentMessage> = self.inner.with(|inner| {
                inner
                    .messages
                    .iter()
                    .map(|m| AgentMessage::from(m.to_message()))
                    .collect()
            });
            // Without any usable usage, nothing to go by.
            if last_assistant_with_usage(&messages).is_none() {
                return false;
            }
            estimate_context_tokens(&messages)
        } else {
            calculate_context_tokens(&last.usage)
        };
        // A threshold compaction ends the run, unless messages were queued
        // meanwhile: then the loop goes on to deliver them, as Pi's does.
        should_compact(tokens, policy.context_window, &policy.settings)
            && self.run_compaction(&policy, "threshold", false).await
            && self.has_queued_messages()
    }

    /// Pi's `_runAutoCompaction`: the events around one compaction, and
    /// the transcript replaced by the compacted one; `true` when it
    /// compacted.
    async fn run_compaction(
        &self,
        policy: &AutoCompaction,
        reason: &'static str,
        will_retry: bool,
    ) -> bool {
        self.hub.publish(AgentEvent::CompactionStart { reason });
        let (options, controller) = self.begin_compaction();
        let compacted = policy.compactor().compact(None, options).await;
        self.end_compaction();
        match compacted {
            Err(_) if controller.is_aborted() => {
                self.hub.publish(AgentEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted: true,
                    will_retry: false,
                    error_message: None,
                });
                false
            }
            Ok((result, mut messages)) => {
                if will_retry
                    && matches!(messages.last(), Some(Message::Assistant(a)) if a.stop_reason == StopReason::Error)
                {
                    messages.pop();
                }
                self.set_messages(messages);
                self.mark_compacted();
                self.hub.publish(AgentEvent::CompactionEnd {
                    reason,
                    result: Some(result),
                    aborted: false,
                    will_retry,
                    error_message: None,
                });
                true
            }
            Err(error) => {
                let prefix = if reason == "overflow" {
                    "Context overflow recovery failed"
                } else {
                    "Auto-compaction failed"
                };
                self.hub.publish(AgentEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(format!("{prefix}: {error}")),
                });
                false
            }
        }
    }
}

impl<M: Model> Agent<M> {
    /// Whether Pi's `continue()` would run now: not from an empty
    /// transcript, and from an assistant message (one a compaction kept,
    /// or an older failed one) only with queued messages to deliver;
    /// otherwise Pi's refuses and the run ends there.
    fn can_continue(&self) -> bool {
        match self
            .inner
            .with(|inner| inner.messages.last().map(|m| m.role() == "assistant"))
        {
            None => false,
            Some(after_answer) => !after_answer || self.has_queued_messages(),
        }
    }

    /// Aborts the compaction that is running, automatic or manual (Pi's
    /// `abortCompaction`): its summary calls see the signal, no
    /// `compaction` entry is written, the transcript stays, and
    /// `compaction_end` reports `aborted` (an overflow's run is not
    /// continued). [`abort`](Self::abort) does not reach a compaction, as
    /// Pi's `abort()` does not.
    pub fn abort_compaction(&self) {
        if let Some(controller) = self.inner.with(|inner| inner.compaction_abort.clone()) {
            controller.abort();
        }
    }

    /// Starts a compaction: its abort controller, kept for
    /// [`abort_compaction`](Self::abort_compaction) until
    /// [`end_compaction`](Self::end_compaction), and what its summary
    /// calls get: that signal, and the thinking level and model traits
    /// this agent's calls carry (Pi's `compact(…, signal, thinkingLevel)`).
    pub(crate) fn begin_compaction(&self) -> (SummaryOptions, Arc<AbortController>) {
        let controller = Arc::new(AbortController::new());
        let options = self.inner.with(|inner| {
            inner.compaction_abort = Some(Arc::clone(&controller));
            SummaryOptions::from_stream(&inner.options.stream)
        });
        (options.with_signal(controller.signal()), controller)
    }

    /// Ends what [`begin_compaction`](Self::begin_compaction) started.
    pub(crate) fn end_compaction(&self) {
        let controller = self.inner.with(|inner| inner.compaction_abort.take());
        drop(controller);
    }

    /// Notes that a compaction just ended: the transcript's last
    /// assistant message is from before it (Pi's latest compaction entry).
    pub(crate) fn mark_compacted(&self) {
        self.inner.with(|inner| inner.compacted_since_answer = true);
    }
}

fn last_assistant(messages: &[Message]) -> Option<AssistantMessage> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) => Some(a.clone()),
        _ => None,
    })
}

/// Pi's `getLastAssistantUsageInfo`: an assistant message neither aborted
/// nor failed.
fn last_assistant_with_usage(messages: &[AgentMessage]) -> Option<usize> {
    messages.iter().rposition(|m| {
        matches!(m, AgentMessage::Llm(Message::Assistant(a))
            if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error))
    })
}
