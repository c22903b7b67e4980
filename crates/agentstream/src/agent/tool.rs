//! Tools: the [`AgentTool`] trait, what a call gets and returns, and the
//! heterogeneous [`ToolSet`].

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::message::{text, ContentBlock, Tool as ToolDefinition};
use crate::model::AbortSignal;
use crate::Producer;

/// What a tool returns: content blocks for the model (text and images, as
/// a Pi `toolResult`), optional details for the application, and whether
/// it is an error.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The blocks the model sees.
    pub content: Vec<ContentBlock>,
    /// Data for the application, not sent to the model.
    pub details: Option<Value>,
    /// Whether the result reports a failure.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result with one text block.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: alloc::vec![text(content)],
            details: None,
            is_error: false,
        }
    }

    /// An error result with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(message)
        }
    }

    /// The same result with `details` set.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// A tool's failure; the loop turns it into an error `toolResult` whose
/// text is the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for ToolError {}

/// Deserializes a call's arguments into `T`.
///
/// The error reads `invalid arguments for <tool>: <serde's message>`.
///
/// ```
/// use agentstream::agent::parse_args;
/// #[derive(Debug, serde::Deserialize)]
/// struct Read { path: String }
/// let args = serde_json::json!({"path": "README.md"});
/// let read: Read = parse_args("read", args.as_object().unwrap()).unwrap();
/// assert_eq!(read.path, "README.md");
/// let bad = serde_json::json!({"path": 3});
/// let err = parse_args::<Read>("read", bad.as_object().unwrap()).unwrap_err();
/// assert!(err.message().starts_with("invalid arguments for read: "));
/// ```
pub fn parse_args<T: DeserializeOwned>(
    tool_name: &str,
    arguments: &Map<String, Value>,
) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(arguments.clone()))
        .map_err(|e| ToolError::new(alloc::format!("invalid arguments for {tool_name}: {e}")))
}

/// Reports a tool's progress; each report becomes a
/// `tool_execution_update` event.
///
/// Reports go through a channel that the loop drains whenever it polls the
/// call, so a tool running on another thread (see
/// [`SendToolSet::with_spawner`]) reports in real time too. The channel is
/// unbounded: a tool that reports in a tight loop without yielding buffers
/// its reports until the loop polls it.
pub struct ProgressReporter<'a> {
    pub(crate) sink: Arc<Producer<Value, (), Infallible>>,
    pub(crate) _call: PhantomData<&'a ()>,
}

impl ProgressReporter<'_> {
    /// Reports `partial_result`.
    pub fn report(&self, partial_result: Value) {
        // Refused only once the loop stopped listening (the call's result
        // was already decided): nothing is left to report to.
        let _ = self.sink.push(partial_result);
    }

    /// A reporter for the same call that outlives the borrow.
    pub(crate) fn detach<'b>(&self) -> ProgressReporter<'b> {
        ProgressReporter {
            sink: Arc::clone(&self.sink),
            _call: PhantomData,
        }
    }
}

impl fmt::Debug for ProgressReporter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressReporter").finish_non_exhaustive()
    }
}

/// What a running tool call gets besides its arguments.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolContext<'a> {
    /// The call's id.
    pub tool_call_id: &'a str,
    /// Aborts with the run.
    pub signal: AbortSignal,
    /// Reports progress.
    pub progress: ProgressReporter<'a>,
}

/// A tool the agent can call.
///
/// `execute` is an `async fn`; a [`ToolSet`] holds tools of different types
/// without the user boxing anything.
///
/// ```
/// use agentstream::agent::{AgentTool, ToolContext, ToolError, ToolOutput};
/// use serde_json::{json, Map, Value};
///
/// struct Echo;
/// impl AgentTool for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Echoes its text." }
///     fn parameters(&self) -> Value {
///         json!({"type": "object", "properties": {"text": {"type": "string"}}})
///     }
///     async fn execute(&self, args: Map<String, Value>, _cx: ToolContext<'_>)
///         -> Result<ToolOutput, ToolError>
///     {
///         Ok(ToolOutput::text(args.get("text").and_then(Value::as_str).unwrap_or("")))
///     }
/// }
/// ```
pub trait AgentTool {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of its arguments.
    fn parameters(&self) -> Value;
    /// Whether its calls must run alone: with
    /// [`ToolExecution::Parallel`](super::ToolExecution::Parallel), the
    /// calls before it in the turn finish first, it runs by itself, and the
    /// calls after it start once it finished. The default is `false`.
    fn sequential(&self) -> bool {
        false
    }
    /// Runs one call.
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>>;
}

