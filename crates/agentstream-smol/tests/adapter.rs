//! The smol adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.
//! The scenarios live in `agentstream_testkit::http::adapter_scenarios`; this
//! file runs them on smol.

use std::future::Future;
use std::time::Duration;

use agentstream_smol::{Executor, ModelStream, Timer};
use agentstream_testkit::http::adapter_scenarios::AdapterRuntime;

/// One executor shared by the tests; every test thread runs it, so it is
/// multi-threaded while tests run in parallel.
static EXECUTOR: Executor<'static> = Executor::new();

/// The adapter's functions, for the shared scenarios, with producers
/// spawned on [`EXECUTOR`].
struct Smol;

impl AdapterRuntime for Smol {
    type Rt = agentstream_smol::Smol;
    const RT: Self::Rt = agentstream_smol::Smol;

    fn spawn(stream: ModelStream) -> ModelStream {
        agentstream_smol::spawn_on(&EXECUTOR, stream)
    }

    fn spawn_driver(stream: &mut ModelStream) -> Option<impl Future<Output = ()> + Send + 'static> {
        // A smol task yields `()`; it cannot report a cancellation.
        agentstream_smol::spawn_driver_on(&EXECUTOR, stream)
    }

    async fn sleep(duration: Duration) {
        Timer::after(duration).await;
    }
}

/// Runs `body` on [`EXECUTOR`], with a one-second guard against hangs (it
/// asserts nothing about speed).
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    let guarded = async {
        let body = std::pin::pin!(EXECUTOR.spawn(body));
        let guard = std::pin::pin!(Timer::after(Duration::from_secs(1)));
        match futures_util::future::select(body, guard).await {
            futures_util::future::Either::Left(((), _)) => {}
            futures_util::future::Either::Right(_) => panic!("guard: the test body hung"),
        }
    };
    smol::block_on(EXECUTOR.run(guarded));
}

agentstream_testkit::adapter_scenario_tests!(Smol, run);
