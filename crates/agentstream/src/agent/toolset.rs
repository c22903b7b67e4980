//! [`ToolSet`]: the tools of a run, of any types, looked up by name.

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Value};

use super::tool::{
    AgentTool, DynTool, ProgressReporter, SendExecution, ToolContext, ToolFuture, ToolSpawner,
};
use crate::message::Tool as ToolDefinition;
use crate::model::AbortSignal;

/// Turns a call of a `'static` tool into a detached future for the
/// spawner. Set only by [`ToolSet::with_spawner`], which exists only for
/// `ToolSet<'static>`, so a set of borrowed tools never needs one.
type Detach<'t> = fn(
    Arc<dyn DynTool + 't>,
    Map<String, Value>,
    String,
    AbortSignal,
    ProgressReporter<'static>,
) -> SendExecution;

fn detach(
    tool: Arc<dyn DynTool + 'static>,
    args: Map<String, Value>,
    id: String,
    signal: AbortSignal,
    progress: ProgressReporter<'static>,
) -> SendExecution {
    Box::pin(async move {
        let cx = ToolContext {
            tool_call_id: &id,
            signal,
            progress,
        };
        tool.execute_boxed(args, cx).await
    })
}

/// Tools of any types, looked up by name.
///
/// The tools may borrow (`ToolSet<'t>`); a set of `'static` tools is
/// `Clone` and can run each call through a runtime's
/// [`ToolSpawner`] ([`with_spawner`](Self::with_spawner)). On native
/// targets the set is `Send + Sync` (every [`AgentTool`] is), so a run over
/// it is a `Send` future when the model is `Sync`.
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
/// // Not on `wasm` targets, where `MaybeSend` and `MaybeSync` bound nothing.
/// #[cfg(not(target_family = "wasm"))]
/// {
///     fn is_send_sync<T: Send + Sync>(_: &T) {}
///     is_send_sync(&tools);
/// }
/// ```
pub struct ToolSet<'t> {
    /// Each tool with its parameter schema, asked for once at insertion.
    tools: Vec<(Arc<dyn DynTool + 't>, Value)>,
    spawner: Option<(ToolSpawner, Detach<'t>)>,
}

impl Default for ToolSet<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for ToolSet<'_> {
    fn clone(&self) -> Self {
        Self {
            tools: self.tools.clone(),
            spawner: self.spawner.clone(),
        }
    }
}

impl<'t> ToolSet<'t> {
    /// An empty set.
    pub fn new() -> Self {
        Self {
            tools: Vec::new(),
            spawner: None,
        }
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
        self.tools.push((Arc::new(tool), schema));
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
        self.find(name).is_some()
    }

    /// The names of the tools, in insertion order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|(t, _)| t.name())
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
        self.find(name).map(|(_, schema)| schema)
    }

    /// Whether the tool called `name` needs its turn's calls to run one
    /// after the other ([`AgentTool::sequential`]).
    pub fn sequential(&self, name: &str) -> bool {
        self.find(name).is_some_and(|(t, _)| t.sequential())
    }

    /// The tool called `name`'s rewrite of `arguments` before validation
    /// ([`AgentTool::prepare_arguments`]); `None`: unchanged, or no such
    /// tool.
    pub(crate) fn prepare_arguments(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        self.find(name)
            .and_then(|(t, _)| t.prepare_arguments(arguments))
    }

    fn find(&self, name: &str) -> Option<&(Arc<dyn DynTool + 't>, Value)> {
        self.tools.iter().find(|(t, _)| t.name() == name)
    }

    /// Starts a call of the tool called `name` (`None`: no such tool),
    /// through the spawner if the set has one.
    pub(crate) fn execute<'a>(
        &'a self,
        name: &str,
        args: Map<String, Value>,
        cx: ToolContext<'a>,
    ) -> Option<ToolFuture<'a>> {
        let (tool, _) = self.find(name)?;
        Some(match &self.spawner {
            Some((spawn, detach)) => {
                let detached = detach(
                    Arc::clone(tool),
                    args,
                    cx.tool_call_id.to_owned(),
                    cx.signal.clone(),
                    cx.progress.detach(),
                );
                spawn(detached)
            }
            None => tool.execute_boxed(args, cx),
        })
    }
}

impl ToolSet<'static> {
    /// Runs every call through `spawner` (a runtime's task spawner), so
    /// each call is a task of that runtime, on its threads.
    pub fn with_spawner(mut self, spawner: ToolSpawner) -> Self {
        self.spawner = Some((spawner, detach));
        self
    }
}

impl fmt::Debug for ToolSet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("spawner", &self.spawner.is_some())
            .finish()
    }
}
