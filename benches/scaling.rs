//! Costs per item at 1,000 and at 40,000 items, for the three places an
//! adversarial pass found quadratic: linear cost keeps the two equal (the
//! target: the ratio 40k / 1k at most 1.5).
//!
//! - `projector`: the OpenAI chunk projector, per tool call; each call
//!   arrives as two fragments with the `index` keys the provider sends.
//! - `validate_events`: the protocol checker, per text delta of one block.
//! - `linkage`: `validate_linkage`, per call of one assistant message with
//!   all its results after it.
//!
//! Run: `cargo bench --bench scaling`; after
//! criterion's report it prints the best-of-five time per item at both
//! sizes and their ratio.

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentstream::message::{assistant, tool_call, tool_result, Message, StopReason};
use agentstream::model::{validate_events, ModelEvent, PartialBuilder};
use agentstream_wire::limits::Limits;
use agentstream_wire::openai::OpenAiProjector;
use criterion::{criterion_group, Criterion, Throughput};
use serde_json::json;

const SIZES: [usize; 2] = [1_000, 40_000];

fn payloads(calls: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(2 * calls + 2);
    for i in 0..calls {
        out.push(format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{i},"id":"call_{i}","function":{{"name":"read","arguments":"{{\"path\":"}}}}]}}}}]}}"#
        ));
        out.push(format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{i},"function":{{"arguments":"\"f{i}.txt\"}}"}}}}]}}}}]}}"#
        ));
    }
    out.push(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into());
    out.push("[DONE]".into());
    out
}

fn project(payloads: &[String]) -> usize {
    let mut projector = OpenAiProjector::new("m", "p");
    projector.set_limits(Limits::UNLIMITED);
    let mut events = Vec::new();
    for payload in payloads {
        projector.push_data(payload, &mut events);
        // A consumer takes the events as they come.
        events.retain(ModelEvent::is_terminal);
    }
    let message = events.last().and_then(ModelEvent::terminal_message);
    message.map_or(0, |m| m.tool_calls().count())
}

/// One text block streamed as `deltas` deltas, as a projector emits it.
fn text_events(deltas: usize) -> Vec<ModelEvent> {
    let mut builder = PartialBuilder::new(assistant([], StopReason::Stop));
    let mut events = vec![ModelEvent::Start {
        partial: builder.snapshot(),
    }];
    let index = builder.start_text(Default::default());
    for _ in 0..deltas {
        let delta: std::sync::Arc<str> = "word ".into();
        builder.append(index, delta.clone());
        events.push(ModelEvent::TextDelta {
            content_index: index,
            delta,
            partial: builder.snapshot(),
        });
    }
    let message = builder.snapshot().to_message();
    events.push(ModelEvent::done(
        agentstream::model::DoneReason::Stop,
        message,
    ));
    events
}

/// One assistant message with `calls` calls, then their results.
fn linked(calls: usize) -> Vec<Message> {
    let message = assistant(
        (0..calls).map(|i| tool_call(format!("c{i}"), "read", json!({"i": i}))),
        StopReason::ToolUse,
    );
    let mut messages: Vec<Message> = vec![message.into()];
    messages.extend((0..calls).map(|i| tool_result(format!("c{i}"), "read", "ok", false).into()));
    messages
}

/// A scenario: its name, its input at a size, and one pass over it.
struct Scenario {
    name: &'static str,
    run: fn(usize) -> Box<dyn Fn() -> usize>,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        name: "projector",
        run: |n| {
            let input = payloads(n);
            Box::new(move || project(&input))
        },
    },
    Scenario {
        name: "validate_events",
        run: |n| {
            let events = text_events(n);
            Box::new(move || validate_events(&events).len())
        },
    },
    Scenario {
        name: "linkage",
        run: |n| {
            let messages = linked(n);
            Box::new(move || agentstream::message::validate_linkage(&messages).len())
        },
    },
];

fn bench(c: &mut Criterion) {
    for scenario in &SCENARIOS {
        for size in SIZES {
            let pass = (scenario.run)(size);
            let mut group = c.benchmark_group(format!("scaling-{}-{size}", scenario.name));
            group.throughput(Throughput::Elements(size as u64));
            group.sample_size(10);
            group.bench_function("ours", |b| b.iter(|| black_box(pass())));
            group.finish();
        }
    }
}

criterion_group!(benches, bench);

/// The best of five passes, per item.
fn per_item(scenario: &Scenario, size: usize) -> Duration {
    let pass = (scenario.run)(size);
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(pass());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
        / size as u32
}

fn main() {
    assert_eq!(project(&payloads(100)), 100, "every call is projected");
    assert_eq!(validate_events(&text_events(100)).len(), 0);
    assert_eq!(
        agentstream::message::validate_linkage(&linked(100)).len(),
        0
    );
    benches();
    for scenario in &SCENARIOS {
        let [small, large] = SIZES.map(|size| per_item(scenario, size));
        println!(
            "{}: per item {small:?} at {}, {large:?} at {}, ratio {:.2} (target <= 1.5)",
            scenario.name,
            SIZES[0],
            SIZES[1],
            large.as_secs_f64() / small.as_secs_f64()
        );
    }
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
