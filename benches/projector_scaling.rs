//! The OpenAI chunk projector's cost per tool call, at 1,000 and at 40,000
//! calls in one response: linear cost keeps the two equal (the issue's
//! target: the ratio 40k / 1k at most 1.5). Before the call lookup became
//! a map and the next call to open a cursor, 10k calls took 2.3 s and 40k
//! took 36 s in the debug CLI.
//!
//! Each call arrives as two fragments (name and the start of the
//! arguments, then the rest), with the `index` keys the provider sends.
//! Run: `cargo bench -p agentstream-suite --bench projector_scaling`; it
//! prints the per-call times and their ratio after criterion's report.

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentstream::model::ModelEvent;
use agentstream_wire::limits::Limits;
use agentstream_wire::openai::ChunkProjector;
use criterion::{criterion_group, Criterion, Throughput};

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
    let mut projector = ChunkProjector::new("m", "p");
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

fn bench(c: &mut Criterion) {
    for calls in SIZES {
        let input = payloads(calls);
        let mut group = c.benchmark_group(format!("projector-toolcalls-{calls}"));
        group.throughput(Throughput::Elements(calls as u64));
        group.sample_size(10);
        group.bench_function("ours", |b| b.iter(|| black_box(project(&input))));
        group.finish();
    }
}

criterion_group!(benches, bench);

/// The best of five passes, per call.
fn per_call(calls: usize) -> Duration {
    let input = payloads(calls);
    assert_eq!(project(&input), calls, "every call is projected");
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(project(&input));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
        / calls as u32
}

fn main() {
    benches();
    let [small, large] = SIZES.map(per_call);
    println!(
        "projector per tool call: {} calls {small:?}, {} calls {large:?}, ratio {:.2} (target <= 1.5)",
        SIZES[0],
        SIZES[1],
        large.as_secs_f64() / small.as_secs_f64()
    );
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
