//! The agent events, in the JSON shape of Pi's agent package.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::tool::ToolExecutionResult;
use crate::message::{AssistantMessage, SharedMessage, ToolResultMessage};
use crate::model::{ModelEvent, PartialMessage};

/// One event of an agent run.
///
/// Serializes to the JSON Pi's agent package emits: a `type` tag in
/// snake case and camelCase fields (`toolCallId`, `toolName`, `args`,
/// `partialResult`, `result`, `isError`, `toolResults`,
/// `assistantMessageEvent`).
///
/// The messages are shared, not copied, between the events that carry
/// them ([`SharedMessage`], `Arc`): a message's `message_start` and
/// `message_end`, an assistant message's `turn_end`, a tool result's
/// place in `toolResults` and every message in `agent_end` are one
/// allocation, so cloning an event is cheap and emitting one copies no
/// message.
///
/// ```
/// use agentstream::agent::AgentEvent;
/// let json = serde_json::to_value(&AgentEvent::TurnStart).unwrap();
/// assert_eq!(json, serde_json::json!({"type": "turn_start"}));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// The run starts.
    AgentStart,
    /// A turn (one model call and its tool calls) starts.
    TurnStart,
    /// A message enters the history: a prompt, an assistant message (its
    /// first streamed state) or a tool result.
    MessageStart {
        /// The message (an assistant message's first streamed state).
        message: SharedMessage,
    },
    /// The assistant message being streamed changed.
    MessageUpdate {
        /// The message so far: a snapshot that shares its blocks with the
        /// previous ones (O(1) to make; [`PartialMessage::to_message`]
        /// materializes it), serialized as the whole message.
        message: PartialMessage,
        /// The model event that changed it.
        assistant_message_event: ModelEvent,
    },
    /// A message is complete.
    MessageEnd {
        /// The message, shared with the events after it that carry it.
        message: SharedMessage,
    },
    /// A tool call starts executing.
    ToolExecutionStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The arguments, as the model sent them.
        args: Value,
    },
    /// A tool reported progress.
    ToolExecutionUpdate {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The arguments, as the model sent them.
        args: Value,
        /// The progress the tool reported.
        partial_result: Value,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The result (`content` and `details`), typed; serialized as Pi's
        /// `{content, details}`.
        result: ToolExecutionResult,
        /// Whether the result is an error.
        is_error: bool,
    },
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message (shared with its `message_end`).
        message: Arc<AssistantMessage>,
        /// Its tool results, in the order of the calls (shared with their
        /// `message_end`s).
        tool_results: Vec<Arc<ToolResultMessage>>,
    },
    /// The run ended.
    AgentEnd {
        /// The messages the run added (shared with their `message_end`s;
        /// [`AgentOutcome::messages`](super::AgentOutcome::messages) holds
        /// them too, owned).
        messages: Vec<SharedMessage>,
    },
    /// A run ended in a transient error and the agent's
    /// [`AutoRetry`](super::AutoRetry) policy retries it after a delay
    /// (Pi's `auto_retry_start`; only with the policy on).
    AutoRetryStart {
        /// The attempt about to be made, from 1.
        attempt: u32,
        /// The policy's most retries (`maxAttempts`).
        max_attempts: u32,
        /// The delay before the attempt: `baseDelayMs · 2^(attempt-1)`.
        delay_ms: u64,
        /// The failed turn's error text.
        error_message: String,
    },
    /// A retry sequence ended (Pi's `auto_retry_end`): an assistant
    /// message without error came back, the retries ran out, or the wait
    /// was aborted.
    AutoRetryEnd {
        /// Whether a retried turn succeeded.
        success: bool,
        /// The retries made.
        attempt: u32,
        /// On failure, the last error text (`"Retry cancelled"` after an
        /// abort).
        final_error: Option<String>,
    },
    /// The agent's [`AutoCompaction`](super::AutoCompaction) policy starts
    /// compacting (Pi's `compaction_start`; only with the policy on).
    CompactionStart {
        /// Why: `"threshold"` or `"overflow"`.
        reason: &'static str,
    },
    /// A compaction ended (Pi's `compaction_end`).
    CompactionEnd {
        /// Why it ran: `"threshold"` or `"overflow"`.
        reason: &'static str,
        /// The compaction written, when it succeeded.
        result: Option<crate::session::CompactionResult>,
        /// Whether it was aborted.
        aborted: bool,
        /// Whether the run goes on after it (an overflow's retry).
        will_retry: bool,
        /// Pi's text when it failed.
        error_message: Option<String>,
    },
}