/// A tool whose calls are `Send` futures, so that a runtime adapter can run
/// them on its threads (see [`SendToolSet`]).
///
/// Every `SendAgentTool` is an [`AgentTool`], so it also goes into a plain
/// [`ToolSet`].
///
/// ```
/// use agentstream::agent::{SendAgentTool, SendToolSet, ToolContext, ToolError, ToolOutput};
/// use serde_json::{json, Map, Value};
///
/// struct Clock;
/// impl SendAgentTool for Clock {
///     fn name(&self) -> &str { "clock" }
///     fn description(&self) -> &str { "Says the time." }
///     fn parameters(&self) -> Value { json!({"type": "object"}) }
///     async fn execute(&self, _: Map<String, Value>, _: ToolContext<'_>)
///         -> Result<ToolOutput, ToolError>
///     {
///         Ok(ToolOutput::text("noon"))
///     }
/// }
/// let tools = SendToolSet::new().with(Clock);
/// fn is_send<T: Send + Sync>(_: &T) {}
/// is_send(&tools);
/// ```
pub trait SendAgentTool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of its arguments.
    fn parameters(&self) -> Value;
    /// Whether its calls must run alone (see [`AgentTool::sequential`]).
    fn sequential(&self) -> bool {
        false
    }
    /// Runs one call.
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

impl<T: SendAgentTool> AgentTool for T {
    fn name(&self) -> &str {
        SendAgentTool::name(self)
    }
    fn description(&self) -> &str {
        SendAgentTool::description(self)
    }
    fn parameters(&self) -> Value {
        SendAgentTool::parameters(self)
    }
    fn sequential(&self) -> bool {
        SendAgentTool::sequential(self)
    }
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> {
        SendAgentTool::execute(self, args, cx)
    }
}

type BoxedExecution<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + 'a>>;

/// The object-safe face of an [`AgentTool`].
trait DynTool {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn sequential(&self) -> bool;
    fn execute_boxed<'a>(
        &'a self,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> BoxedExecution<'a>;
}

impl<T: AgentTool> DynTool for T {
    fn name(&self) -> &str {
        AgentTool::name(self)
    }
    fn description(&self) -> &str {
        AgentTool::description(self)
    }
    fn sequential(&self) -> bool {
        AgentTool::sequential(self)
    }
    fn execute_boxed<'a>(
        &'a self,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> BoxedExecution<'a> {
        Box::pin(self.execute(args, cx))
    }
}

/// Tools of any types, looked up by name.
///
/// ```
/// # use agentstream::agent::{AgentTool, ToolContext, ToolError, ToolOutput, ToolSet};
/// # use serde_json::{Map, Value};
/// # struct A; struct B;
/// # impl AgentTool for A { fn name(&self) -> &str { "a" } fn description(&self) -> &str { "" }
/// #   fn parameters(&self) -> Value { Value::Null }
/// #   async fn execute(&self, _: Map<String, Value>, _: ToolContext<'_>) -> Result<ToolOutput, ToolError> { Ok(ToolOutput::text("a")) } }
/// # impl AgentTool for B { fn name(&self) -> &str { "b" } fn description(&self) -> &str { "" }
/// #   fn parameters(&self) -> Value { Value::Null }
/// #   async fn execute(&self, _: Map<String, Value>, _: ToolContext<'_>) -> Result<ToolOutput, ToolError> { Ok(ToolOutput::text("b")) } }
/// let tools = ToolSet::new().with(A).with(B);
/// assert_eq!(tools.len(), 2);
/// assert!(tools.contains("b"));
/// ```
#[derive(Default)]
pub struct ToolSet<'t> {
    /// Each tool with its parameter schema, asked for once at insertion.
    tools: Vec<(Box<dyn DynTool + 't>, Value)>,
}

impl<'t> ToolSet<'t> {
    /// An empty set.
    pub fn new() -> Self {
        Self { tools: Vec::new() }
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn with(mut self, tool: impl AgentTool + 't) -> Self {
        self.insert(tool);
        self
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn insert(&mut self, tool: impl AgentTool + 't) {
        let name = AgentTool::name(&tool).to_string();
        self.tools.retain(|(t, _)| t.name() != name);
        let schema = AgentTool::parameters(&tool);
        self.tools.push((Box::new(tool), schema));
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Whether a tool of this name is in the set.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.iter().any(|(t, _)| t.name() == name)
    }

    /// The tool definitions for the model's context, in insertion order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|(t, schema)| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: schema.clone(),
                extra: Map::new(),
            })
            .collect()
    }

    /// The parameter schema of the tool called `name` (as the tool gave
    /// it when it was added).
    pub fn parameters(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .find(|(t, _)| t.name() == name)
            .map(|(_, schema)| schema)
    }

    fn find(&self, name: &str) -> Option<&(dyn DynTool + 't)> {
        self.tools
            .iter()
            .find(|(t, _)| t.name() == name)
            .map(|(t, _)| &**t)
    }
}

impl Tools for ToolSet<'_> {
    type Execution<'a>
        = BoxedExecution<'a>
    where
        Self: 'a;

    fn definitions(&self) -> Vec<ToolDefinition> {
        ToolSet::definitions(self)
    }

    fn parameters(&self, name: &str) -> Option<&Value> {
        ToolSet::parameters(self, name)
    }

    fn sequential(&self, name: &str) -> bool {
        self.find(name).is_some_and(|t| t.sequential())
    }

    fn execute<'a>(
        &'a self,
        name: &str,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Option<Self::Execution<'a>> {
        self.find(name).map(|t| t.execute_boxed(args, cx))
    }
}

