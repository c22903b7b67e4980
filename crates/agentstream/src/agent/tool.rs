//! Tools: the [`AgentTool`] trait (and its typed form, [`TypedTool`]), what
//! a call gets and what it returns.
//!
//! One trait family serves every host: a tool is [`MaybeSend`] +
//! [`MaybeSync`] and its calls are [`MaybeSend`] futures, which is `Send`
//! on native targets (so a multi-threaded runtime can run the agent, and a
//! [`ToolSpawner`] can run each call as a task) and no bound on `wasm`
//! targets (so a browser tool can hold a `JsValue`).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use super::maybe_send::{BoxFuture, MaybeSend, MaybeSync};
use super::progress::ProgressQueue;
use crate::message::{text, ContentBlock};
use crate::model::{AbortSignal, SharedError};

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
    /// Pi's `terminate` hint: when every result of a turn's batch sets it,
    /// the run asks the model no more about these calls (it goes on only
    /// for queued steering or follow-up messages), as a turn without tool
    /// calls does. Not part of the `toolResult` message; shown as
    /// `terminate: true` in the `tool_execution_end` event's result.
    pub terminate: bool,
}

impl ToolOutput {
    /// A successful result with one text block.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: alloc::vec![text(content)],
            details: None,
            is_error: false,
            terminate: false,
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

    /// The same result with the [`terminate`](Self::terminate) hint set:
    /// the run stops after this batch if every result of it sets the hint.
    ///
    /// ```
    /// use agentstream::agent::ToolOutput;
    /// assert!(ToolOutput::text("done").with_terminate(true).terminate);
    /// ```
    pub fn with_terminate(mut self, terminate: bool) -> Self {
        self.terminate = terminate;
        self
    }
}

/// The `result` of a `tool_execution_end` event: what the call produced,
/// typed. Serializes as Pi's `{content, details, terminate}` (no `details`
/// key when there are none, no `terminate` key unless it is set); whether
/// it is an error is the event's `isError`.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolExecutionResult {
    /// The blocks the model sees.
    pub content: Vec<ContentBlock>,
    /// Data for the application.
    pub details: Option<Value>,
    /// The result's [`terminate`](ToolOutput::terminate) hint.
    pub terminate: bool,
}

impl ToolExecutionResult {
    /// A result of these blocks and details.
    pub fn new(content: Vec<ContentBlock>, details: Option<Value>) -> Self {
        Self {
            content,
            details,
            terminate: false,
        }
    }

    /// The same result with the `terminate` hint set.
    pub fn with_terminate(mut self, terminate: bool) -> Self {
        self.terminate = terminate;
        self
    }
}

impl Serialize for ToolExecutionResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &self.content)?;
        if let Some(details) = &self.details {
            map.serialize_entry("details", details)?;
        }
        if self.terminate {
            map.serialize_entry("terminate", &true)?;
        }
        map.end()
    }
}

/// A tool's failure; the loop turns it into an error `toolResult` whose
/// text is the message and whose `details` are the error's
/// [`details`](Self::details).
///
/// ```
/// use agentstream::agent::ToolError;
/// use core::error::Error;
///
/// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// let error = ToolError::new("README.md: not found")
///     .with_details(serde_json::json!({"path": "README.md"}))
///     .with_source(io);
/// assert_eq!(error.to_string(), "README.md: not found");
/// assert_eq!(error.details().unwrap()["path"], "README.md");
/// assert_eq!(error.source().unwrap().to_string(), "no such file");
/// ```
#[derive(Debug, Clone)]
pub struct ToolError {
    message: String,
    details: Option<Value>,
    source: Option<SharedError>,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            details: None,
            source: None,
        }
    }

    /// The same error with `details` for the application (they become the
    /// result's `details`).
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The same error caused by `source` (its [`source`](core::error::Error::source)).
    pub fn with_source(mut self, source: impl core::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The details, if any.
    pub fn details(&self) -> Option<&Value> {
        self.details.as_ref()
    }

    /// The error result the loop records for this failure.
    pub(crate) fn into_output(self) -> ToolOutput {
        ToolOutput {
            content: alloc::vec![text(self.message)],
            details: self.details,
            is_error: true,
            terminate: false,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn core::error::Error + 'static))
    }
}

/// Deserializes a call's arguments into `T`.
///
/// The error reads `invalid arguments for <tool>: <serde's message>`, with
/// serde's error as its source.
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
    T::deserialize(arguments).map_err(|e| {
        ToolError::new(alloc::format!("invalid arguments for {tool_name}: {e}")).with_source(e)
    })
}

/// Reports a tool's progress; each report becomes a
/// `tool_execution_update` event.
///
/// Reports go through a queue that the loop drains whenever it polls the
/// call (a report wakes it), so a tool running on another thread (see
/// [`ToolSet::with_spawner`](super::ToolSet::with_spawner)) reports in real time too. The queue is
/// unbounded: a tool that reports in a tight loop without yielding buffers
/// its reports until the loop polls it.
pub struct ProgressReporter<'a> {
    pub(crate) sink: Arc<ProgressQueue>,
    pub(crate) _call: PhantomData<&'a ()>,
}

