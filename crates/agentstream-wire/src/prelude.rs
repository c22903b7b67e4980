//! What every runtime adapter's prelude holds besides its own items: the
//! [`Model`] trait and its types, the scripted
//! test double, the agent loop and its tools, the
//! [`Context`] and the message builders,
//! and the providers' configurations. An adapter's `prelude` re-exports
//! this module and adds its spawn, timers and models, so the list is kept
//! in one place for every host.
//!
//! ```
//! use agentstream_wire::prelude::*;
//!
//! let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
//! let context = Context::from_messages([user("hello").into()]);
//! let message = futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
//! assert_eq!(message.text(), "hi");
//! let _config = OpenAiConfig::new("http://127.0.0.1:11434/v1", "llama3.2");
//! ```

pub use agentstream::agent::{
    agent_loop, run_agent, AfterToolCallHook, Agent, AgentError, AgentEvent, AgentHooks,
    AgentOptions, AgentOutcome, AgentState, AgentStop, AgentTool, BeforeToolCallHook, Subscription,
    ToolCallDecision, ToolContext, ToolError, ToolExecution, ToolOutput, ToolSet,
    TransformContextHook, TypedTool,
};
pub use agentstream::message::{
    assistant, image, text, thinking, tool_call, tool_result, user, user_blocks, AssistantMessage,
    ContentBlock, Context, Message, StopReason, Tool,
};
pub use agentstream::model::{
    validate_events, AbortController, AbortSignal, Model, ModelEvent, ModelStream, ScriptedModel,
    ScriptedTurn, StreamOptions,
};
// What `with_retry` takes and returns, and what a subscription yields
// beside `Arc<AgentEvent>`: on lines of their own.
pub use agentstream::agent::Lagged;
pub use agentstream::model::{RetryModel, RetryPolicy};

pub use crate::anthropic::AnthropicConfig;
pub use crate::azure::AzureConfig;
pub use crate::bedrock::BedrockConfig;
pub use crate::gemini::GeminiConfig;
pub use crate::mistral::MistralConfig;
pub use crate::openai::OpenAiConfig;
pub use crate::responses::ResponsesConfig;
