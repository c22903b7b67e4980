//! [`Agent`]: the stateful object Pi's users drive, built on [`run_agent`].

mod compaction;
mod control;
mod idle;
mod retry;

use alloc::borrow::ToOwned;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::auto_compaction::AutoCompaction;
use super::auto_retry::AutoRetry;
use super::events::AgentEvent;
use super::options::{AgentOptions, AgentOutcome, AgentStop};
use super::run::run_agent;
use super::state::{AgentError, AgentFailure, QueueMode};
use super::subscribe::Hub;
use super::toolset::ToolSet;
use crate::message::{Context, Message, SharedMessage};
use crate::model::{AbortController, Model, PartialMessage};
use crate::sync::{Lock, WakerSlab};
use idle::Idle;
pub use idle::WaitForIdle;
use retry::Rerun;

enum Streaming {
    Whole(SharedMessage),
    Partial(PartialMessage),
}

struct Inner<M> {
    model: Arc<M>,
    tools: Arc<ToolSet<'static>>,
    system_prompt: Option<String>,
    options: AgentOptions,
    /// The transcript, shared with the `message_end` events it came from.
    messages: Vec<SharedMessage>,
    running: bool,
    streaming: Option<Streaming>,
    pending: Vec<String>,
    last_error: Option<AgentFailure>,
    abort: Option<Arc<AbortController>>,
    idle: WakerSlab,
    /// The retry policy (none: failed turns are not retried).
    auto_retry: Option<AutoRetry>,
    /// Pi's `_retryAttempt`: retries made since the last assistant
    /// message without error.
    retry_attempt: u32,
    /// The compaction policy (none: no automatic compaction).
    auto_compaction: Option<AutoCompaction>,
    /// Pi's `_overflowRecoveryAttempted`: an overflow was compacted and
    /// retried since the last prompt or answer without error.
    overflow_attempted: bool,
    /// The transcript's last assistant message is older than the last
    /// compaction (its usage counts the context before it): Pi's
    /// compaction boundary, so it does not compact again.
    compacted_since_answer: bool,
    /// The running compaction's abort controller (Pi's
    /// `_autoCompactionAbortController` and `_compactionAbortController`).
    compaction_abort: Option<Arc<AbortController>>,
}

impl<M> Inner<M> {
    /// The context a run starts from: the system prompt and the
    /// transcript as it is.
    fn context(&self) -> Context {
        Context {
            system_prompt: self.system_prompt.clone(),
            messages: self
                .messages
                .iter()
                .map(SharedMessage::to_message)
                .collect(),
            ..Context::default()
        }
    }
}

#[derive(Default)]
struct Queues {
    steering: VecDeque<Message>,
    follow_up: VecDeque<Message>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
}

fn drain(queue: &mut VecDeque<Message>, mode: QueueMode) -> Vec<Message> {
    match mode {
        QueueMode::All => queue.drain(..).collect(),
        QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
    }
}

