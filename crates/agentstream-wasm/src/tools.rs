//! [`tool_spawner`]: the agent loop's tool calls as tasks of the event
//! loop.

use agentstream::agent::ToolSpawner;

use crate::EventLoop;

/// [`rt::tool_spawner`](agentstream::rt::tool_spawner) on the
/// [`EventLoop`]: every tool call runs as a task of the JavaScript event
/// loop ([`wasm_bindgen_futures::spawn_local`]), so the calls of a turn
/// interleave with each other and with the rest of the page. Dropping the
/// call's future (an abort past its grace period) drops the tool's future
/// at the task's next step.
///
/// On this target a panic aborts the module (`panic = "abort"`), so unlike
/// the native adapters' spawners there is no panicking tool to report.
///
/// ```no_run
/// use agentstream_wasm::agentstream::agent::ToolSet;
///
/// let tools = ToolSet::new().with_spawner(agentstream_wasm::tool_spawner());
/// ```
pub fn tool_spawner() -> ToolSpawner {
    agentstream::rt::tool_spawner(EventLoop)
}
