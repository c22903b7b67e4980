//! [`Rt`]: the handle a body uses to start concurrent tasks without knowing
//! which executor runs it.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;
use core::future::Future;

use agentstream::model::ModelStream;
use futures_util::future;

/// A boxed, sendable unit future: what an [`Rt`] spawns, and the join
/// future it hands back.
/// `Send` on native targets, not required on `wasm` targets (where the
/// agent's hooks and tools need not be `Send`: see
/// [`MaybeSend`](agentstream::agent::MaybeSend)).
pub type BoxFut = agentstream::agent::BoxFuture<'static, ()>;

type SpawnFn = dyn Fn(BoxFut) -> BoxFut + Send + Sync;
type SpawnModelFn = dyn Fn(&mut ModelStream) -> BoxFut + Send + Sync;

/// Starts tasks on the executor under test.
///
/// A host builds one with [`Rt::new`] (a spawn that returns a join
/// future), [`Rt::detached`] (a spawn that returns nothing: the join comes
/// from a completion signal), or [`Rt::inline`] (no tasks at all: a
/// "spawned" future runs inside the task that awaits its join future).
/// Bodies always await a join future concurrently with their own work
/// (`join`), so the same body is correct on all three.
///
/// ```
/// use agentstream_testkit::conformance::Rt;
///
/// // The single-task host: every "task" runs when its join is awaited.
/// futures_executor::block_on(agentstream_testkit::conformance::events_keep_push_order(Rt::inline()));
/// ```
#[derive(Clone)]
pub struct Rt {
    spawn: Arc<SpawnFn>,
    /// Spawns a model stream's driver; `None` leaves streams self-driven.
    spawn_model: Option<Arc<SpawnModelFn>>,
}

impl fmt::Debug for Rt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rt")
            .field("spawns_model_drivers", &self.spawn_model.is_some())
            .finish_non_exhaustive()
    }
}

impl Rt {
    /// An `Rt` whose `spawn(future)` starts `future` as a task and returns
    /// a future that completes when the task has (and panics if the task
    /// failed). Model streams drive themselves until
    /// [`with_model_spawner`](Self::with_model_spawner) says otherwise.
    pub fn new(spawn: impl Fn(BoxFut) -> BoxFut + Send + Sync + 'static) -> Self {
        Self {
            spawn: Arc::new(spawn),
            spawn_model: None,
        }
    }

    /// An `Rt` whose "tasks" run inside the awaiting task, and whose model
    /// streams drive themselves: for single-task executors.
    pub fn inline() -> Self {
        Self::new(|future| future)
    }

    /// An `Rt` over a spawn that hands back no join handle (embassy's
    /// task pools, `wasm_bindgen_futures::spawn_local`): each task signals
    /// its completion through the core's own event stream, which the join
    /// future awaits. Model streams' drivers are spawned the same way.
    ///
    /// A task dropped before it completes (a cancelled executor) makes its
    /// join future panic.
    pub fn detached(spawn: impl Fn(BoxFut) + Send + Sync + 'static) -> Self {
        let spawn = Arc::new(spawn);
        let drivers = Arc::clone(&spawn);
        Self::new(move |future| {
            let (task, join) = joinable(future);
            spawn(task);
            join
        })
        .with_model_spawner(move |stream| match stream.take_driver() {
            Some(driver) => {
                let (task, join) = joinable(driver);
                drivers(task);
                join
            }
            None => ready(),
        })
    }

    /// Spawns model streams' drivers with `spawn_model` (for example
    /// through a runtime adapter's `spawn_driver`), which returns a future
    /// that completes when the driver has stopped.
    #[must_use]
    pub fn with_model_spawner(
        mut self,
        spawn_model: impl Fn(&mut ModelStream) -> BoxFut + Send + Sync + 'static,
    ) -> Self {
        self.spawn_model = Some(Arc::new(spawn_model));
        self
    }

    /// Starts `future` and returns a future that completes with it. Await
    /// the returned future (concurrently with other work, e.g. with `join`),
    /// since on single-task executors that is what runs it.
    pub fn spawn(
        &self,
        future: impl Future<Output = ()> + agentstream::agent::MaybeSend + 'static,
    ) -> BoxFut {
        (self.spawn)(Box::pin(future))
    }

    /// Spawns the stream's driver as a task where the host has tasks for
    /// drivers; returns the stream and a future that completes when the
    /// producer has stopped (at once for a self-driven stream).
    pub fn spawn_model(&self, mut stream: ModelStream) -> (ModelStream, BoxFut) {
        let join = match &self.spawn_model {
            Some(spawn) => spawn(&mut stream),
            None => ready(),
        };
        (stream, join)
    }
}

/// An already completed join future.
pub fn ready() -> BoxFut {
    Box::pin(future::ready(()))
}

/// Splits `future` into a task to spawn and a join future that completes
/// once the task has run `future` to its end.
///
/// The completion signal is the core's event stream: the task finishes it,
/// the join awaits its result. A task dropped before completing drops the
/// producer, and the join panics with "the spawned task was dropped".
pub fn joinable(future: BoxFut) -> (BoxFut, BoxFut) {
    let (done, stream) = agentstream::channel::<(), (), ()>();
    let result = stream.result();
    drop(stream);
    let task = Box::pin(async move {
        future.await;
        // Nobody awaiting the join is fine: the task still completed.
        let _ = done.finish(());
    });
    let join = Box::pin(async move {
        if result.await.is_err() {
            panic!("the spawned task was dropped before it completed");
        }
    });
    (task, join)
}