impl ProgressReporter<'_> {
    /// Reports `partial_result`.
    pub fn report(&self, partial_result: Value) {
        // Refused only once the loop stopped listening (the call's result
        // was already decided): nothing is left to report to.
        self.sink.push(partial_result);
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
/// `execute` is an `async fn`; a [`ToolSet`](super::ToolSet) holds tools
/// of different types without the user boxing anything. The tool and its
/// calls' futures must be `Send`/`Sync` on native targets and need not be
/// on `wasm` (see [`MaybeSend`]).
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
pub trait AgentTool: MaybeSend + MaybeSync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of its arguments.
    fn parameters(&self) -> Value;
    /// Whether its calls need the turn's calls to run one after the other
    /// (Pi's `executionMode: "sequential"`): with
    /// [`ToolExecution::Parallel`](super::ToolExecution::Parallel), a
    /// batch holding a call of such a tool runs wholly in sequential
    /// mode, as Pi 0.73.1 does. The default is `false`.
    fn sequential(&self) -> bool {
        false
    }
    /// Rewrites the model's arguments before they are validated (Pi's
    /// `prepareArguments`, for a tool that accepts an older argument
    /// shape, say): `None` (the default) keeps them as they are. The
    /// prepared arguments are what validation checks and `execute` gets;
    /// the events and the history keep the model's.
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        let _ = arguments;
        None
    }
    /// Runs one call.
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + MaybeSend;
}

/// A tool whose arguments are a `serde` type: the loop validates the
/// model's arguments against [`parameters`](Self::parameters) (the schema,
/// given by the tool) and deserializes them into [`Args`](Self::Args);
/// arguments that do not deserialize give an error result reading
/// `invalid arguments for <tool>: …`. Every `TypedTool` is an
/// [`AgentTool`].
///
/// ```
/// use agentstream::agent::{ToolContext, ToolError, ToolOutput, ToolSet, TypedTool};
/// use serde_json::{json, Value};
///
/// #[derive(serde::Deserialize)]
/// struct AddArgs { a: i64, b: i64 }
///
/// struct Add;
/// impl TypedTool for Add {
///     type Args = AddArgs;
///     fn name(&self) -> &str { "add" }
///     fn description(&self) -> &str { "Adds two integers." }
///     fn parameters(&self) -> Value {
///         json!({"type": "object", "required": ["a", "b"],
///                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
///     }
///     async fn call(&self, args: AddArgs, _cx: ToolContext<'_>) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text((args.a + args.b).to_string()))
///     }
/// }
/// let tools = ToolSet::new().with(Add);
/// assert!(tools.contains("add"));
/// ```
pub trait TypedTool: MaybeSend + MaybeSync {
    /// The arguments' type.
    type Args: DeserializeOwned + MaybeSend;
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of [`Args`](Self::Args).
    fn parameters(&self) -> Value;
    /// Whether its calls need sequential execution (see
    /// [`AgentTool::sequential`]).
    fn sequential(&self) -> bool {
        false
    }
    /// Rewrites the model's arguments before validation (see
    /// [`AgentTool::prepare_arguments`]).
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        let _ = arguments;
        None
    }
    /// Runs one call with its deserialized arguments.
    fn call(
        &self,
        args: Self::Args,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + MaybeSend;
}

impl<T: TypedTool> AgentTool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }
    fn description(&self) -> &str {
        TypedTool::description(self)
    }
    fn parameters(&self) -> Value {
        TypedTool::parameters(self)
    }
    fn sequential(&self) -> bool {
        TypedTool::sequential(self)
    }
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        TypedTool::prepare_arguments(self, arguments)
    }
    fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + MaybeSend {
        let parsed = parse_args::<T::Args>(TypedTool::name(self), &args);
        async move {
            match parsed {
                Ok(args) => self.call(args, cx).await,
                Err(error) => Err(error),
            }
        }
    }
}

/// The future of one call of a tool.
pub type ToolFuture<'a> = BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// The future of one call detached from the loop (`'static`, and `Send` on
/// native targets), as a [`ToolSpawner`] receives and returns it.
pub type SendExecution = ToolFuture<'static>;

/// Runs a detached call somewhere else (a runtime's worker threads, for
/// example) and returns a future of its outcome; dropping that future
/// should cancel the call. [`rt::tool_spawner`](crate::rt::tool_spawner)
/// makes one from any runtime's [`Spawn`](crate::rt::Spawn).
pub type ToolSpawner = Arc<dyn Fn(SendExecution) -> SendExecution + Send + Sync>;

/// The object-safe face of an [`AgentTool`].
pub(crate) trait DynTool: MaybeSend + MaybeSync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn sequential(&self) -> bool;
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>>;
    fn execute_boxed<'a>(&'a self, args: Map<String, Value>, cx: ToolContext<'a>)
        -> ToolFuture<'a>;
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
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        AgentTool::prepare_arguments(self, arguments)
    }
    fn execute_boxed<'a>(
        &'a self,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> ToolFuture<'a> {
        alloc::boxed::Box::pin(self.execute(args, cx))
    }
}
