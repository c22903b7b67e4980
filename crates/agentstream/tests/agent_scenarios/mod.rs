//! Agent scenarios shared by the golden-transcript tests
//! (`tests/agent_golden.rs`) and the conformance suite
//! (`tests/conformance/agent_bodies.rs` at the workspace root), which runs
//! each on six executors and compares it with the same golden file.
//!
//! Each scenario owns its model and tools (a `'static`, `Send` future, so
//! that a multi-threaded runtime can run it), uses only the core and
//! futures-util, decides every completion order and every abort or
//! steering point through [`GatedTool`]s, and checks `validate_linkage` on
//! the final history.
//!
//! The file is `no_std + alloc` (no locks, no `std` paths): the
//! `agentstream-conformance` crate includes it too, to run the scenarios
//! in hosts without `std` (WebAssembly, a microcontroller). A crate that
//! includes it declares `extern crate alloc`.
#![allow(dead_code)]

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agentstream::agent::{
    run_agent, AgentHooks, AgentOptions, AgentOutcome, AgentStop, AgentTool, GateHandle, GatedTool,
    MessageSource, SteeringMode, ToolCallDecision, ToolContext, ToolError, ToolOutput, ToolSet,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, AssistantMessage, Context, Message,
    StopReason,
};
use agentstream::model::{AbortController, ScriptStep, ScriptedModel, ScriptedTurn};
use futures_util::future::join;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

/// A scenario's transcript: one JSON line per agent event, and the outcome.
#[derive(Debug)]
pub struct Transcript {
    /// The events, serialized as Pi does, in emission order.
    pub lines: Vec<String>,
    /// The run's outcome.
    pub outcome: AgentOutcome,
}

/// Whether two transcript lines hold the same JSON (object keys in any
/// order: serde_json's `preserve_order` feature, which another crate of
/// the build may turn on, changes the order of a `Value`'s keys).
pub fn same_json(expected: &str, actual: &str) -> bool {
    match (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(actual),
    ) {
        (Ok(e), Ok(a)) => e == a,
        _ => expected == actual,
    }
}

/// The scenarios by name (the golden file is `tests/golden/<name>.jsonl`).
pub const NAMES: &[&str] = &[
    "demo",
    "parallel_reverse_completion",
    "unknown_tool",
    "invalid_arguments",
    "length_turn_with_tool_calls",
    "max_turns",
    "steering_after_batch",
    "steering_interrupt",
    "follow_up",
    "abort_during_tool",
    "hooks_block_and_rewrite",
];

/// Runs the scenario called `name`.
pub async fn play(name: &str) -> Transcript {
    match name {
        "demo" => demo().await,
        "parallel_reverse_completion" => parallel_reverse_completion().await,
        "unknown_tool" => unknown_tool().await,
        "invalid_arguments" => invalid_arguments().await,
        "length_turn_with_tool_calls" => length_turn_with_tool_calls().await,
        "max_turns" => max_turns().await,
        "steering_after_batch" => steering(SteeringMode::AfterBatch).await,
        "steering_interrupt" => steering(SteeringMode::Interrupt).await,
        "follow_up" => follow_up().await,
        "abort_during_tool" => abort_during_tool().await,
        "hooks_block_and_rewrite" => hooks_block_and_rewrite().await,
        other => panic!("no scenario {other}"),
    }
}

/// The README the demo's `read` tool returns.
pub const DEMO_README: &str = "# agentstream\n\nStreaming model output for Rust agents.\n";

/// Reads from a fixed one-file tree: `README.md` is [`DEMO_README`].
struct Read;

impl AgentTool for Read {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "Reads a file."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        match args.get("path").and_then(Value::as_str) {
            Some("README.md") => Ok(ToolOutput::text(DEMO_README)),
            Some(other) => Err(ToolError::new(format!("no such file: {other}"))),
            None => Err(ToolError::new("no path")),
        }
    }
}

/// Echoes its `text`, reporting progress once.
struct Echo;

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its text."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
            "required": ["text"],
            "additionalProperties": false
        })
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let text = args
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        cx.progress.report(json!({"echoing": text}));
        Ok(ToolOutput::text(text).with_details(json!({"echoed": true})))
    }
}

fn calls(list: &[(&str, &str, Value)]) -> AssistantMessage {
    assistant(
        list.iter()
            .map(|(id, name, args)| tool_call(*id, *name, args.clone())),
        StopReason::ToolUse,
    )
}

fn answer(words: &str) -> AssistantMessage {
    assistant([text(words)], StopReason::Stop)
}