/// An agent: a transcript, a model, tools, a system prompt and options,
/// driven as Pi's `Agent` is.
///
/// Every operation takes `&self`: while [`prompt`](Self::prompt)'s future
/// runs (on a task, or on a thread with any `block_on`), another task or
/// thread can [`steer`](Self::steer), [`follow_up`](Self::follow_up),
/// [`abort`](Self::abort), [`subscribe`](Self::subscribe) or read
/// [`state`](Self::state). `Agent<M>` is `Send + Sync` when `M` is (tools
/// always are on native targets), and works on a `!Send` host (wasm) and
/// with no runtime at all: the core only needs its futures polled.
///
/// | Pi (`Agent`) | here |
/// |---|---|
/// | `prompt(input)` | [`prompt`](Self::prompt), [`prompt_text`](Self::prompt_text) |
/// | `continue()` | [`continue_run`](Self::continue_run) (`continue` is a Rust keyword) |
/// | `steer(m)`, `followUp(m)` | [`steer`](Self::steer), [`follow_up`](Self::follow_up) |
/// | `steeringMode`, `followUpMode` | [`set_steering_mode`](Self::set_steering_mode), [`set_follow_up_mode`](Self::set_follow_up_mode) |
/// | `clearSteeringQueue()`, … , `hasQueuedMessages()` | [`clear_queues`](Self::clear_queues), [`has_queued_messages`](Self::has_queued_messages) |
/// | `abort()`, `waitForIdle()`, `reset()` | [`abort`](Self::abort), [`wait_for_idle`](Self::wait_for_idle), [`reset`](Self::reset) |
/// | `subscribe(fn)` → unsubscribe | [`subscribe`](Self::subscribe) (a stream), [`subscribe_fn`](Self::subscribe_fn) / [`unsubscribe`](Self::unsubscribe) |
/// | `state` (and assigning its fields) | [`state`](Self::state); [`set_model`](Self::set_model), [`set_tools`](Self::set_tools), [`set_system_prompt`](Self::set_system_prompt), [`set_options`](Self::set_options), [`set_messages`](Self::set_messages) |
///
/// A setter takes effect at the next run: a run works on a snapshot of the
/// configuration taken when it starts, as Pi's does. Where it differs from
/// Pi: `prompt` returns the run's [`AgentOutcome`] (Pi's resolves to
/// nothing), a refused operation is an [`AgentError`] rather than a thrown
/// error, subscribers are not awaited (see
/// [`Subscription`](super::Subscription#how-this-differs-from-pi)), the run's
/// abort signal replaces any [`AgentOptions::signal`], and the agent's
/// queues are asked before the options' own steering and follow-up
/// sources.
///
/// ```
/// use agentstream::agent::{Agent, AgentStop, ToolSet};
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::ScriptedModel;
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([
///     assistant([text("hello")], StopReason::Stop),
///     assistant([text("again")], StopReason::Stop),
/// ]);
/// let agent = Agent::new(model, ToolSet::new()).with_system_prompt("Be brief.");
/// let mut events = agent.subscribe();
/// let outcome = futures_executor::block_on(agent.prompt_text("hi")).unwrap();
/// assert_eq!(outcome.stop, AgentStop::Completed);
/// assert_eq!(agent.state().messages.len(), 2); // the prompt and the answer
/// assert!(!agent.state().is_running);
///
/// // A follow-up queued between runs starts the next one.
/// agent.follow_up(agentstream::message::user("and?").into());
/// futures_executor::block_on(agent.continue_run()).unwrap();
/// assert_eq!(agent.state().messages.len(), 4);
///
/// let first = futures_executor::block_on(events.next()).unwrap().unwrap();
/// assert_eq!(first.type_name(), "agent_start");
/// ```
pub struct Agent<M> {
    inner: Lock<Inner<M>>,
    queues: Arc<Lock<Queues>>,
    hub: Hub,
}

impl<M: Model> Agent<M> {
    /// An idle agent with an empty transcript, no system prompt and the
    /// default options.
    pub fn new(model: M, tools: ToolSet<'static>) -> Self {
        Self {
            inner: Lock::new(Inner {
                model: Arc::new(model),
                tools: Arc::new(tools),
                system_prompt: None,
                options: AgentOptions::default(),
                messages: Vec::new(),
                running: false,
                streaming: None,
                pending: Vec::new(),
                last_error: None,
                abort: None,
                idle: WakerSlab::new(),
                auto_retry: None,
                retry_attempt: 0,
                auto_compaction: None,
                overflow_attempted: false,
                compacted_since_answer: false,
                compaction_abort: None,
            }),
            queues: Arc::new(Lock::new(Queues::default())),
            hub: Hub::new(),
        }
    }

    /// The same agent with this system prompt.
    pub fn with_system_prompt(self, prompt: impl Into<String>) -> Self {
        self.set_system_prompt(Some(prompt.into()));
        self
    }

    /// The same agent with these options.
    pub fn with_options(self, options: AgentOptions) -> Self {
        self.set_options(options);
        self
    }

    /// The same agent with this transcript.
    pub fn with_messages(self, messages: Vec<Message>) -> Self {
        self.set_messages(messages);
        self
    }

    /// Runs the loop on the transcript followed by `messages` (Pi's
    /// `prompt`), resolving to the run's outcome when it ends. Steering
    /// messages queued before the call land in the first turn, after
    /// `messages`. [`AgentError::Busy`] while another run is going.
    ///
    /// Dropping the future stops the run where it is (the model call and
    /// the running tools are dropped); the agent is idle again and keeps
    /// the messages that had ended.
    pub async fn prompt(&self, messages: Vec<Message>) -> Result<AgentOutcome, AgentError> {
        if !self.is_running() {
            self.compact_before_prompt().await;
        }
        self.run(messages, false).await
    }

    /// [`prompt`](Self::prompt) with one user message of this text,
    /// stamped with the options' [`clock`](AgentOptions::with_clock) or
    /// else the model's, as Pi stamps it with `Date.now()`.
    pub async fn prompt_text(&self, text: &str) -> Result<AgentOutcome, AgentError> {
        let mut message = crate::message::user(text);
        message.timestamp = self.now_unix_ms();
        self.prompt(alloc::vec![message.into()]).await
    }

    /// The time by the options' clock, else the model's (0: no clock).
    pub(super) fn now_unix_ms(&self) -> u64 {
        self.inner.with(|inner| match &inner.options.clock {
            Some(clock) => clock.now_unix_ms(),
            None => inner.model.clock().map_or(0, |clock| clock.now_unix_ms()),
        })
    }

    /// Publishes an event to the subscribers (a manual compaction's, from
    /// the session recorder).
    #[cfg(feature = "std")]
    pub(crate) fn publish(&self, event: AgentEvent) {
        self.hub.publish(event);
    }

    /// Resumes from the current transcript (Pi's `continue`), for example
    /// after an abort or a failed turn: the last message must be a user or
    /// tool-result message. If it is an assistant message, the queued
    /// steering messages (or else the follow-up ones) become the prompt;
    /// with none, [`AgentError::CannotContinueFrom`].
    pub async fn continue_run(&self) -> Result<AgentOutcome, AgentError> {
        let last_role = self.inner.with(|inner| {
            if inner.running {
                return Err(AgentError::Busy);
            }
            match inner.messages.last() {
                None => Err(AgentError::NothingToContinue),
                Some(message) => Ok(message.role().to_owned()),
            }
        })?;
        if last_role != "assistant" {
            return self.run(Vec::new(), false).await;
        }
        let (steering, follow_up) = self.queues.with(|queues| {
            let steering = drain(&mut queues.steering, queues.steering_mode);
            let follow_up = if steering.is_empty() {
                drain(&mut queues.follow_up, queues.follow_up_mode)
            } else {
                Vec::new()
            };
            (steering, follow_up)
        });
        if !steering.is_empty() {
            return self.run_queued(steering, true).await;
        }
        if !follow_up.is_empty() {
            return self.run_queued(follow_up, false).await;
        }
        Err(AgentError::CannotContinueFrom(last_role))
    }

    /// Runs with messages taken from a queue; if a run started in the
    /// meantime, they go back to the front of their queue.
    async fn run_queued(
        &self,
        messages: Vec<Message>,
        steering: bool,
    ) -> Result<AgentOutcome, AgentError> {
        if self.is_running() {
            self.queues.with(|q| {
                let queue = if steering {
                    &mut q.steering
                } else {
                    &mut q.follow_up
                };
                for message in messages.into_iter().rev() {
                    queue.push_front(message);
                }
            });
            return Err(AgentError::Busy);
        }
        self.run(messages, steering).await
    }

    async fn run(
        &self,
        mut prompts: Vec<Message>,
        skip_initial_steering: bool,
    ) -> Result<AgentOutcome, AgentError> {
        let controller = Arc::new(AbortController::new());
        let started = self.inner.with(|inner| {
            if inner.running {
                return Err(AgentError::Busy);
            }
            inner.running = true;
            inner.streaming = None;
            inner.pending.clear();
            inner.last_error = None;
            inner.abort = Some(Arc::clone(&controller));
            let context = inner.context();
            Ok((
                Arc::clone(&inner.model),
                Arc::clone(&inner.tools),
                inner.options.clone(),
                context,
            ))
        });
        let (model, tools, mut options, context) = started?;
        let guard = Idle(self);
        if !skip_initial_steering {
            prompts.extend(
                self.queues
                    .with(|q| drain(&mut q.steering, q.steering_mode)),
            );
        }
        options.signal = Some(controller.signal());
        let queues = Arc::clone(&self.queues);
        let own = options.hooks.steering.take();
        options.hooks.steering = Some(Arc::new(move || {
            let mut messages = queues.with(|q| drain(&mut q.steering, q.steering_mode));
            if let Some(own) = &own {
                messages.extend(own());
            }
            messages
        }));
        let queues = Arc::clone(&self.queues);
        let own = options.hooks.follow_up.take();
        options.hooks.follow_up = Some(Arc::new(move || {
            let mut messages = queues.with(|q| drain(&mut q.follow_up, q.follow_up_mode));
            if let Some(own) = &own {
                messages.extend(own());
            }
            messages
        }));
        let first = run_agent(
            &*model,
            &tools,
            context,
            prompts,
            options.clone(),
            |event| self.observe(event),
        )
        .await;
        let outcome = self
            .after_run(
                first,
                &Rerun {
                    model: &model,
                    tools: &tools,
                    options: &options,
                    controller: &controller,
                },
            )
            .await;
        let failure = match outcome.stop {
            AgentStop::Error | AgentStop::Aborted => {
                outcome.error_message().map(|message| AgentFailure {
                    message: message.to_owned(),
                    cause: outcome.error_cause.clone(),
                })
            }
            _ => None,
        };
        self.inner.with(|inner| {
            if failure.is_some() {
                inner.last_error = failure;
            }
        });
        drop(guard);
        Ok(outcome)
    }

    /// Updates the state for `event` (as Pi's `processEvents` does), then
    /// hands it to the subscribers.
    fn observe(&self, event: AgentEvent) {
        self.inner.with(|inner| match &event {
            AgentEvent::MessageStart { message } => {
                if message.role() == "user" {
                    inner.overflow_attempted = false;
                }
                inner.streaming = Some(Streaming::Whole(message.clone()));
            }
            AgentEvent::MessageUpdate { message, .. } => {
                inner.streaming = Some(Streaming::Partial(message.clone()));
            }
            AgentEvent::MessageEnd { message } => {
                if message
                    .as_assistant()
                    .is_some_and(|a| a.stop_reason != crate::message::StopReason::Error)
                {
                    inner.overflow_attempted = false;
                }
                if message.role() == "assistant" {
                    inner.compacted_since_answer = false;
                }
                inner.streaming = None;
                inner.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                inner.pending.push(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                inner.pending.retain(|id| id != tool_call_id);
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(error) = &message.error_message {
                    inner.last_error = Some(AgentFailure {
                        message: error.clone(),
                        cause: None,
                    });
                }
            }
            AgentEvent::AgentEnd { .. } => inner.streaming = None,
            _ => {}
        });
        let retried = self.retry_succeeded(&event);
        self.hub.publish(event);
        if let Some(end) = retried {
            self.hub.publish(end);
        }
    }
}

impl<M> fmt::Debug for Agent<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (messages, running) = self
            .inner
            .with(|inner| (inner.messages.len(), inner.running));
        f.debug_struct("Agent")
            .field("messages", &messages)
            .field("is_running", &running)
            .field("subscribers", &self.hub)
            .finish_non_exhaustive()
    }
}