impl AgentEvent {
    /// The event's `type` tag.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::AgentStart => "agent_start",
            Self::TurnStart => "turn_start",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
            Self::TurnEnd { .. } => "turn_end",
            Self::AgentEnd { .. } => "agent_end",
            Self::AutoRetryStart { .. } => "auto_retry_start",
            Self::AutoRetryEnd { .. } => "auto_retry_end",
            Self::CompactionStart { .. } => "compaction_start",
            Self::CompactionEnd { .. } => "compaction_end",
        }
    }
}

impl Serialize for AgentEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.type_name())?;
        match self {
            Self::AgentStart | Self::TurnStart => {}
            Self::MessageStart { message } | Self::MessageEnd { message } => {
                map.serialize_entry("message", message)?;
            }
            Self::MessageUpdate {
                message,
                assistant_message_event,
            } => {
                map.serialize_entry("message", message)?;
                map.serialize_entry("assistantMessageEvent", assistant_message_event)?;
            }
            Self::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                map.serialize_entry("toolCallId", tool_call_id)?;
                map.serialize_entry("toolName", tool_name)?;
                map.serialize_entry("args", args)?;
            }
            Self::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                map.serialize_entry("toolCallId", tool_call_id)?;
                map.serialize_entry("toolName", tool_name)?;
                map.serialize_entry("args", args)?;
                map.serialize_entry("partialResult", partial_result)?;
            }
            Self::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                map.serialize_entry("toolCallId", tool_call_id)?;
                map.serialize_entry("toolName", tool_name)?;
                map.serialize_entry("result", result)?;
                map.serialize_entry("isError", is_error)?;
            }
            Self::TurnEnd {
                message,
                tool_results,
            } => {
                map.serialize_entry("message", &**message)?;
                map.serialize_entry("toolResults", &Shared(tool_results))?;
            }
            Self::AgentEnd { messages } => {
                map.serialize_entry("messages", messages)?;
            }
            Self::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                map.serialize_entry("attempt", attempt)?;
                map.serialize_entry("maxAttempts", max_attempts)?;
                map.serialize_entry("delayMs", delay_ms)?;
                map.serialize_entry("errorMessage", error_message)?;
            }
            Self::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                map.serialize_entry("success", success)?;
                map.serialize_entry("attempt", attempt)?;
                if let Some(error) = final_error {
                    map.serialize_entry("finalError", error)?;
                }
            }
            Self::CompactionStart { reason } => map.serialize_entry("reason", reason)?,
            Self::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                map.serialize_entry("reason", reason)?;
                if let Some(result) = result {
                    map.serialize_entry(
                        "result",
                        &serde_json::json!({
                            "summary": result.summary,
                            "firstKeptEntryId": result.first_kept_entry_id,
                            "tokensBefore": result.tokens_before,
                            "details": result.details,
                        }),
                    )?;
                }
                map.serialize_entry("aborted", aborted)?;
                map.serialize_entry("willRetry", will_retry)?;
                if let Some(error) = error_message {
                    map.serialize_entry("errorMessage", error)?;
                }
            }
        }
        map.end()
    }
}

/// Writes a list of shared values as the list of the values.
struct Shared<'a, T>(&'a [Arc<T>]);

impl<T: Serialize> Serialize for Shared<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|item| &**item))
    }
}
