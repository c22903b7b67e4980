//! The [`Agent`]'s controls between and during runs: its queues, abort,
//! waiting for idle, reset, the state snapshot, setters and subscribers.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::idle::WaitForIdle;
use super::{Agent, Inner, Streaming};
use crate::agent::events::AgentEvent;
use crate::agent::maybe_send::{MaybeSend, MaybeSync};
use crate::agent::options::AgentOptions;
use crate::agent::state::{AgentState, QueueMode};
use crate::agent::subscribe::{SubscriberId, Subscription, DEFAULT_SUBSCRIBER_CAPACITY};
use crate::agent::toolset::ToolSet;
use crate::message::{Message, SharedMessage};

impl<M> Agent<M> {
    /// Puts `value` in the field `field` picks, dropping the old value
    /// only once the lock is released (its drop may run user code).
    pub(super) fn replace_in<T>(&self, field: impl FnOnce(&mut Inner<M>) -> &mut T, value: T) {
        let old = self
            .inner
            .with(|inner| core::mem::replace(field(inner), value));
        drop(old);
    }

    /// Queues a message that lands after the current turn's tool calls
    /// (Pi's `steer`).
    pub fn steer(&self, message: Message) {
        self.queues.with(|q| q.steering.push_back(message));
    }

    /// Queues a message that starts a new turn once the run would
    /// otherwise end (Pi's `followUp`).
    pub fn follow_up(&self, message: Message) {
        self.queues.with(|q| q.follow_up.push_back(message));
    }

    /// How queued steering messages are drained.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.queues.with(|q| q.steering_mode = mode);
    }

    /// How queued follow-up messages are drained.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.queues.with(|q| q.follow_up_mode = mode);
    }

    /// Empties both queues.
    pub fn clear_queues(&self) {
        let dropped = self.queues.with(|q| {
            (
                core::mem::take(&mut q.steering),
                core::mem::take(&mut q.follow_up),
            )
        });
        drop(dropped);
    }

    /// Whether a steering or follow-up message is queued.
    pub fn has_queued_messages(&self) -> bool {
        self.queues
            .with(|q| !q.steering.is_empty() || !q.follow_up.is_empty())
    }

    /// Aborts the current run, if one is going: the model call and the
    /// running tools see the signal, and `prompt` resolves with
    /// [`AgentStop::Aborted`](crate::agent::AgentStop::Aborted).
    pub fn abort(&self) {
        if let Some(controller) = self.inner.with(|inner| inner.abort.clone()) {
            controller.abort();
        }
    }

    /// Resolves once no run is going (at once when idle).
    pub fn wait_for_idle(&self) -> WaitForIdle<'_, M> {
        WaitForIdle::new(self)
    }

    /// Clears the transcript, the streaming state, the pending calls, the
    /// last error and both queues (Pi's `reset`). A run that is going goes
    /// on, appending to the cleared transcript, as in Pi.
    pub fn reset(&self) {
        let dropped = self.inner.with(|inner| {
            inner.pending.clear();
            inner.last_error = None;
            (core::mem::take(&mut inner.messages), inner.streaming.take())
        });
        drop(dropped);
        self.clear_queues();
    }

    /// A snapshot of the state.
    pub fn state(&self) -> AgentState {
        self.inner.with(|inner| AgentState {
            system_prompt: inner.system_prompt.clone(),
            messages: inner
                .messages
                .iter()
                .map(SharedMessage::to_message)
                .collect(),
            is_running: inner.running,
            streaming_message: inner.streaming.as_ref().map(|s| match s {
                Streaming::Whole(message) => message.to_message(),
                Streaming::Partial(partial) => partial.to_message().into(),
            }),
            pending_tool_calls: inner.pending.clone(),
            last_error: inner.last_error.clone(),
        })
    }

    /// Whether a run is going.
    pub fn is_running(&self) -> bool {
        self.inner.with(|inner| inner.running)
    }

    /// Replaces the model (from the next run on).
    pub fn set_model(&self, model: M) {
        self.replace_in(|inner| &mut inner.model, Arc::new(model));
    }

    /// Replaces the tools (from the next run on).
    pub fn set_tools(&self, tools: ToolSet<'static>) {
        self.replace_in(|inner| &mut inner.tools, Arc::new(tools));
    }

    /// Replaces the system prompt (from the next run on).
    pub fn set_system_prompt(&self, prompt: Option<String>) {
        self.replace_in(|inner| &mut inner.system_prompt, prompt);
    }

    /// Replaces the options (from the next run on): turn limit, tool
    /// execution, hooks, the model calls' [`StreamOptions`](crate::model::StreamOptions), ….
    pub fn set_options(&self, options: AgentOptions) {
        self.replace_in(|inner| &mut inner.options, options);
    }

    /// Sets the session id (Pi's `sessionId`) every model call of the
    /// next runs carries in its [`StreamOptions`](crate::model::StreamOptions):
    /// the prompt cache key and session headers where the provider takes them.
    pub fn set_session_id(&self, session_id: Option<String>) {
        self.replace_in(|inner| &mut inner.options.stream.session_id, session_id);
    }

    /// The session id the model calls carry, if set.
    pub fn session_id(&self) -> Option<String> {
        self.inner
            .with(|inner| inner.options.stream.session_id.clone())
    }

    /// Sets the thinking level (Pi's `AgentState.thinkingLevel`) every
    /// model call of the next runs carries in its
    /// [`StreamOptions::thinking`](crate::model::StreamOptions::thinking);
    /// `None` sends none (the model's default).
    pub fn set_thinking_level(&self, level: Option<crate::model::ThinkingLevel>) {
        self.replace_in(|inner| &mut inner.options.stream.thinking, level);
    }

    /// The thinking level the model calls carry, if set.
    pub fn thinking_level(&self) -> Option<crate::model::ThinkingLevel> {
        self.inner.with(|inner| inner.options.stream.thinking)
    }

    /// Replaces the transcript.
    pub fn set_messages(&self, messages: Vec<Message>) {
        let messages = messages.into_iter().map(SharedMessage::from).collect();
        self.replace_in(|inner| &mut inner.messages, messages);
    }

    /// Every event from now on, as a stream (capacity
    /// [`DEFAULT_SUBSCRIBER_CAPACITY`]). Dropping it unsubscribes.
    pub fn subscribe(&self) -> Subscription {
        self.hub.subscribe(DEFAULT_SUBSCRIBER_CAPACITY)
    }

    /// [`subscribe`](Self::subscribe) with a chosen bound: the subscriber
    /// may fall behind by `capacity` events (at least one) before it loses
    /// the oldest.
    pub fn subscribe_with_capacity(&self, capacity: usize) -> Subscription {
        self.hub.subscribe(capacity)
    }

    /// Calls `callback` with every event from now on, on the run's task, in
    /// order, until [`unsubscribe`](Self::unsubscribe).
    pub fn subscribe_fn(
        &self,
        callback: impl Fn(&AgentEvent) + MaybeSend + MaybeSync + 'static,
    ) -> SubscriberId {
        self.hub.subscribe_fn(callback)
    }

    /// Detaches a callback; `false` if it was not attached.
    pub fn unsubscribe(&self, id: SubscriberId) -> bool {
        self.hub.unsubscribe(id)
    }

    /// How many subscribers (streams and callbacks) are attached.
    pub fn subscriber_count(&self) -> usize {
        self.hub.len()
    }
}
