//! [`tool_spawner`]: the agent loop's tool calls as tasks of the event
//! loop.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use agentstream::agent::{ToolError, ToolOutput, ToolSpawner};
use futures_util::future::{abortable, AbortHandle};
use futures_util::task::AtomicWaker;

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
        let (execution, abort) = abortable(execution);
        let slot = Arc::new(Slot::default());
        let filled = Arc::clone(&slot);
        wasm_bindgen_futures::spawn_local(async move {
            // `Err`: aborted, because nobody waits for the outcome.
            if let Ok(outcome) = execution.await {
                *filled
                    .outcome
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(outcome);
                filled.waker.wake();
            }
        });
        Box::pin(ToolTask { slot, abort })
    })
}

/// Where a spawned tool call leaves its outcome.
#[derive(Default)]
struct Slot {
    outcome: Mutex<Option<Result<ToolOutput, ToolError>>>,
    waker: AtomicWaker,
}

/// The future [`tool_spawner`] hands back: the outcome of the spawned call;
/// dropping it aborts the call.
struct ToolTask {
    slot: Arc<Slot>,
    abort: AbortHandle,
}

impl ToolTask {
    fn take(&self) -> Option<Result<ToolOutput, ToolError>> {
        self.slot
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl Future for ToolTask {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(outcome) = self.take() {
            return Poll::Ready(outcome);
        }
        self.slot.waker.register(cx.waker());
        match self.take() {
            Some(outcome) => Poll::Ready(outcome),
            None => Poll::Pending,
        }
    }
}

impl Drop for ToolTask {
    fn drop(&mut self) {
        self.abort.abort();
    }
}
