//! [`GatedTool`]: a tool whose calls finish when the test says so.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use serde_json::{json, Map, Value};

use super::maybe_send::MaybeSend;
use super::tool::{AgentTool, ToolContext, ToolError, ToolOutput};
use crate::sync::Lock;

/// A tool whose calls finish only when its [`GateHandle`] releases them,
/// so that a test chooses the order in which parallel calls complete and
/// the exact point where an abort or a steering message lands.
///
/// A call registers its id when it starts and waits. It does not watch the
/// abort signal: after an abort it finishes only if it is released within
/// the grace period (otherwise the loop drops it and records an aborted
/// result).
///
/// ```
/// use agentstream::agent::{run_agent, AgentOptions, GatedTool, ToolOutput, ToolSet};
/// use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
/// use agentstream::model::ScriptedModel;
/// use serde_json::json;
///
/// let (gated, gate) = GatedTool::new("wait");
/// let tools = ToolSet::new().with(gated);
/// let model = ScriptedModel::new([
///     assistant([tool_call("a", "wait", json!({})), tool_call("b", "wait", json!({}))],
///         StopReason::ToolUse),
///     assistant([text("done")], StopReason::Stop),
/// ]);
/// let ends = std::cell::RefCell::new(Vec::new());
/// let run = run_agent(&model, &tools, Context::default(), vec![user("go").into()],
///     AgentOptions::default(), |event| {
///         if let agentstream::agent::AgentEvent::ToolExecutionEnd { tool_call_id, .. } = event {
///             ends.borrow_mut().push(tool_call_id);
///         }
///     });
/// let test = async {
///     gate.started(2).await;              // both calls are running
///     gate.release("b", ToolOutput::text("second"));
///     gate.finished("b").await;           // b has ended
///     gate.release("a", ToolOutput::text("first"));
/// };
/// futures_executor::block_on(futures_util::future::join(run, test));
/// assert_eq!(*ends.borrow(), ["b", "a"]); // completion order, chosen by the test
/// ```
pub struct GatedTool {
    name: String,
    description: String,
    parameters: Value,
    sequential: bool,
    shared: Arc<Lock<GateState>>,
}

/// Releases the calls of a [`GatedTool`] and watches them start.
#[derive(Clone)]
pub struct GateHandle {
    shared: Arc<Lock<GateState>>,
}

#[derive(Default)]
struct GateState {
    /// Ids of the calls that started, in start order.
    started: Vec<String>,
    /// Outcomes released for calls (started or not yet).
    released: BTreeMap<String, Result<ToolOutput, ToolError>>,
    /// The waker of each waiting call.
    calls: BTreeMap<String, Waker>,
    /// Ids of the calls that picked up their outcome, in that order.
    finished: Vec<String>,
    /// Tasks waiting in [`GateHandle::started`] or
    /// [`GateHandle::finished`].
    watchers: Vec<Waker>,
}

impl GatedTool {
    /// A gated tool called `name` that accepts any object, and its handle.
    pub fn new(name: impl Into<String>) -> (Self, GateHandle) {
        let shared = Arc::new(Lock::new(GateState::default()));
        let name = name.into();
        let tool = Self {
            description: alloc::format!("{name}: finishes when the test releases it."),
            name,
            parameters: json!({"type": "object"}),
            sequential: false,
            shared: Arc::clone(&shared),
        };
        (tool, GateHandle { shared })
    }

    /// The same tool with this parameter schema.
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// The same tool, flagged as needing its turn's calls to run one after
    /// the other ([`AgentTool::sequential`]).
    pub fn sequential(mut self) -> Self {
        self.sequential = true;
        self
    }
}

impl GateHandle {
    /// Completes the call `call_id` with `output` (now if it is running,
    /// or as soon as it starts).
    pub fn release(&self, call_id: &str, output: ToolOutput) {
        self.settle(call_id, Ok(output));
    }

    /// Makes the call `call_id` fail with `error`.
    pub fn fail(&self, call_id: &str, error: ToolError) {
        self.settle(call_id, Err(error));
    }

    fn settle(&self, call_id: &str, outcome: Result<ToolOutput, ToolError>) {
        let waker = self.shared.with(|state| {
            state.released.insert(call_id.to_string(), outcome);
            state.calls.remove(call_id)
        });
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The ids of the calls that have started so far, in start order.
    pub fn started_ids(&self) -> Vec<String> {
        self.shared.with(|state| state.started.clone())
    }

    /// Waits until at least `count` calls have started.
    pub fn started(&self, count: usize) -> impl Future<Output = ()> + '_ {
        self.until(move |state| state.started.len() >= count)
    }

    /// Waits until the call `call_id` has picked up its released outcome
    /// (the loop then reports its `tool_execution_end` in the same poll).
    pub fn finished<'a>(&'a self, call_id: &'a str) -> impl Future<Output = ()> + 'a {
        self.until(move |state| state.finished.iter().any(|id| id == call_id))
    }

    fn until<'a>(
        &'a self,
        done: impl Fn(&GateState) -> bool + 'a,
    ) -> impl Future<Output = ()> + 'a {
        futures_util::future::poll_fn(move |cx| {
            self.shared.with(|state| {
                if done(state) {
                    Poll::Ready(())
                } else {
                    if !state.watchers.iter().any(|w| w.will_wake(cx.waker())) {
                        state.watchers.push(cx.waker().clone());
                    }
                    Poll::Pending
                }
            })
        })
    }
}

impl AgentTool for GatedTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> Value {
        self.parameters.clone()
    }
    fn sequential(&self) -> bool {
        self.sequential
    }
    fn execute(
        &self,
        _args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + MaybeSend {
        let watchers = self.shared.with(|state| {
            state.started.push(cx.tool_call_id.to_string());
            core::mem::take(&mut state.watchers)
        });
        for watcher in watchers {
            watcher.wake();
        }
        GateWait {
            shared: Arc::clone(&self.shared),
            id: cx.tool_call_id.to_string(),
        }
    }
}

/// A call waiting for its release.
struct GateWait {
    shared: Arc<Lock<GateState>>,
    id: String,
}

impl Future for GateWait {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let polled = this
            .shared
            .with(|state| match state.released.remove(&this.id) {
                Some(outcome) => {
                    state.finished.push(this.id.clone());
                    Poll::Ready((outcome, core::mem::take(&mut state.watchers)))
                }
                None => {
                    state.calls.insert(this.id.clone(), cx.waker().clone());
                    Poll::Pending
                }
            });
        polled.map(|(outcome, watchers)| {
            for watcher in watchers {
                watcher.wake();
            }
            outcome
        })
    }
}

impl Drop for GateWait {
    fn drop(&mut self) {
        let id = &self.id;
        self.shared.with(|state| {
            state.calls.remove(id);
        });
    }
}

impl fmt::Debug for GatedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatedTool")
            .field("name", &self.name)
            .field("sequential", &self.sequential)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for GateHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GateHandle")
            .field("started", &self.started_ids())
            .finish_non_exhaustive()
    }
}
