//! The smol adapter: spawned traces equal self-driven ones, timeouts cut
//! calls off mid-stream, and a dropped consumer stops its spawned producer.
//! The scenarios live in `agentstream_testkit::http::adapter_scenarios`; this
//! file runs them on smol.

use std::future::Future;
use std::time::Duration;

use agentstream_smol::agentstream::message::Context;
use agentstream_smol::{Executor, ModelStream, Runtime as _, ScriptedModel, StreamOptions, Timer};
use agentstream_testkit::http::adapter_scenarios::{self as scenarios, AdapterRuntime};

/// One executor shared by the tests; every test thread runs it, so it is
/// multi-threaded while tests run in parallel.
static EXECUTOR: Executor<'static> = Executor::new();

/// The adapter's functions, for the shared scenarios, with producers
/// spawned on [`EXECUTOR`].
struct Smol;

impl AdapterRuntime for Smol {
    fn spawn(stream: ModelStream) -> ModelStream {
        agentstream_smol::spawn_on(&EXECUTOR, stream)
    }

    fn spawn_driver(stream: &mut ModelStream) -> Option<impl Future<Output = ()> + Send + 'static> {
        // A smol task yields `()`; it cannot report a cancellation.
        agentstream_smol::spawn_driver_on(&EXECUTOR, stream)
    }

    fn stream_with_timeout(
        model: &ScriptedModel,
        context: &Context,
        options: StreamOptions,
        timeout: Duration,
    ) -> ModelStream {
        agentstream_smol::Smol.stream_with_timeout(model, context, options, timeout)
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

#[test]
fn a_spawned_producer_gives_the_same_events_and_results_as_a_self_driven_one() {
    run(scenarios::spawned_matches_self_driven::<Smol>());
}

#[test]
fn dropping_the_consumer_stops_the_spawned_producer_task() {
    run(scenarios::dropping_the_consumer_stops_the_spawned_producer::<Smol>());
}

#[test]
fn dropping_a_paced_scripted_call_midway_ends_its_task() {
    run(scenarios::dropping_a_paced_scripted_call_midway_ends_its_task::<Smol>());
}

#[test]
fn a_timeout_cuts_a_call_off_mid_stream_with_the_text_so_far() {
    run(scenarios::a_timeout_cuts_a_call_off_mid_stream::<Smol>());
}

#[test]
fn a_call_that_ends_before_its_timeout_is_untouched() {
    run(scenarios::a_call_that_ends_before_its_timeout_is_untouched::<Smol>());
}

#[test]
fn the_callers_own_signal_still_aborts_a_call_with_a_timeout() {
    run(scenarios::the_callers_own_signal_still_aborts_a_call_with_a_timeout::<Smol>());
}
