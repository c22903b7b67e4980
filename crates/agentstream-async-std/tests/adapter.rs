//! The async-std adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.
//! The scenarios live in `agentstream_testkit::http::adapter_scenarios`; this
//! file runs them on async-std.

use std::future::Future;
use std::time::Duration;

use agentstream_async_std::{ModelStream, Runtime as _};
use agentstream_testkit::http::adapter_scenarios::AdapterRuntime;

/// The adapter's functions, for the shared scenarios.
struct AsyncStd;

impl AdapterRuntime for AsyncStd {
    type Rt = agentstream_async_std::AsyncStd;
    const RT: Self::Rt = agentstream_async_std::AsyncStd;

    fn spawn(stream: ModelStream) -> ModelStream {
        agentstream_async_std::AsyncStd.spawn_stream(stream)
    }

    fn spawn_driver(stream: &mut ModelStream) -> Option<impl Future<Output = ()> + Send + 'static> {
        let task = agentstream_async_std::AsyncStd.spawn_driver(stream)?;
        Some(async move {
            task.await
                .expect("the producer task completes, it is not cancelled");
        })
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        async_std::task::sleep(duration)
    }
}

/// Runs `body` as an async-std task, with a one-second guard against hangs
/// (it asserts nothing about speed).
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    async_std::task::block_on(async {
        async_std::future::timeout(Duration::from_secs(1), async_std::task::spawn(body))
            .await
            .expect("guard: the test body hung");
    });
}

agentstream_testkit::adapter_scenario_tests!(AsyncStd, run);