/// Runs the loop with a `Sync` recorder and checks the linkage invariant.
///
/// The recorder is the core's own event stream (its producer pushes
/// through `&self`), so the file needs no lock of its own.
async fn record(
    model: &ScriptedModel,
    tools: &ToolSet<'_>,
    prompt: &str,
    options: AgentOptions,
) -> Transcript {
    let (sink, recorded) = agentstream::channel::<String, (), ()>();
    let context = Context::from_messages([user("earlier").into()]);
    let outcome = run_agent(
        model,
        tools,
        context.clone(),
        vec![user(prompt).into()],
        options,
        |event| {
            sink.push(serde_json::to_string(&event).unwrap())
                .expect("the recorder is open until the run ends")
        },
    )
    .await;
    sink.finish(()).expect("the recorder is still open");
    let lines = recorded
        .map(|line| line.expect("the recorder finished"))
        .collect()
        .await;
    let mut history = context.messages;
    history.extend(outcome.messages.iter().cloned());
    assert_eq!(validate_linkage(&history), vec![], "linkage after the run");
    Transcript { lines, outcome }
}

/// A message source that hands out `messages` at its `nth` call (from 0).
fn once_at(nth: usize, messages: Vec<Message>) -> MessageSource {
    let calls = AtomicUsize::new(0);
    Arc::new(move || {
        if calls.fetch_add(1, Ordering::SeqCst) == nth {
            messages.clone()
        } else {
            Vec::new()
        }
    })
}

/// The course's scenario: turn 1 reads the README, turn 2 answers from
/// what the tool returned (a reply built from the request).
pub async fn demo() -> Transcript {
    let model = ScriptedModel::new([
        ScriptStep::from(calls(&[("", "read", json!({"path": "README.md"}))])),
        ScriptStep::reply(|request: &Context| {
            let read = request.messages.iter().rev().find_map(|m| match m {
                Message::ToolResult(r) => r
                    .content
                    .first()
                    .and_then(|b| b.as_text())
                    .map(str::to_owned),
                _ => None,
            });
            let first_line = read
                .as_deref()
                .and_then(|t| t.lines().next())
                .unwrap_or("nothing");
            ScriptedTurn::message(answer(&format!("The README starts with \"{first_line}\".")))
        }),
    ]);
    let tools = ToolSet::new().with(Read);
    let t = record(
        &model,
        &tools,
        "What is in the README?",
        AgentOptions::default(),
    )
    .await;
    assert_eq!(t.outcome.stop, AgentStop::Completed);
    t
}

/// Releases `order` one after the other, each once the previous has ended.
async fn release_in_order(gate: &GateHandle, started: usize, order: &[&str]) {
    gate.started(started).await;
    for id in order {
        gate.release(id, ToolOutput::text(format!("{id} done")));
        gate.finished(id).await;
    }
}

/// Three parallel calls that complete in reverse order: the
/// `tool_execution_end` events say c, b, a; the results stay a, b, c.
pub async fn parallel_reverse_completion() -> Transcript {
    let (gated, gate) = GatedTool::new("wait");
    let tools = ToolSet::new().with(gated);
    let model = ScriptedModel::new([
        calls(&[
            ("a", "wait", json!({})),
            ("b", "wait", json!({})),
            ("c", "wait", json!({})),
        ]),
        answer("all three finished"),
    ]);
    let (t, ()) = join(
        record(&model, &tools, "run three", AgentOptions::default()),
        release_in_order(&gate, 3, &["c", "b", "a"]),
    )
    .await;
    t
}

/// A call of a tool that does not exist gets `Tool nope not found`; the
/// other call of the turn still runs.
pub async fn unknown_tool() -> Transcript {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "nope", json!({"x": 1})),
            ("c2", "echo", json!({"text": "hi"})),
        ]),
        answer("one of them worked"),
    ]);
    let tools = ToolSet::new().with(Echo);
    record(&model, &tools, "try", AgentOptions::default()).await
}

/// Arguments that fail the schema: the result names each failing path and
/// the received arguments; a coercible scalar is coerced for `execute`.
pub async fn invalid_arguments() -> Transcript {
    let model = ScriptedModel::new([
        calls(&[
            // Keys in alphabetical order: the message quotes the arguments, and
            // serde_json orders them so with or without `preserve_order`.
            ("c1", "echo", json!({"extra": true, "times": 0})),
            ("c2", "echo", json!({"text": 42})),
        ]),
        answer("fixed"),
    ]);
    let tools = ToolSet::new().with(Echo);
    record(&model, &tools, "echo", AgentOptions::default()).await
}

/// A turn cut off by `length` with tool calls: they are not executed, and
/// the run ends.
pub async fn length_turn_with_tool_calls() -> Transcript {
    let mut cut = calls(&[("c1", "echo", json!({"text": "trunc"}))]);
    cut.stop_reason = StopReason::Length;
    let model = ScriptedModel::new([cut, answer("never")]);
    let tools = ToolSet::new().with(Echo);
    let t = record(&model, &tools, "long", AgentOptions::default()).await;
    assert_eq!(model.calls(), 1);
    t
}