impl fmt::Debug for ToolSet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|(t, _)| t.name()))
            .finish()
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ToolSet<'_> {}
    impl Sealed for super::SendToolSet {}
}

/// A set of tools the loop can run: [`ToolSet`] (any tools) or
/// [`SendToolSet`] (`Send` tools, whose runs are `Send` futures). Sealed.
pub trait Tools: sealed::Sealed {
    /// The future of one call.
    type Execution<'a>: Future<Output = Result<ToolOutput, ToolError>> + 'a
    where
        Self: 'a;
    /// The tool definitions for the model's context, in insertion order.
    fn definitions(&self) -> Vec<ToolDefinition>;
    /// The parameter schema of the tool called `name`.
    fn parameters(&self, name: &str) -> Option<&Value>;
    /// Whether the tool called `name` runs its calls alone.
    fn sequential(&self, name: &str) -> bool;
    /// Starts a call of the tool called `name` (`None`: no such tool).
    fn execute<'a>(
        &'a self,
        name: &str,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Option<Self::Execution<'a>>;
}

/// The future of one call of a `Send` tool, detached from the loop.
pub type SendExecution =
    Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'static>>;

/// Runs a detached call somewhere else (a runtime's worker threads, for
/// example) and returns a future of its outcome; dropping that future
/// should cancel the call. The runtime adapters provide one each
/// (`agentstream_tokio::tool_spawner()`, …).
pub type ToolSpawner = Arc<dyn Fn(SendExecution) -> SendExecution + Send + Sync>;

trait DynSendTool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn sequential(&self) -> bool;
    fn execute_boxed<'a>(
        &'a self,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;
}

impl<T: SendAgentTool> DynSendTool for T {
    fn name(&self) -> &str {
        SendAgentTool::name(self)
    }
    fn description(&self) -> &str {
        SendAgentTool::description(self)
    }
    fn sequential(&self) -> bool {
        SendAgentTool::sequential(self)
    }
    fn execute_boxed<'a>(
        &'a self,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>> {
        Box::pin(SendAgentTool::execute(self, args, cx))
    }
}

/// `Send` tools, looked up by name: a run over them is a `Send` future
/// (when the model and the event callback are `Sync`), and with
/// [`with_spawner`](Self::with_spawner) each call runs as a task of a
/// runtime, on its threads.
#[derive(Default, Clone)]
pub struct SendToolSet {
    /// Each tool with its parameter schema, asked for once at insertion.
    tools: Vec<(Arc<dyn DynSendTool>, Value)>,
    spawner: Option<ToolSpawner>,
}

impl SendToolSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn with(mut self, tool: impl SendAgentTool + 'static) -> Self {
        self.insert(tool);
        self
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn insert(&mut self, tool: impl SendAgentTool + 'static) {
        let name = SendAgentTool::name(&tool).to_string();
        self.tools.retain(|(t, _)| t.name() != name);
        let schema = SendAgentTool::parameters(&tool);
        self.tools.push((Arc::new(tool), schema));
    }

    /// Runs every call through `spawner` (a runtime's task spawner).
    pub fn with_spawner(mut self, spawner: ToolSpawner) -> Self {
        self.spawner = Some(spawner);
        self
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    fn find(&self, name: &str) -> Option<&(Arc<dyn DynSendTool>, Value)> {
        self.tools.iter().find(|(t, _)| t.name() == name)
    }
}

impl Tools for SendToolSet {
    type Execution<'a> = SendExecution;

    fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|(t, schema)| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: schema.clone(),
                extra: Map::new(),
            })
            .collect()
    }

    fn parameters(&self, name: &str) -> Option<&Value> {
        self.find(name).map(|(_, schema)| schema)
    }

    fn sequential(&self, name: &str) -> bool {
        self.find(name).is_some_and(|(t, _)| t.sequential())
    }

    fn execute<'a>(
        &'a self,
        name: &str,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Option<SendExecution> {
        let tool = Arc::clone(&self.find(name)?.0);
        let id = cx.tool_call_id.to_owned();
        let signal = cx.signal.clone();
        let progress = cx.progress.detach();
        let detached: SendExecution = Box::pin(async move {
            let cx = ToolContext {
                tool_call_id: &id,
                signal,
                progress,
            };
            tool.execute_boxed(args, cx).await
        });
        Some(match &self.spawner {
            Some(spawn) => spawn(detached),
            None => detached,
        })
    }
}

impl fmt::Debug for SendToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendToolSet")
            .field(
                "tools",
                &self.tools.iter().map(|(t, _)| t.name()).collect::<Vec<_>>(),
            )
            .field("spawner", &self.spawner.is_some())
            .finish()
    }
}
