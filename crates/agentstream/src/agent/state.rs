//! What an [`Agent`](super::Agent) reports: its state, why an operation
//! was refused, how its queues drain.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::message::Message;
use crate::model::ErrorCause;

/// How a queue of steering or follow-up messages is drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum QueueMode {
    /// One message each time the loop asks (Pi's default,
    /// `"one-at-a-time"`).
    #[default]
    OneAtATime,
    /// Every queued message at once (Pi's `"all"`).
    All,
}

/// Why an [`Agent`](super::Agent) operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentError {
    /// A run is going: `prompt` and `continue_run` wait for it to end (use
    /// [`Agent::steer`](super::Agent::steer) or [`Agent::follow_up`](super::Agent::follow_up) to queue messages, or
    /// [`Agent::wait_for_idle`](super::Agent::wait_for_idle)).
    Busy,
    /// [`Agent::continue_run`](super::Agent::continue_run) with an empty transcript.
    NothingToContinue,
    /// [`Agent::continue_run`](super::Agent::continue_run) when the transcript ends with an assistant
    /// message and no message is queued; holds that message's role.
    CannotContinueFrom(String),
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Busy => f.write_str(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue \
                 messages, or wait for completion.",
            ),
            Self::NothingToContinue => f.write_str("No messages to continue from"),
            Self::CannotContinueFrom(role) => {
                write!(f, "Cannot continue from message role: {role}")
            }
        }
    }
}

impl core::error::Error for AgentError {}

/// The failure of the last run's model call: Pi's `errorMessage`, and the
/// typed cause when the model recorded one.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentFailure {
    /// The failed message's `errorMessage`.
    pub message: String,
    /// Its typed cause (a 401 is not a 429), if the model gave one.
    pub cause: Option<ErrorCause>,
}

/// A snapshot of an [`Agent`](super::Agent)'s state (Pi's `agent.state`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentState {
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// The transcript: every message that ended so far, the current run's
    /// included.
    pub messages: Vec<Message>,
    /// Whether a run is going (Pi's `isStreaming`).
    pub is_running: bool,
    /// The message being streamed, if any (Pi's `streamingMessage`).
    pub streaming_message: Option<Message>,
    /// The ids of the tool calls that started and have not ended, in start
    /// order (Pi's `pendingToolCalls`).
    pub pending_tool_calls: Vec<String>,
    /// The last run's failure, if its model call failed (Pi's
    /// `errorMessage`, with the typed cause).
    pub last_error: Option<AgentFailure>,
}
