//! What the native hosts' examples and agent tests share (tokio, smol and
//! async-std): the example program, written once against
//! [`Runtime`], and the tool and helpers of the hosts' agent-loop tests.
//!
//! Each host keeps only what differs: how its runtime is entered, which
//! runtime value it passes, and the assertions particular to it (worker
//! threads on tokio, a timer-driven tool on async-std).

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use agentstream::agent::{
    run_agent, AgentOptions, AgentOutcome, AgentStop, ToolContext, ToolError, ToolOutput, ToolSet,
    ToolSpawner, TypedTool, TOOL_ABORTED_MESSAGE,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, Context, Message, StopReason,
    ToolResultMessage,
};
use agentstream::model::{
    validate_events, AbortController, Model, ModelEvent, ModelStream, ScriptedModel, ScriptedTurn,
    StreamOptions,
};
use agentstream::rt::Runtime;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

/// The hosts' example (`examples/<host>_turns.rs`): two scripted turns on
/// `rt`, printed event by event. The first plays to its end with its
/// producer spawned; the second is a slow turn (twelve-character deltas,
/// 40 ms apart) that a 150 ms timeout cuts off.
pub async fn two_turns<R>(rt: R)
where
    R: Runtime + Clone + Send + Sync + 'static,
    R::Sleep: Send,
{
    let model = ScriptedModel::new([
        ScriptedTurn::message(assistant(
            [text("Hello! How can I help?")],
            StopReason::Stop,
        )),
        ScriptedTurn::message(assistant(
            [text(
                "Here is a long, slow answer that will not finish in time.",
            )],
            StopReason::Stop,
        ))
        .chunked(NonZeroUsize::new(12).expect("12 is not zero")),
    ])
    .with_pacer(rt.pause(Duration::from_millis(40)));
    let context = Context::from_messages([user("hi").into()]);

    println!("turn 1 (spawned producer):");
    let first = rt.spawn_stream(model.stream(&context, StreamOptions::default()));
    print_call(first).await;

    println!("turn 2 (150 ms timeout, 40 ms between deltas):");
    let options = StreamOptions::default();
    let second = rt.stream_with_timeout(&model, &context, options, Duration::from_millis(150));
    print_call(second).await;
}

/// Prints each event's type, checks the trace, then prints the result.
async fn print_call(mut stream: ModelStream) {
    let mut events: Vec<ModelEvent> = Vec::new();
    while let Some(event) = stream.next().await {
        println!("  {}", event.type_name());
        events.push(event);
    }
    assert!(validate_events(&events).is_empty(), "the trace is valid");
    let result = stream.result().await;
    println!(
        "  => stop reason {:?}, text {:?}, error {:?}",
        result.stop_reason,
        result.text(),
        result.error_message
    );
}

/// A tool named `probe` that records the thread of each of its calls
/// and, with `hang`, never finishes by itself (only an abort ends it).
#[derive(Clone, Default)]
pub struct Probe {
    /// The thread of each call so far, in call order.
    pub threads: Arc<Mutex<Vec<ThreadId>>>,
    /// Whether a call waits forever after recording its thread.
    pub hang: bool,
}

impl Probe {
    /// A probe whose calls answer `here` at once.
    pub fn new() -> Self {
        Self::default()
    }

    /// A probe whose calls never finish by themselves.
    pub fn hanging() -> Self {
        Self {
            hang: true,
            ..Self::default()
        }
    }

    /// How many calls have started.
    pub fn calls(&self) -> usize {
        self.threads.lock().map_or(0, |threads| threads.len())
    }
}

impl TypedTool for Probe {
    type Args = Map<String, Value>;

    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "Records the thread it runs on."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _: Self::Args, _: ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        if let Ok(mut threads) = self.threads.lock() {
            threads.push(std::thread::current().id());
        }
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(ToolOutput::text("here"))
    }
}

