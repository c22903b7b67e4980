//! Tools: the [`AgentTool`] trait, what a call gets and returns, and the
//! heterogeneous [`ToolSet`].

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::Pin;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::message::{text, ContentBlock, Tool as ToolDefinition};
use crate::model::AbortSignal;

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
pub struct ProgressReporter<'a> {
    pub(crate) sink: &'a (dyn Fn(Value) + 'a),
}

impl ProgressReporter<'_> {
    /// Reports `partial_result`.
    pub fn report(&self, partial_result: Value) {
        (self.sink)(partial_result);
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
    /// Runs one call.
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>>;
}

type BoxedExecution<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + 'a>>;

/// The object-safe face of an [`AgentTool`].
trait DynTool {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn parameters(&self) -> Value;
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
    fn parameters(&self) -> Value {
        AgentTool::parameters(self)
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
    tools: Vec<Box<dyn DynTool + 't>>,
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
        self.tools.retain(|t| t.name() != name);
        self.tools.push(Box::new(tool));
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
        self.tools.iter().any(|t| t.name() == name)
    }

    /// The tool definitions for the model's context, in insertion order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
                extra: Map::new(),
            })
            .collect()
    }

    /// The parameter schema of the tool called `name`.
    pub fn parameters(&self, name: &str) -> Option<Value> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.parameters())
    }

    pub(crate) fn execute<'a>(
        &'a self,
        name: &str,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Option<BoxedExecution<'a>> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.execute_boxed(args, cx))
    }
}

impl fmt::Debug for ToolSet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
}
