//! The agent loop's cost beside the model call it wraps.
//!
//! - `agent-two-turn/run`: a scripted two-turn run with one tool call
//!   (prompt, tool call, result, answer), per run;
//! - `agent-two-turn/model-only`: the same two `ScriptedModel` calls made
//!   directly (events drained, result awaited), the loop's baseline;
//! - `agent-parallel-100/run`: one turn with 100 parallel tool calls and
//!   the closing answer, per call;
//! - `agent-object/1-subscriber`, `agent-object/8-subscribers`: the
//!   two-turn run through `Agent::prompt`, with one or eight stream
//!   subscribers, each drained after the run, per run.
//!
//! All on `futures_executor::block_on`, events discarded by a no-op
//! callback. After criterion's report it prints the allocations of one run
//! (counting global allocator) and the loop's overhead per turn as a ratio
//! to one `ScriptedModel` call, from best-of-21 timings in this process.
//!
//! Run: `cargo bench --bench agent`.
//!
//! Profile: `AGENT_PROFILE=run|model-only|agent-1|agent-8 <bench binary>`
//! runs only that workload 1,000 times and exits (for `valgrind
//! --tool=dhat` or `--tool=callgrind`, divide by 1,000).

// `criterion_group!` generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentstream::agent::{
    run_agent, Agent, AgentOptions, AgentOutcome, AgentTool, ToolContext, ToolError, ToolOutput,
    ToolSet,
};
use agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
};
use agentstream::model::{Model, ScriptedModel, StreamOptions};
use agentstream_testkit::{measure, CountingAllocator};
use criterion::{criterion_group, Criterion, Throughput};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const PARALLEL: usize = 100;

struct Echo;

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its text."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(
            args.get("text").and_then(Value::as_str).unwrap_or_default(),
        ))
    }
}

fn turns(calls: usize) -> [AssistantMessage; 2] {
    [
        assistant(
            (0..calls).map(|i| tool_call(format!("c{i}"), "echo", json!({"text": "hi"}))),
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ]
}

fn run(calls: usize, tools: &ToolSet<'_>) -> AgentOutcome {
    let model = ScriptedModel::new(turns(calls));
    futures_executor::block_on(run_agent(
        &model,
        tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |event| drop(black_box(event)),
    ))
}

/// The two-turn run through a fresh `Agent` with `subscribers` stream
/// subscribers, each drained afterwards; returns the events read.
fn agent_run(subscribers: usize) -> usize {
    let agent = Agent::new(ScriptedModel::new(turns(1)), ToolSet::new().with(Echo));
    let mut streams: Vec<_> = (0..subscribers).map(|_| agent.subscribe()).collect();
    futures_executor::block_on(async {
        let outcome = agent.prompt_text("go").await;
        black_box(outcome.ok());
        let mut read = 0;
        for stream in &mut streams {
            while stream.backlog() > 0 {
                black_box(stream.next().await);
                read += 1;
            }
        }
        read
    })
}

/// The two model calls of the two-turn run, made directly.
fn model_only() -> usize {
    let model = ScriptedModel::new(turns(1));
    let context = Context::from_messages([user("go").into()]);
    futures_executor::block_on(async {
        let mut count = 0;
        for _ in 0..2 {
            let mut stream = model.stream(&context, StreamOptions::default());
            while let Some(event) = stream.next().await {
                black_box(&event);
                count += 1;
            }
            black_box(stream.result().await);
        }
        count
    })
}

fn bench(c: &mut Criterion) {
    let tools = ToolSet::new().with(Echo);
    let mut group = c.benchmark_group("agent-two-turn");
    group.throughput(Throughput::Elements(1));
    group.bench_function("run", |b| b.iter(|| black_box(run(1, &tools))));
    group.bench_function("model-only", |b| b.iter(|| black_box(model_only())));
    group.finish();
    let mut group = c.benchmark_group("agent-parallel-100");
    group.throughput(Throughput::Elements(PARALLEL as u64));
    group.bench_function("run", |b| b.iter(|| black_box(run(PARALLEL, &tools))));
    group.finish();
    let mut group = c.benchmark_group("agent-object");
    group.throughput(Throughput::Elements(1));
    group.bench_function("1-subscriber", |b| b.iter(|| black_box(agent_run(1))));
    group.bench_function("8-subscribers", |b| b.iter(|| black_box(agent_run(8))));
    group.finish();
}

criterion_group!(benches, bench);

fn best_of(n: usize, f: impl Fn()) -> Duration {
    (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Runs one workload 1,000 times, for a profiler; `false` if `AGENT_PROFILE`
/// is unset.
fn profile(tools: &ToolSet<'_>) -> bool {
    let Ok(workload) = std::env::var("AGENT_PROFILE") else {
        return false;
    };
    for _ in 0..1000 {
        match workload.as_str() {
            "run" => drop(black_box(run(1, tools))),
            "model-only" => drop(black_box(model_only())),
            "agent-1" => drop(black_box(agent_run(1))),
            "agent-8" => drop(black_box(agent_run(8))),
            other => panic!("AGENT_PROFILE: unknown workload {other:?}"),
        }
    }
    true
}

fn main() {
    let tools = ToolSet::new().with(Echo);
    if profile(&tools) {
        return;
    }
    assert_eq!(
        run(1, &tools).messages.len(),
        4,
        "prompt, call, result, answer"
    );
    assert_eq!(run(PARALLEL, &tools).messages.len(), PARALLEL + 3);
    let events = agent_run(1);
    assert_eq!(
        agent_run(8),
        8 * events,
        "every subscriber reads every event"
    );
    benches();
    let (run_allocs, _) = measure(|| run(1, &tools));
    let (model_allocs, _) = measure(model_only);
    let (parallel_allocs, _) = measure(|| run(PARALLEL, &tools));
    let run_time = best_of(21, || drop(black_box(run(1, &tools))));
    let model_time = best_of(21, || {
        black_box(model_only());
    });
    let parallel_time = best_of(21, || drop(black_box(run(PARALLEL, &tools))));
    let (agent1_allocs, _) = measure(|| agent_run(1));
    let (agent8_allocs, _) = measure(|| agent_run(8));
    let agent1_time = best_of(21, || {
        black_box(agent_run(1));
    });
    let agent8_time = best_of(21, || {
        black_box(agent_run(8));
    });
    // Two turns: the overhead per turn is half of what the run adds to its
    // two model calls; one model call is half of `model_only`.
    let overhead_per_turn = run_time.saturating_sub(model_time) / 2;
    let per_model_call = model_time / 2;
    println!("two-turn run: {run_time:?} per run, {run_allocs} allocations");
    println!("two model calls alone: {model_time:?}, {model_allocs} allocations");
    println!(
        "loop overhead per turn: {overhead_per_turn:?}, {:.2}x one ScriptedModel call ({per_model_call:?})",
        overhead_per_turn.as_secs_f64() / per_model_call.as_secs_f64()
    );
    println!(
        "100 parallel calls: {:?} per call, {:.1} allocations per call",
        parallel_time / PARALLEL as u32,
        parallel_allocs as f64 / PARALLEL as f64
    );
    println!(
        "Agent, two-turn run: {agent1_time:?} and {agent1_allocs} allocations with 1 subscriber, \
         {agent8_time:?} and {agent8_allocs} with 8 ({events} events each)"
    );
    println!(
        "allocations per turn: run {:.1}, model calls alone {:.1}, loop overhead {:.1}",
        run_allocs as f64 / 2.0,
        model_allocs as f64 / 2.0,
        run_allocs.saturating_sub(model_allocs) as f64 / 2.0
    );
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
