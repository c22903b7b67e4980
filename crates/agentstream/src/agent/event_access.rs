//! Small accessors on [`AgentEvent`], so a subscriber that prints live text
//! or collects the finished messages needs one `if let`, not a `match` on
//! the event, then on its model event, then on the message's role.

use super::events::AgentEvent;
use crate::message::{AssistantMessage, SharedMessage, ToolResultMessage};
use crate::model::ModelEvent;

impl AgentEvent {
    /// The model event a `message_update` wraps (`None` for every other
    /// event).
    ///
    /// ```
    /// # use agentstream::agent::{agent_loop, AgentEvent, AgentOptions, ToolSet};
    /// # use agentstream::message::{assistant, text, user, Context, StopReason};
    /// # use agentstream::model::ScriptedModel;
    /// # use futures_util::StreamExt;
    /// # let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    /// # let tools = ToolSet::new();
    /// # let (events, run) = agent_loop(&model, &tools, Context::default(),
    /// #     vec![user("hello").into()], AgentOptions::default());
    /// # futures_executor::block_on(run);
    /// # let events: Vec<AgentEvent> =
    /// #     futures_executor::block_on(events.map(|e| e.unwrap()).collect());
    /// let kinds: Vec<&str> = events.iter().filter_map(AgentEvent::model_event)
    ///     .map(|event| event.type_name()).collect();
    /// assert!(kinds.contains(&"text_delta"));
    /// // `start` and `done` become `message_start` and `message_end`.
    /// assert!(!kinds.contains(&"start") && !kinds.contains(&"done"));
    /// ```
    pub fn model_event(&self) -> Option<&ModelEvent> {
        match self {
            Self::MessageUpdate {
                assistant_message_event,
                ..
            } => Some(assistant_message_event),
            _ => None,
        }
    }

    /// The new text of a `message_update` that carries a `text_delta`
    /// (`None` for every other event): what a subscriber prints as the
    /// answer streams.
    ///
    /// ```
    /// # use agentstream::agent::{agent_loop, AgentEvent, AgentOptions, ToolSet};
    /// # use agentstream::message::{assistant, text, user, Context, StopReason};
    /// # use agentstream::model::ScriptedModel;
    /// # use futures_util::StreamExt;
    /// # let model = ScriptedModel::new([assistant([text("hi there")], StopReason::Stop)]);
    /// # let tools = ToolSet::new();
    /// # let (events, run) = agent_loop(&model, &tools, Context::default(),
    /// #     vec![user("hello").into()], AgentOptions::default());
    /// # futures_executor::block_on(run);
    /// # let events: Vec<AgentEvent> =
    /// #     futures_executor::block_on(events.map(|e| e.unwrap()).collect());
    /// let mut printed = String::new();
    /// for event in &events {
    ///     if let Some(delta) = event.text_delta() {
    ///         printed.push_str(delta); // print!("{delta}") in a terminal
    ///     }
    /// }
    /// assert_eq!(printed, "hi there");
    /// ```
    pub fn text_delta(&self) -> Option<&str> {
        match self.model_event()? {
            ModelEvent::TextDelta { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// The new reasoning of a `message_update` that carries a
    /// `thinking_delta` (`None` for every other event).
    ///
    /// ```
    /// # use agentstream::agent::{agent_loop, AgentEvent, AgentOptions, ToolSet};
    /// # use agentstream::message::{assistant, text, thinking, user, Context, StopReason};
    /// # use agentstream::model::ScriptedModel;
    /// # use futures_util::StreamExt;
    /// let model = ScriptedModel::new([
    ///     assistant([thinking("let me see"), text("yes")], StopReason::Stop),
    /// ]);
    /// # let tools = ToolSet::new();
    /// # let (events, run) = agent_loop(&model, &tools, Context::default(),
    /// #     vec![user("hello").into()], AgentOptions::default());
    /// # futures_executor::block_on(run);
    /// # let events: Vec<AgentEvent> =
    /// #     futures_executor::block_on(events.map(|e| e.unwrap()).collect());
    /// let reasoning: String = events.iter().filter_map(AgentEvent::thinking_delta).collect();
    /// let answer: String = events.iter().filter_map(AgentEvent::text_delta).collect();
    /// assert_eq!((reasoning.as_str(), answer.as_str()), ("let me see", "yes"));
    /// ```
    pub fn thinking_delta(&self) -> Option<&str> {
        match self.model_event()? {
            ModelEvent::ThinkingDelta { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// The finished assistant message of a `message_end` or a `turn_end`
    /// (`None` for every other event, and for the `message_end` of a
    /// prompt or a tool result). Both events of one turn carry the same
    /// message: match on one of them to see each answer once.
    ///
    /// ```
    /// # use agentstream::agent::{agent_loop, AgentEvent, AgentOptions, ToolSet};
    /// # use agentstream::message::{assistant, text, user, Context, StopReason};
    /// # use agentstream::model::ScriptedModel;
    /// # use futures_util::StreamExt;
    /// # let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    /// # let tools = ToolSet::new();
    /// # let (events, run) = agent_loop(&model, &tools, Context::default(),
    /// #     vec![user("hello").into()], AgentOptions::default());
    /// # futures_executor::block_on(run);
    /// # let events: Vec<AgentEvent> =
    /// #     futures_executor::block_on(events.map(|e| e.unwrap()).collect());
    /// let answers: Vec<String> = events.iter()
    ///     .filter(|event| matches!(event, AgentEvent::TurnEnd { .. }))
    ///     .filter_map(AgentEvent::message)
    ///     .map(|message| message.text())
    ///     .collect();
    /// assert_eq!(answers, ["hi"]);
    /// ```
    pub fn message(&self) -> Option<&AssistantMessage> {
        match self {
            Self::MessageEnd { message } => message.as_assistant(),
            Self::TurnEnd { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The tool result message of a `message_end` (`None` for every other
    /// event): one per tool call, in the order of the calls.
    ///
    /// ```
    /// # use agentstream::agent::{agent_loop, AgentEvent, AgentOptions, ToolSet};
    /// # use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
    /// # use agentstream::model::ScriptedModel;
    /// # use futures_util::StreamExt;
    /// let model = ScriptedModel::new([
    ///     assistant([tool_call("call-1", "missing", serde_json::json!({}))], StopReason::ToolUse),
    ///     assistant([text("done")], StopReason::Stop),
    /// ]);
    /// # let tools = ToolSet::new();
    /// # let (events, run) = agent_loop(&model, &tools, Context::default(),
    /// #     vec![user("hello").into()], AgentOptions::default());
    /// # futures_executor::block_on(run);
    /// # let events: Vec<AgentEvent> =
    /// #     futures_executor::block_on(events.map(|e| e.unwrap()).collect());
    /// let results: Vec<_> = events.iter().filter_map(AgentEvent::tool_result).collect();
    /// assert_eq!(results.len(), 1);
    /// assert_eq!(results[0].tool_call_id, "call-1");
    /// assert!(results[0].is_error); // no tool is named "missing"
    /// ```
    pub fn tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            Self::MessageEnd {
                message: SharedMessage::ToolResult(result),
            } => Some(result),
            _ => None,
        }
    }
}
