//! Two scripted turns on async-std (discontinued upstream; prefer smol): the first plays to its end, the second is a
//! slow (paced, chunked) turn that a short timeout cuts off.
//!
//! Run with `cargo run -p agentstream-async-std --example async_std_turns`.

use std::num::NonZeroUsize;
use std::time::Duration;

use agentstream_async_std::prelude::*;
use futures_util::StreamExt;

fn main() {
    async_std::task::block_on(run());
}

async fn run() {
    let model = ScriptedModel::new([
        ScriptedTurn::message(assistant(
            [text("Hello! How can I help?")],
            StopReason::Stop,
        )),
        ScriptedTurn::message(assistant(
            [text(
                "Here is a long, slow answer that will not finish in time.",
            )],
            StopReason::Stop,
        ))
        .chunked(NonZeroUsize::new(12).unwrap()),
    ])
    .with_pacer(AsyncStd.pause(Duration::from_millis(40)));
    let context = Context::from_messages([user("hi").into()]);

    println!("turn 1 (spawned producer):");
    let first = AsyncStd.spawn_stream(model.stream(&context, StreamOptions::default()));
    print_call(first).await;

    println!("turn 2 (150 ms timeout, 40 ms between deltas):");
    let options = StreamOptions::default();
    let second =
        AsyncStd.stream_with_timeout(&model, &context, options, Duration::from_millis(150));
    print_call(second).await;
}

async fn print_call(mut stream: ModelStream) {
    let mut events: Vec<ModelEvent> = Vec::new();
    while let Some(event) = stream.next().await {
        println!("  {}", event.type_name());
        events.push(event);
    }
    assert!(validate_events(&events).is_empty(), "the trace is valid");
    let result = stream.result().await;
    println!(
        "  => stop reason {:?}, text {:?}, error {:?}",
        result.stop_reason,
        result.text(),
        result.error_message
    );
}
