//! The prelude holds the same names it held before it re-exported
//! `agentstream_wire::prelude`: naming each one fails to compile when one
//! goes missing.

#[allow(unused_imports)]
use agentstream_smol::prelude::{
    agent_loop, assistant, image, run_agent, text, thinking, tool_call, tool_result, user,
    user_blocks, validate_events, AbortController, AbortSignal, AfterToolCallHook, Agent,
    AgentError, AgentEvent, AgentHooks, AgentOptions, AgentOutcome, AgentState, AgentStop,
    AgentTool, AssistantMessage, BeforeToolCallHook, ContentBlock, Context, Message, Model,
    ModelEvent, ModelStream, Runtime, ScriptedModel, ScriptedTurn, Smol, StopReason, StreamOptions,
    Subscription, Tool, ToolCallDecision, ToolContext, ToolError, ToolExecution, ToolOutput,
    ToolSet, TransformContextHook, TypedTool,
};

// What `with_retry` takes and returns, and what a subscription yields.
#[allow(unused_imports)]
use agentstream_smol::prelude::{Lagged, RetryModel, RetryPolicy};

#[cfg(feature = "http")]
#[allow(unused_imports)]
use agentstream_smol::prelude::{
    AnthropicConfig, AnthropicModel, AzureConfig, AzureModel, BedrockConfig, BedrockModel,
    GeminiConfig, GeminiModel, MistralConfig, MistralModel, OpenAiCompatModel, OpenAiConfig,
    ResponsesConfig, ResponsesModel,
};

// The bodies name the prelude's items alone (`agentstream_testkit::host`).
agentstream_testkit::prelude_tests!(host: agentstream_smol, runtime: Smol, block_on: smol::block_on);

#[cfg(feature = "http")]
agentstream_testkit::provider_alias_tests!(host: agentstream_smol, test: test);

// The env-reading constructors exist on the aliases.
#[cfg(feature = "http")]
agentstream_testkit::from_env_exists!(agentstream_smol);
