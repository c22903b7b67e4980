//! The tokio adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.
//! The scenarios live in `agentstream_testkit::http::adapter_scenarios`; this
//! file runs them on tokio.

use std::future::Future;
use std::time::Duration;

use agentstream_testkit::http::adapter_scenarios::AdapterRuntime;
use agentstream_tokio::{ModelStream, Runtime as _};

/// The adapter's functions, for the shared scenarios.
struct Tokio;

impl AdapterRuntime for Tokio {
    type Rt = agentstream_tokio::Tokio;
    const RT: Self::Rt = agentstream_tokio::Tokio;

    fn spawn(stream: ModelStream) -> ModelStream {
        agentstream_tokio::Tokio.spawn_stream(stream)
    }

    fn spawn_driver(stream: &mut ModelStream) -> Option<impl Future<Output = ()> + Send + 'static> {
        let task = agentstream_tokio::Tokio.spawn_driver(stream)?;
        Some(async move {
            task.await
                .expect("the producer task completes, it is not cancelled");
        })
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        tokio::time::sleep(duration)
    }
}

/// Runs `body` on a fresh multi-thread runtime, with a one-second guard
/// against hangs (it asserts nothing about speed).
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(1), tokio::spawn(body))
            .await
            .expect("guard: the test body hung")
            .unwrap();
    });
}

agentstream_testkit::adapter_scenario_tests!(Tokio, run);
