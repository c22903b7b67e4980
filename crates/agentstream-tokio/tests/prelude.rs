//! The prelude holds the same names it held before it re-exported
//! `agentstream_wire::prelude`: naming each one fails to compile when one
//! goes missing.

#[allow(unused_imports)]
use agentstream_tokio::prelude::{
    agent_loop, assistant, image, run_agent, text, thinking, tool_call, tool_result, user,
    user_blocks, validate_events, AbortController, AbortSignal, AfterToolCallHook, Agent,
    AgentError, AgentEvent, AgentHooks, AgentOptions, AgentOutcome, AgentState, AgentStop,
    AgentTool, AssistantMessage, BeforeToolCallHook, ContentBlock, Context, Message, Model,
    ModelEvent, ModelStream, Runtime, ScriptedModel, ScriptedTurn, StopReason, StreamOptions,
    Subscription, Tokio, Tool, ToolCallDecision, ToolContext, ToolError, ToolExecution, ToolOutput,
    ToolSet, TransformContextHook, TypedTool,
};

// What `with_retry` takes and returns, and what a subscription yields.
#[allow(unused_imports)]
use agentstream_tokio::prelude::{Lagged, RetryModel, RetryPolicy};

#[cfg(feature = "http")]
#[allow(unused_imports)]
use agentstream_tokio::prelude::{
    AnthropicConfig, AnthropicModel, GeminiConfig, GeminiModel, OpenAiCompatModel, OpenAiConfig,
    ResponsesConfig, ResponsesModel,
};

#[tokio::test]
async fn the_prelude_runs_a_scripted_call() {
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let context = Context::from_messages([user("hello").into()]);
    let mut stream: ModelStream = model.stream(&context, StreamOptions::default());
    let message = stream.result().await;
    assert_eq!(message.text(), "hi");
}

#[tokio::test]
async fn the_runtime_methods_come_with_the_prelude() {
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)])
        .with_pacer(Tokio.pause(std::time::Duration::from_millis(1)));
    let retried = Tokio.with_retry(
        ScriptedModel::new(Vec::<ScriptedTurn>::new()),
        agentstream::model::RetryPolicy::default(),
    );
    assert_eq!(retried.policy().max_retries, 2);
    let context = Context::from_messages([user("hello").into()]);
    let mut stream = Tokio.spawn_stream(model.stream(&context, StreamOptions::default()));
    assert_eq!(stream.result().await.text(), "hi");
}
