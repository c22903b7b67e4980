//! The streams with the combinators and utilities users reach for:
//! `futures_util::StreamExt`, `tokio_stream::StreamExt::timeout`,
//! `tokio::select!`, and `join_all` over many results.
#![cfg(not(loom))]

#[path = "common/models.rs"]
mod models;

use std::future::Future;
use std::time::Duration;

use agentstream::message::{assistant, text, StopReason};
use agentstream::model::{
    AbortController, Model, ModelEvent, ScriptedModel, ScriptedTurn, StreamOptions,
};
use agentstream::rt::Runtime as _;
use futures_util::future::join_all;
use futures_util::StreamExt;
use models::{assert_valid, context, play, slow_turn, stalling_pacer, tool_turn, types};

/// Runs `body` on a 2-worker tokio runtime, with a one-second hang guard.
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(1), tokio::spawn(body))
            .await
            .expect("guard: the body hung")
            .unwrap();
    });
}

fn two_turn_model() -> ScriptedModel {
    ScriptedModel::new([
        tool_turn(),
        assistant([text("A"), text("B")], StopReason::Stop),
    ])
}

#[test]
fn futures_stream_ext_next_map_take_and_select() {
    run(async {
        let model = two_turn_model();
        let mut stream = agentstream_tokio::Tokio
            .spawn_stream(model.stream(&context("x"), StreamOptions::default()));
        assert_eq!(stream.next().await.map(|e| e.type_name()), Some("start"));
        let two: Vec<_> = stream
            .by_ref()
            .map(|e| e.type_name())
            .take(2)
            .collect()
            .await;
        assert_eq!(two, ["text_delta", "toolcall_delta"]);
        let rest: Vec<_> = stream.by_ref().map(|e| e.type_name()).collect().await;
        assert_eq!(rest, ["toolcall_end", "done"]);
        assert!(stream.next().await.is_none(), "fused after the end");

        // `select` interleaves two calls; each one's own order survives.
        let model = two_turn_model();
        let first = model.stream(&context("a"), StreamOptions::default());
        let second = agentstream_tokio::Tokio
            .spawn_stream(model.stream(&context("b"), StreamOptions::default()));
        let tagged = futures_util::stream::select(first.map(|e| (0, e)), second.map(|e| (1, e)));
        let merged: Vec<(usize, ModelEvent)> = tagged.collect().await;
        for call in 0..2 {
            let trace: Vec<ModelEvent> = merged
                .iter()
                .filter(|(c, _)| *c == call)
                .map(|(_, e)| e.clone())
                .collect();
            assert_valid(&trace);
        }
        assert_eq!(merged.len(), 5 + 4);
    });
}

#[test]
fn tokio_stream_timeout_reports_a_stall_and_the_call_can_still_be_aborted() {
    run(async {
        let model = ScriptedModel::new([slow_turn()]).with_pacer(stalling_pacer(1));
        let controller = AbortController::new();
        let options = StreamOptions::default().with_signal(controller.signal());
        let stream = agentstream_tokio::Tokio.spawn_stream(model.stream(&context("x"), options));
        let mut timed = std::pin::pin!(tokio_stream::StreamExt::timeout(
            stream,
            Duration::from_millis(20)
        ));
        let mut events = Vec::new();
        let mut stalls = 0;
        while let Some(item) = timed.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(_elapsed) => {
                    stalls += 1;
                    controller.abort(); // the producer stalled: give up
                }
            }
        }
        assert!(stalls >= 1, "the stall was reported");
        assert_eq!(
            types(&events),
            ["start", "text_delta", "text_delta", "error"]
        );
        assert_valid(&events);
    });
}

#[test]
fn tokio_select_over_two_model_streams() {
    run(async {
        let model = two_turn_model();
        let mut first = agentstream_tokio::Tokio
            .spawn_stream(model.stream(&context("a"), StreamOptions::default()));
        let mut second = agentstream_tokio::Tokio
            .spawn_stream(model.stream(&context("b"), StreamOptions::default()));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut a_done, mut b_done) = (false, false);
        while !(a_done && b_done) {
            tokio::select! {
                event = first.next(), if !a_done => match event {
                    Some(event) => a.push(event),
                    None => a_done = true,
                },
                event = second.next(), if !b_done => match event {
                    Some(event) => b.push(event),
                    None => b_done = true,
                },
            }
        }
        assert_valid(&a);
        assert_valid(&b);
        assert_eq!(first.result().await, tool_turn());
        assert_eq!(second.result().await.text(), "AB");
    });
}

#[test]
fn join_all_over_many_results_and_result_handles() {
    run(async {
        const CALLS: usize = 50;
        let model = ScriptedModel::new((0..CALLS).map(|n| {
            ScriptedTurn::message(assistant([text(format!("answer {n}"))], StopReason::Stop))
        }));
        // Self-driven streams: `result()` drives each producer.
        let mut streams: Vec<_> = (0..CALLS / 2)
            .map(|_| model.stream(&context("x"), StreamOptions::default()))
            .collect();
        let results = join_all(streams.iter_mut().map(|s| s.result())).await;
        // Spawned streams: detached handles, several per call.
        let spawned: Vec<_> = (0..CALLS / 2)
            .map(|_| {
                agentstream_tokio::Tokio
                    .spawn_stream(model.stream(&context("y"), StreamOptions::default()))
            })
            .collect();
        let handles = spawned
            .iter()
            .flat_map(|s| [s.result_handle(), s.result_handle()]);
        let handled = join_all(handles).await;
        let texts: Vec<String> = results
            .iter()
            .chain(handled.iter().step_by(2))
            .map(|m| m.text())
            .collect();
        let expected: Vec<String> = (0..CALLS).map(|n| format!("answer {n}")).collect();
        assert_eq!(texts, expected);
        assert!(handled.chunks(2).all(|pair| pair[0] == pair[1]));
        for mut stream in streams.into_iter().chain(spawned) {
            play(&mut stream).await; // the events stay readable and valid
        }
    });
}
