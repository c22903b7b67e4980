//! [`tool_spawner`]: the agent loop's tool calls as tasks of the event
//! loop.

use std::sync::Arc;

use agentstream::agent::ToolSpawner;
use futures_util::FutureExt;

/// A [`ToolSpawner`] for
/// [`ToolSet::with_spawner`](agentstream::agent::ToolSet::with_spawner):
/// every tool call runs as a task of the JavaScript event loop
/// ([`wasm_bindgen_futures::spawn_local`]), so the calls of a turn
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
    Arc::new(|execution| {
        // The handle resolves to the tool's outcome; dropping it stops the
        // task at its next step.
        let (task, handle) = execution.remote_handle();
        wasm_bindgen_futures::spawn_local(task);
        Box::pin(handle)
    })
}