/// The model keeps calling tools; the limit of two turns ends the run.
pub async fn max_turns() -> Transcript {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": "one"}))]),
        calls(&[("c2", "echo", json!({"text": "two"}))]),
        calls(&[("c3", "echo", json!({"text": "three"}))]),
    ]);
    let tools = ToolSet::new().with(Echo);
    let t = record(
        &model,
        &tools,
        "loop",
        AgentOptions::default().with_max_turns(2),
    )
    .await;
    assert_eq!(t.outcome.stop, AgentStop::MaxTurns);
    t
}

/// A steering message queued while the first of two calls runs: after the
/// batch (Pi 0.73), both calls run and the message opens the next turn;
/// interrupting (Pi 0.58), the second call is skipped.
pub async fn steering(mode: SteeringMode) -> Transcript {
    let (gated, gate) = GatedTool::new("wait");
    let tools = ToolSet::new().with(gated.sequential());
    let model = ScriptedModel::new([
        calls(&[("a", "wait", json!({})), ("b", "wait", json!({}))]),
        answer("steered"),
    ]);
    // Whether the steering message is queued (the hook takes it once).
    let queued = Arc::new(AtomicBool::new(false));
    let source = Arc::clone(&queued);
    let mut hooks = AgentHooks::default();
    hooks.steering = Some(Arc::new(move || {
        if source.swap(false, Ordering::SeqCst) {
            vec![user("stop and summarize").into()]
        } else {
            Vec::new()
        }
    }));
    hooks.steering_mode = mode;
    let options = AgentOptions::default().with_hooks(hooks);
    let control = async {
        gate.started(1).await;
        // The message lands while `a` runs.
        queued.store(true, Ordering::SeqCst);
        gate.release("a", ToolOutput::text("a done"));
        gate.finished("a").await;
        if mode == SteeringMode::AfterBatch {
            gate.started(2).await;
            gate.release("b", ToolOutput::text("b done"));
        }
    };
    let (t, ()) = join(record(&model, &tools, "two steps", options), control).await;
    t
}

/// A follow-up message starts a new turn only once the run would end.
pub async fn follow_up() -> Transcript {
    let model = ScriptedModel::new([answer("first answer"), answer("second answer")]);
    let tools = ToolSet::new().with(Echo);
    let mut hooks = AgentHooks::default();
    hooks.follow_up = Some(once_at(0, vec![user("and one more thing").into()]));
    record(
        &model,
        &tools,
        "hello",
        AgentOptions::default().with_hooks(hooks),
    )
    .await
}

/// An abort while a tool runs: the tool gets an aborted result (no grace
/// period), and the run ends without another model call.
pub async fn abort_during_tool() -> Transcript {
    let (gated, gate) = GatedTool::new("wait");
    let tools = ToolSet::new().with(gated).with(Echo);
    let model = ScriptedModel::new([
        calls(&[
            ("a", "echo", json!({"text": "quick"})),
            ("b", "wait", json!({})),
        ]),
        answer("never"),
    ]);
    let controller = AbortController::new();
    let options = AgentOptions::default().with_signal(controller.signal());
    let control = async {
        gate.started(1).await;
        controller.abort();
    };
    let (t, ()) = join(record(&model, &tools, "go", options), control).await;
    assert_eq!(t.outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    t
}

/// `before_tool_call` blocks one call and rewrites another's arguments;
/// `after_tool_call` rewrites a result.
pub async fn hooks_block_and_rewrite() -> Transcript {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "echo", json!({"text": "rm -rf /"})),
            ("c2", "echo", json!({"text": "draft"})),
            ("c3", "echo", json!({"text": "secret"})),
        ]),
        answer("done"),
    ]);
    let tools = ToolSet::new().with(Echo);
    let mut hooks = AgentHooks::default();
    hooks.before_tool_call = Some(agentstream::agent::BeforeToolCallHook::new(
        |call| match call.id.as_str() {
            "c1" => ToolCallDecision::Block("blocked by policy".into()),
            "c2" => {
                let mut args = call.arguments.clone();
                args.insert("text".into(), json!("final"));
                ToolCallDecision::Rewrite(args)
            }
            _ => ToolCallDecision::Allow,
        },
    ));
    hooks.after_tool_call = Some(agentstream::agent::AfterToolCallHook::new(
        |call, output| {
            if call.id == "c3" {
                ToolOutput::text("[redacted]")
            } else {
                output
            }
        },
    ));
    record(
        &model,
        &tools,
        "hooks",
        AgentOptions::default().with_hooks(hooks),
    )
    .await
}
