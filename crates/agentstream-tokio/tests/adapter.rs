//! The tokio adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.
//! The scenarios live in `agentstream_testkit::http::adapter_scenarios`; this
//! file runs them on tokio.

use std::future::Future;
use std::time::Duration;

use agentstream_testkit::http::adapter_scenarios::{self as scenarios, AdapterRuntime};
use agentstream_tokio::agentstream::message::Context;
use agentstream_tokio::{ModelStream, Runtime as _, ScriptedModel, StreamOptions};

/// The adapter's functions, for the shared scenarios.
struct Tokio;

impl AdapterRuntime for Tokio {
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

    fn stream_with_timeout(
        model: &ScriptedModel,
        context: &Context,
        options: StreamOptions,
        timeout: Duration,
    ) -> ModelStream {
        agentstream_tokio::Tokio.stream_with_timeout(model, context, options, timeout)
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

#[test]
fn a_spawned_producer_gives_the_same_events_and_results_as_a_self_driven_one() {
    run(scenarios::spawned_matches_self_driven::<Tokio>());
}

#[test]
fn dropping_the_consumer_stops_the_spawned_producer_task() {
    run(scenarios::dropping_the_consumer_stops_the_spawned_producer::<Tokio>());
}

#[test]
fn dropping_a_paced_scripted_call_midway_ends_its_task() {
    run(scenarios::dropping_a_paced_scripted_call_midway_ends_its_task::<Tokio>());
}

#[test]
fn a_timeout_cuts_a_call_off_mid_stream_with_the_text_so_far() {
    run(scenarios::a_timeout_cuts_a_call_off_mid_stream::<Tokio>());
}

#[test]
fn a_call_that_ends_before_its_timeout_is_untouched() {
    run(scenarios::a_call_that_ends_before_its_timeout_is_untouched::<Tokio>());
}

#[test]
fn the_callers_own_signal_still_aborts_a_call_with_a_timeout() {
    run(scenarios::the_callers_own_signal_still_aborts_a_call_with_a_timeout::<Tokio>());
}
