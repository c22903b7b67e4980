//! The loop's options and its outcome.

use alloc::vec::Vec;

use serde_json::Value;

use crate::message::Message;
use crate::model::{AbortSignal, ErrorCause, StreamOptions};
use crate::rt::{Clock, Pause};

/// Checks a call's arguments against its tool's schema, coercing them in
/// place, and returns one line per failure (empty: valid). The default is
/// [`validate_arguments`](super::validate_arguments).
pub type ArgumentValidator =
    fn(schema: &Value, arguments: &mut Value) -> Vec<alloc::string::String>;

/// How the calls of one turn run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolExecution {
    /// The calls of a turn run concurrently (Pi's default). Their
    /// `tool_execution_end` events come in completion order; the results
    /// stay in call order. A call of a tool whose
    /// [`sequential`](super::AgentTool::sequential) is `true` runs alone:
    /// the calls before it (in call order) finish first, and the calls
    /// after it start once it has finished.
    #[default]
    Parallel,
    /// One call after the other, in call order.
    Sequential,
}

/// Options of one run.
#[derive(Clone)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The most model calls the run makes; `None` is no limit.
    pub max_turns: Option<usize>,
    /// How a turn's calls run.
    pub tool_execution: ToolExecution,
    /// Aborts the model call and every running tool.
    pub signal: Option<AbortSignal>,
    /// How long a running tool may still take after an abort before it is
    /// dropped and gets an aborted error result. `None` (the default): no
    /// grace at all; at the abort each running tool is polled once more (a
    /// tool that watches [`ToolContext::signal`](super::ToolContext) can
    /// still return its own result then) and otherwise dropped. The core
    /// cannot wait "a while" without a clock, and waiting forever would let
    /// one stuck tool hold the run.
    /// A [`Pause::new`](crate::rt::Pause::new) on a runtime's timer (a host
    /// crate's `abort_grace`) gives it a length.
    pub abort_grace: Option<Pause>,
    /// Validates (and coerces) each call's arguments before `execute`;
    /// `None` passes them through unchecked. A call that fails gets an
    /// error result naming each failing path and the received arguments.
    pub validator: Option<ArgumentValidator>,
    /// Hooks, steering and follow-up queues.
    pub hooks: super::AgentHooks,
    /// The options of every model call (temperature, max tokens, reasoning
    /// effort, tool choice, stop sequences, response format); the run's
    /// abort signal replaces their `signal`.
    pub stream: StreamOptions,
    /// The wall clock stamping the messages the loop makes (a
    /// [`prompt_text`](super::Agent::prompt_text) user message, every
    /// `toolResult`), as Pi stamps them with `Date.now()`. `None` (the
    /// default): the model's [`clock`](crate::model::Model::clock), and 0
    /// when it has none.
    pub clock: Option<Clock>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_turns: None,
            tool_execution: ToolExecution::default(),
            signal: None,
            abort_grace: None,
            validator: Some(super::validate_arguments),
            hooks: super::AgentHooks::default(),
            stream: StreamOptions::default(),
            clock: None,
        }
    }
}

impl AgentOptions {
    /// Options with `max_turns` set.
    pub fn with_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = Some(max_turns);
        self
    }

    /// Options with `tool_execution` set.
    pub fn with_tool_execution(mut self, tool_execution: ToolExecution) -> Self {
        self.tool_execution = tool_execution;
        self
    }

    /// Options with `validator` set (`None`: no validation).
    pub fn with_validator(mut self, validator: Option<ArgumentValidator>) -> Self {
        self.validator = validator;
        self
    }

    /// Options with `hooks` set.
    pub fn with_hooks(mut self, hooks: super::AgentHooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Options with `abort_grace` set.
    pub fn with_abort_grace(mut self, grace: Pause) -> Self {
        self.abort_grace = Some(grace);
        self
    }

    /// Options with the clock that stamps the messages the loop makes.
    ///
    /// ```
    /// use agentstream::agent::AgentOptions;
    /// use agentstream::rt::Clock;
    ///
    /// let options = AgentOptions::default().with_clock(Clock::from_fn(|| 42));
    /// assert_eq!(options.now_unix_ms(), 42);
    /// assert_eq!(AgentOptions::default().now_unix_ms(), 0);
    /// ```
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The time by [`clock`](Self::clock) in milliseconds since the Unix
    /// epoch; 0 without a clock.
    pub fn now_unix_ms(&self) -> u64 {
        self.clock.as_ref().map_or(0, Clock::now_unix_ms)
    }

    /// Options with the model calls' options set.
    ///
    /// ```
    /// use agentstream::agent::AgentOptions;
    /// use agentstream::model::StreamOptions;
    /// let options = AgentOptions::default()
    ///     .with_stream_options(StreamOptions::default().with_temperature(0.2).with_max_tokens(256));
    /// assert_eq!(options.stream.max_tokens, Some(256));
    /// ```
    pub fn with_stream_options(mut self, stream: StreamOptions) -> Self {
        self.stream = stream;
        self
    }

    /// Options with `signal` set.
    pub fn with_signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentStop {
    /// A turn ended without tool calls.
    Completed,
    /// A model call ended in `error`; its message is the last one.
    Error,
    /// The run was aborted.
    Aborted,
    /// The turn limit was reached while the model still called tools.
    MaxTurns,
    /// The [`should_stop_after_turn`](super::AgentHooks::should_stop_after_turn)
    /// hook ended the run after a turn.
    StoppedAfterTurn,
}

/// The result of a run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentOutcome {
    /// The messages the run added (prompts included), in history order.
    pub messages: Vec<Message>,
    /// Why it ended.
    pub stop: AgentStop,
    /// How many model calls it made.
    pub turns: usize,
    /// The typed cause of the failed model call that ended the run
    /// ([`AgentStop::Error`], or [`AgentStop::Aborted`] by the model call),
    /// when the model recorded one: a 401 is not a 429. The message's
    /// `errorMessage` is its text.
    pub error_cause: Option<ErrorCause>,
}

impl AgentOutcome {
    /// The `errorMessage` of the turn that ended the run, if it failed.
    pub fn error_message(&self) -> Option<&str> {
        match self.stop {
            AgentStop::Error | AgentStop::Aborted => match self.messages.last() {
                Some(Message::Assistant(message)) => message.error_message.as_deref(),
                _ => None,
            },
            _ => None,
        }
    }
}

impl core::fmt::Debug for AgentOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AgentOptions")
            .field("max_turns", &self.max_turns)
            .field("tool_execution", &self.tool_execution)
            .field("signal", &self.signal)
            .field("abort_grace", &self.abort_grace.is_some())
            .field("validator", &self.validator.is_some())
            .field("hooks", &self.hooks)
            .field("stream", &self.stream)
            .field("clock", &self.clock.is_some())
            .finish()
    }
}