/// Two turns: two `probe` calls (`a`, `b`) at once, then the answer `done`.
pub fn probe_model() -> ScriptedModel {
    ScriptedModel::new([
        assistant(
            [
                tool_call("a", "probe", json!({})),
                tool_call("b", "probe", json!({})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ])
}

/// Each tool result of `messages`, borrowed: its call id, its first
/// block's text (empty without one) and whether it is an error.
pub fn tool_results(messages: &[Message]) -> Vec<(&str, &str, bool)> {
    fn result(message: &Message) -> Option<&ToolResultMessage> {
        match message {
            Message::ToolResult(r) => Some(r),
            _ => None,
        }
    }
    messages
        .iter()
        .filter_map(result)
        .map(|r| {
            let text = r.content.first().and_then(|block| block.as_text());
            (r.tool_call_id.as_str(), text.unwrap_or(""), r.is_error)
        })
        .collect()
}

/// Runs the agent loop on `model` and `tools` from an empty context with
/// the prompt `go`, ignoring its events.
pub async fn run_go(model: &dyn Model, tools: &ToolSet<'_>, options: AgentOptions) -> AgentOutcome {
    run_agent(
        model,
        tools,
        Context::default(),
        vec![user("go").into()],
        options,
        |_| {},
    )
    .await
}

/// Runs `run` and, beside it, aborts `controller` once `started` says so
/// (polled between yields); returns what `run` returns.
pub async fn abort_once<F: Future>(
    run: F,
    controller: &AbortController,
    started: impl Fn() -> bool,
) -> F::Output {
    let abort = async {
        while !started() {
            agentstream::yield_now().await;
        }
        controller.abort();
    };
    futures_util::future::join(run, abort).await.0
}

/// Runs the agent loop on [`probe_model`] with `probe` as its one tool,
/// each call spawned by `spawner`, and checks the history's linkage;
/// returns the outcome and how many model calls were made.
pub async fn run_probes(
    probe: &Probe,
    spawner: ToolSpawner,
    options: AgentOptions,
) -> (AgentOutcome, usize) {
    let tools = ToolSet::new().with(probe.clone()).with_spawner(spawner);
    let model = probe_model();
    let outcome = run_go(&model, &tools, options).await;
    assert!(validate_linkage(&outcome.messages).is_empty());
    (outcome, model.calls())
}

/// The grace period on `rt`'s timer: two hanging `probe` calls, spawned
/// on `rt`, are still running when the run is aborted; after a 20 ms grace
/// both get the aborted result and the run ends `Aborted` after one model
/// call.
pub async fn a_hung_tool_is_aborted_after_the_grace<R>(rt: R)
where
    R: Runtime + Clone + Send + Sync + 'static,
    R::Sleep: Send,
{
    let probe = Probe::hanging();
    let controller = AbortController::new();
    let options = AgentOptions::default()
        .with_signal(controller.signal())
        .with_abort_grace(rt.pause(Duration::from_millis(20)));
    let run = run_probes(&probe, rt.tool_spawner(), options);
    let (outcome, model_calls) = abort_once(run, &controller, || probe.calls() >= 2).await;
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(model_calls, 1);
    let results: Vec<(&str, bool)> = tool_results(&outcome.messages)
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect();
    assert_eq!(results, [(TOOL_ABORTED_MESSAGE, true); 2]);
}

/// The names a native host's prelude holds, each imported from
/// `$host::prelude` so that the calling test fails to compile when one goes
/// missing: the core's, the host's runtime type `$rt`, what `with_retry`
/// takes and returns, what a subscription yields and, under the calling
/// crate's `http` feature, the provider configurations and models.
///
/// ```text
/// agentstream_testkit::prelude_names!(host: agentstream_smol, runtime: Smol);
/// ```
#[macro_export]
macro_rules! prelude_names {
    (host: $host:ident, runtime: $rt:ident $(,)?) => {
        #[allow(unused_imports)]
        use $host::prelude::{
            agent_loop, assistant, image, run_agent, text, thinking, tool_call, tool_result, user,
            user_blocks, validate_events, $rt, AbortController, AbortSignal, AfterToolCallHook,
            Agent, AgentError, AgentEvent, AgentHooks, AgentOptions, AgentOutcome, AgentState,
            AgentStop, AgentTool, AssistantMessage, BeforeToolCallHook, ContentBlock, Context,
            Lagged, Message, Model, ModelEvent, ModelStream, RetryModel, RetryPolicy, Runtime,
            ScriptedModel, ScriptedTurn, StopReason, StreamOptions, Subscription, Tool,
            ToolCallDecision, ToolContext, ToolError, ToolExecution, ToolOutput, ToolSet,
            TransformContextHook, TypedTool,
        };

        #[cfg(feature = "http")]
        #[allow(unused_imports)]
        use $host::prelude::{
            AnthropicConfig, AnthropicModel, AzureConfig, AzureModel, BedrockConfig, BedrockModel,
            GeminiConfig, GeminiModel, MistralConfig, MistralModel, OpenAiCompatModel,
            OpenAiConfig, ResponsesConfig, ResponsesModel,
        };
    };
}

/// A native host's two prelude tests: a scripted call played with the
/// prelude's names alone, and the runtime's methods (`pause`,
/// `with_retry`, `spawn_stream`) called on its runtime value through the
/// prelude's `Runtime`. `block_on` runs a future to its end on the host's
/// runtime (with its timer).
///
/// ```text
/// agentstream_testkit::prelude_tests!(host: agentstream_smol, runtime: Smol, block_on: smol::block_on);
/// ```
#[macro_export]
macro_rules! prelude_tests {
    (host: $host:ident, runtime: $rt:ident, block_on: $block_on:path $(,)?) => {
        #[test]
        fn the_prelude_runs_a_scripted_call() {
            use $host::prelude::*;
            let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
            let context = Context::from_messages([user("hello").into()]);
            let mut stream: ModelStream = model.stream(&context, StreamOptions::default());
            let message = $block_on(stream.result());
            assert_eq!(message.text(), "hi");
        }

        #[test]
        fn the_runtime_methods_come_with_the_prelude() {
            use $host::prelude::*;
            let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)])
                .with_pacer($rt.pause(::std::time::Duration::from_millis(1)));
            let retried = $rt.with_retry(
                ScriptedModel::new(Vec::<ScriptedTurn>::new()),
                $host::agentstream::model::RetryPolicy::default(),
            );
            assert_eq!(retried.policy().max_retries, 2);
            let context = Context::from_messages([user("hello").into()]);
            let message = $block_on(async {
                let mut stream = $rt.spawn_stream(model.stream(&context, StreamOptions::default()));
                stream.result().await
            });
            assert_eq!(message.text(), "hi");
        }
    };
}
