//! The agent loop: events, tools, turns and their policies.

use std::cell::RefCell;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentstream::agent::{
    parse_args, run_agent, AgentEvent, AgentHooks, AgentOptions, AgentOutcome, AgentStop,
    AgentTool, SteeringMode, ToolCallDecision, ToolContext, ToolError, ToolExecution, ToolOutput,
    ToolSet, NOT_EXECUTED_MESSAGE, SKIPPED_MESSAGE,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, Context, Message, SharedMessage, StopReason,
};
use agentstream::model::{AbortController, ErrorReason, ScriptedModel, ScriptedTurn};
use agentstream::{yield_now, EventStream, Producer};
use serde_json::{json, Map, Value};

/// Echoes its `text` argument, reporting one progress event first.
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
        cx: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        #[derive(serde::Deserialize)]
        struct Args {
            text: String,
        }
        let args: Args = parse_args("echo", &args)?;
        cx.progress.report(json!({"echoing": args.text}));
        Ok(ToolOutput::text(args.text).with_details(json!({"len": 1})))
    }
}

/// A tool that finishes when the test opens its gate (`gate` argument:
/// the index of the gate).
struct Gated<'g> {
    gates: &'g [EventStream<(), (), Infallible>],
    started: &'g AtomicUsize,
}

impl AgentTool for Gated<'_> {
    fn name(&self) -> &str {
        "gated"
    }
    fn description(&self) -> &str {
        "Finishes when the test says so."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let index = args.get("gate").and_then(Value::as_u64).unwrap_or(0) as usize;
        let gate = self
            .gates
            .get(index)
            .ok_or_else(|| ToolError::new("no such gate"))?;
        self.started.fetch_add(1, Ordering::SeqCst);
        let _ = gate.result().await;
        if cx.signal.is_aborted() {
            return Err(ToolError::new("aborted"));
        }
        Ok(ToolOutput::text(format!("gate {index} opened")))
    }
}

#[path = "support/agent.rs"]
mod agent_support;

struct Run {
    outcome: AgentOutcome,
    events: Vec<AgentEvent>,
}

impl Run {
    fn types(&self) -> Vec<&'static str> {
        self.events.iter().map(AgentEvent::type_name).collect()
    }

    fn json_types(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    fn ends(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolExecutionEnd {
                    tool_call_id,
                    is_error,
                    ..
                } => Some((tool_call_id.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }

    fn results(&self) -> Vec<(String, String, bool)> {
        agent_support::tool_results(&self.outcome.messages)
    }
}

/// Runs the loop and checks the invariants every run keeps: linkage-valid
/// history, `agent_start` first, `agent_end` last with the added messages.
async fn run(
    model: &ScriptedModel,
    tools: &ToolSet<'_>,
    prompt: &str,
    options: AgentOptions,
) -> Run {
    let events = RefCell::new(Vec::new());
    let context = Context::from_messages([user("earlier").into()]);
    let outcome = run_agent(
        model,
        tools,
        context.clone(),
        vec![user(prompt).into()],
        options,
        |event| events.borrow_mut().push(event),
    )
    .await;
    let events = events.into_inner();
    let mut history = context.messages.clone();
    history.extend(outcome.messages.iter().cloned());
    assert_eq!(validate_linkage(&history), vec![], "linkage after the run");
    assert_eq!(events.first(), Some(&AgentEvent::AgentStart));
    assert_eq!(
        events.last(),
        Some(&AgentEvent::AgentEnd {
            messages: outcome
                .messages
                .iter()
                .cloned()
                .map(SharedMessage::from)
                .collect()
        })
    );
    Run { outcome, events }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

fn calls(calls: &[(&str, &str, Value)]) -> agentstream::message::AssistantMessage {
    assistant(
        calls
            .iter()
            .map(|(id, name, args)| tool_call(*id, *name, args.clone())),
        StopReason::ToolUse,
    )
}

#[test]
fn two_turn_run_executes_the_tool_and_stops_on_the_answer() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": "hi"}))]),
        assistant([text("done")], StopReason::Stop),
    ])
    .recording_requests();
    let tools = ToolSet::new().with(Echo);
    let r = block_on(run(&model, &tools, "go", AgentOptions::default()));
    assert_eq!(r.outcome.stop, AgentStop::Completed);
    assert_eq!(r.outcome.turns, 2);
    assert_eq!(r.results(), [("c1".into(), "hi".into(), false)]);
    assert_eq!(r.outcome.messages.len(), 4); // prompt, call, result, answer
    assert_eq!(r.types(), r.json_types());
    let expected = [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",
    ];
    assert_eq!(&r.types()[..6], expected);
    assert!(r.types().contains(&"tool_execution_update"));
    assert_eq!(r.types().iter().filter(|t| **t == "turn_end").count(), 2);
    // The second request saw the tool result and the tool definitions.
    let second = &model.requests()[1];
    assert!(matches!(
        second.messages.last(),
        Some(Message::ToolResult(_))
    ));
    assert_eq!(second.tools.as_ref().map(Vec::len), Some(1));
}

#[test]
fn each_event_type_serializes_in_pi_shape() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": "hi"}))]),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(Echo);
    let r = block_on(run(&model, &tools, "go", AgentOptions::default()));
    let mut seen = std::collections::BTreeSet::new();
    for event in &r.events {
        let v = serde_json::to_value(event).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut keys = keys;
        keys.sort_unstable();
        let expected: &[&str] = match event.type_name() {
            "agent_start" | "turn_start" => &["type"],
            "message_start" | "message_end" => &["message", "type"],
            "message_update" => &["assistantMessageEvent", "message", "type"],
            "tool_execution_start" => &["args", "toolCallId", "toolName", "type"],
            "tool_execution_update" => &["args", "partialResult", "toolCallId", "toolName", "type"],
            "tool_execution_end" => &["isError", "result", "toolCallId", "toolName", "type"],
            "turn_end" => &["message", "toolResults", "type"],
            "agent_end" => &["messages", "type"],
            other => panic!("unexpected event type {other}"),
        };
        assert_eq!(keys, expected, "keys of {}", event.type_name());
        seen.insert(event.type_name());
        if let AgentEvent::ToolExecutionEnd { .. } = event {
            assert_eq!(
                v["result"]["content"][0],
                json!({"type": "text", "text": "hi"})
            );
            assert_eq!(v["result"]["details"], json!({"len": 1}));
            assert_eq!(v["isError"], json!(false));
        }
        if let AgentEvent::TurnEnd { .. } = event {
            assert_eq!(v["message"]["role"], "assistant");
        }
    }
    assert_eq!(seen.len(), 10, "every event type occurs: {seen:?}");
}

#[test]
fn unknown_tool_gets_a_not_found_error_result() {
    let model = ScriptedModel::new([
        calls(&[("c1", "nope", json!({}))]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default(),
    ));
    assert_eq!(
        r.results(),
        [("c1".into(), "Tool nope not found".into(), true)]
    );
    assert_eq!(r.outcome.stop, AgentStop::Completed);
}

#[test]
fn a_failing_execute_becomes_an_error_result_naming_the_cause() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": 5}))]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_validator(None),
    ));
    let results = r.results();
    assert!(results[0].2);
    assert!(
        results[0].1.starts_with("invalid arguments for echo: "),
        "{}",
        results[0].1
    );
}

#[test]
fn parallel_results_keep_call_order_while_ends_report_completion_order() {
    let (open0, gate0) = EventStream::<(), (), Infallible>::channel();
    let (open1, gate1) = EventStream::<(), (), Infallible>::channel();
    let gates = [gate0, gate1];
    let started = AtomicUsize::new(0);
    let tools = ToolSet::new().with(Gated {
        gates: &gates,
        started: &started,
    });
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "gated", json!({"gate": 0})),
            ("c1", "gated", json!({"gate": 1})),
        ]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let control = async {
        open_when_started(&started, 2, &open1).await;
        open_when_started(&started, 2, &open0).await;
    };
    let (r, ()) = block_on(futures_util::future::join(
        run(&model, &tools, "go", AgentOptions::default()),
        control,
    ));
    assert_eq!(r.ends(), [("c1".into(), false), ("c0".into(), false)]);
    let ids: Vec<String> = r.results().into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["c0", "c1"]);
}

async fn open_when_started(started: &AtomicUsize, n: usize, gate: &Producer<(), (), Infallible>) {
    while started.load(Ordering::SeqCst) < n {
        yield_now().await;
    }
    // Let the other side run once more before opening, so order is decided
    // by the gates alone.
    yield_now().await;
    let _ = gate.finish(());
    yield_now().await;
}

#[test]
fn sequential_execution_runs_calls_one_after_the_other() {
    let (open0, gate0) = EventStream::<(), (), Infallible>::channel();
    let (open1, gate1) = EventStream::<(), (), Infallible>::channel();
    let gates = [gate0, gate1];
    let started = AtomicUsize::new(0);
    let tools = ToolSet::new().with(Gated {
        gates: &gates,
        started: &started,
    });
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "gated", json!({"gate": 0})),
            ("c1", "gated", json!({"gate": 1})),
        ]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let control = async {
        for _ in 0..50 {
            yield_now().await;
        }
        // Only the first call has started: the second waits its turn.
        let first = started.load(Ordering::SeqCst);
        let _ = open0.finish(());
        open_when_started(&started, 2, &open1).await;
        first
    };
    let (r, first) = block_on(futures_util::future::join(
        run(
            &model,
            &tools,
            "go",
            AgentOptions::default().with_tool_execution(ToolExecution::Sequential),
        ),
        control,
    ));
    assert_eq!(first, 1);
    assert_eq!(r.ends(), [("c0".into(), false), ("c1".into(), false)]);
}

#[test]
fn a_length_turn_gets_not_executed_results_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        assistant(
            [tool_call("c1", "echo", json!({"text": "hi"}))],
            StopReason::Length,
        ),
        assistant([text("retrying later")], StopReason::Stop),
    ])
    .recording_requests();
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default(),
    ));
    assert_eq!(
        r.results(),
        [("c1".into(), NOT_EXECUTED_MESSAGE.into(), true)]
    );
    // The call gets a start and an end, but `execute` never runs.
    assert!(r.types().contains(&"tool_execution_start"));
    assert!(!r.types().contains(&"tool_execution_update"));
    assert_eq!(r.outcome.stop, AgentStop::Completed);
    // As in Pi, the next turn runs and the model reads the result.
    assert_eq!(model.calls(), 2);
    let second = &model.requests()[1];
    assert!(matches!(second.messages.last(), Some(Message::ToolResult(r)) if r.is_error));
}

#[test]
fn an_error_turn_ends_the_run_with_its_message_last() {
    let model = ScriptedModel::new([ScriptedTurn::failure(ErrorReason::Error, "boom")]);
    let r = block_on(run(&model, &ToolSet::new(), "go", AgentOptions::default()));
    assert_eq!(r.outcome.stop, AgentStop::Error);
    match r.outcome.messages.last() {
        Some(Message::Assistant(m)) => {
            assert_eq!(m.stop_reason, StopReason::Error);
            assert_eq!(m.error_message.as_deref(), Some("boom"));
        }
        other => panic!("last message {other:?}"),
    }
    let n = r.types().len();
    assert_eq!(&r.types()[n - 2..], ["turn_end", "agent_end"]);
}

#[test]
fn max_turns_ends_the_run_with_a_typed_reason() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": "a"}))]),
        calls(&[("c2", "echo", json!({"text": "b"}))]),
        assistant([text("never")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_max_turns(2),
    ));
    assert_eq!(r.outcome.stop, AgentStop::MaxTurns);
    assert_eq!(r.outcome.turns, 2);
    assert_eq!(model.calls(), 2);
}

#[test]
fn abort_during_a_tool_ends_the_run_without_another_model_call() {
    let (open0, gate0) = EventStream::<(), (), Infallible>::channel();
    let gates = [gate0];
    let started = AtomicUsize::new(0);
    let tools = ToolSet::new().with(Gated {
        gates: &gates,
        started: &started,
    });
    let model = ScriptedModel::new([
        calls(&[("c0", "gated", json!({"gate": 0}))]),
        assistant([text("never")], StopReason::Stop),
    ]);
    let controller = AbortController::new();
    let control = async {
        while started.load(Ordering::SeqCst) < 1 {
            yield_now().await;
        }
        controller.abort();
        let _ = open0.finish(());
    };
    let (r, ()) = block_on(futures_util::future::join(
        run(
            &model,
            &tools,
            "go",
            AgentOptions::default().with_signal(controller.signal()),
        ),
        control,
    ));
    assert_eq!(r.outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
    assert_eq!(r.results(), [("c0".into(), "aborted".into(), true)]);
}

#[test]
fn an_aborted_signal_makes_no_model_call() {
    let model = ScriptedModel::new([assistant([text("never")], StopReason::Stop)]);
    let controller = AbortController::new();
    controller.abort();
    let r = block_on(run(
        &model,
        &ToolSet::new(),
        "go",
        AgentOptions::default().with_signal(controller.signal()),
    ));
    assert_eq!(r.outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 0);
    assert_eq!(r.types(), ["agent_start", "agent_end"]);
}

#[test]
fn invalid_arguments_get_an_error_naming_each_path_and_the_received_arguments() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"txt": [1]}))]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default(),
    ));
    let (id, message, is_error) = &r.results()[0];
    assert_eq!(id, "c1");
    assert!(is_error);
    assert_eq!(
        message,
        "Validation failed for tool \"echo\":\n  - text: must have required properties text\n\nReceived arguments:\n{\n  \"txt\": [\n    1\n  ]\n}"
    );
    assert!(
        !r.types().contains(&"tool_execution_update"),
        "execute never ran"
    );
}

#[test]
fn coerced_arguments_reach_execute_while_events_keep_what_the_model_sent() {
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": 42}))]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default(),
    ));
    assert_eq!(r.results(), [("c1".into(), "42".into(), false)]);
    let start_args = r.events.iter().find_map(|e| match e {
        AgentEvent::ToolExecutionStart { args, .. } => Some(args.clone()),
        _ => None,
    });
    assert_eq!(start_args, Some(json!({"text": 42})));
    match &r.outcome.messages[1] {
        Message::Assistant(m) => {
            assert_eq!(
                m.tool_calls().next().map(|c| c.arguments["text"].clone()),
                Some(json!(42))
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_custom_validator_replaces_the_default() {
    fn refuse(_: &Value, _: &mut Value) -> Vec<String> {
        vec!["/: refused".into()]
    }
    let model = ScriptedModel::new([
        calls(&[("c1", "echo", json!({"text": "fine"}))]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_validator(Some(refuse)),
    ));
    assert!(r.results()[0].1.contains("  - /: refused"));
}

/// A message source that hands out `messages` on its `nth` call (0-based)
/// and nothing otherwise.
fn once_at(nth: usize, messages: Vec<Message>) -> agentstream::agent::MessageSource {
    let calls = AtomicUsize::new(0);
    let queued = std::sync::Mutex::new(Some(messages));
    std::sync::Arc::new(move || {
        if calls.fetch_add(1, Ordering::SeqCst) == nth {
            queued.lock().unwrap().take().unwrap_or_default()
        } else {
            Vec::new()
        }
    })
}

fn user_text(m: &Message) -> Option<String> {
    match m {
        Message::User(u) => match &u.content {
            agentstream::message::UserContent::Text(t) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn steering_after_batch_lands_at_the_next_turn_after_all_calls_ran() {
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "echo", json!({"text": "a"})),
            ("c1", "echo", json!({"text": "b"})),
        ]),
        assistant([text("ok")], StopReason::Stop),
    ])
    .recording_requests();
    let mut hooks = AgentHooks::default();
    // Polled before the first turn (0), then after the batch (1).
    hooks.steering = Some(once_at(1, vec![user("steer").into()]));
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(
        r.results(),
        [
            ("c0".into(), "a".into(), false),
            ("c1".into(), "b".into(), false)
        ]
    );
    let second = &model.requests()[1];
    assert_eq!(
        second.messages.last().and_then(user_text).as_deref(),
        Some("steer")
    );
    assert_eq!(r.outcome.stop, AgentStop::Completed);
}

#[test]
fn interrupting_steering_skips_the_remaining_calls_with_pi_058_wording() {
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "echo", json!({"text": "a"})),
            ("c1", "echo", json!({"text": "b"})),
        ]),
        assistant([text("ok")], StopReason::Stop),
    ])
    .recording_requests();
    let mut hooks = AgentHooks::default();
    // Polled before the first turn (0), then after each call (1: c0).
    hooks.steering = Some(once_at(1, vec![user("stop that").into()]));
    hooks.steering_mode = SteeringMode::Interrupt;
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(
        r.results(),
        [
            ("c0".into(), "a".into(), false),
            ("c1".into(), SKIPPED_MESSAGE.into(), true)
        ]
    );
    assert_eq!(SKIPPED_MESSAGE, "Skipped due to queued user message.");
    let second = &model.requests()[1];
    assert_eq!(
        second.messages.last().and_then(user_text).as_deref(),
        Some("stop that")
    );
}

#[test]
fn follow_up_starts_a_new_turn_only_when_the_run_would_end() {
    let model = ScriptedModel::new([
        calls(&[("c0", "echo", json!({"text": "a"}))]),
        assistant([text("first")], StopReason::Stop),
        assistant([text("second")], StopReason::Stop),
    ])
    .recording_requests();
    let mut hooks = AgentHooks::default();
    // Asked once after the answer "first" (the tool turn does not ask).
    hooks.follow_up = Some(once_at(0, vec![user("more").into()]));
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(r.outcome.turns, 3);
    let texts: Vec<String> = r.outcome.messages.iter().filter_map(user_text).collect();
    assert_eq!(texts, ["go", "more"]);
    assert_eq!(
        model.requests()[2]
            .messages
            .last()
            .and_then(user_text)
            .as_deref(),
        Some("more")
    );
}

#[test]
fn before_tool_call_blocks_and_rewrites_after_tool_call_rewrites_results() {
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "echo", json!({"text": "secret"})),
            ("c1", "echo", json!({"text": "x"})),
        ]),
        assistant([text("ok")], StopReason::Stop),
    ]);
    let mut hooks = AgentHooks::default();
    hooks.before_tool_call = Some(agentstream::agent::BeforeToolCallHook::new(
        |call| match call.arguments.get("text").and_then(Value::as_str) {
            Some("secret") => ToolCallDecision::Block("blocked: secret".into()),
            _ => ToolCallDecision::Rewrite(
                json!({"text": "rewritten"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        },
    ));
    hooks.after_tool_call = Some(agentstream::agent::AfterToolCallHook::new(
        |_, mut output: ToolOutput| {
            output.content.push(text(" (checked)"));
            output
        },
    ));
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(
        r.results(),
        [
            ("c0".into(), "blocked: secret".into(), true),
            ("c1".into(), "rewritten".into(), false)
        ]
    );
    match &r.outcome.messages[2] {
        Message::ToolResult(blocked) => assert_eq!(blocked.content.len(), 1),
        other => panic!("{other:?}"),
    }
    match &r.outcome.messages[3] {
        Message::ToolResult(result) => {
            assert_eq!(result.content[1].as_text(), Some(" (checked)"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn transform_context_changes_the_request_but_not_the_history() {
    let model =
        ScriptedModel::new([assistant([text("ok")], StopReason::Stop)]).recording_requests();
    let mut hooks = AgentHooks::default();
    hooks.transform_context = Some(agentstream::agent::TransformContextHook::new(
        |context: &mut Context| {
            context.messages.remove(0);
        },
    ));
    let r = block_on(run(
        &model,
        &ToolSet::new(),
        "go",
        AgentOptions::default().with_hooks(hooks),
    ));
    let sent: Vec<String> = model.requests()[0]
        .messages
        .iter()
        .filter_map(user_text)
        .collect();
    assert_eq!(sent, ["go"]); // "earlier" was pruned from the request
    assert_eq!(r.outcome.messages.len(), 2);
}

/// Aborts the run's controller when called, then answers `stopped`.
struct Aborts<'a>(&'a AbortController);

impl AgentTool for Aborts<'_> {
    fn name(&self) -> &str {
        "aborts"
    }
    fn description(&self) -> &str {
        "Aborts the run."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: Map<String, Value>,
        _: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        self.0.abort();
        Ok(ToolOutput::text("stopped"))
    }
}

/// A deliberate difference from Pi (agent module docs): in sequential
/// mode a call reached after the abort is not run (Pi runs it with an
/// aborted signal); it gets the aborted result, `details: {}`.
#[test]
fn calls_not_started_at_an_abort_get_aborted_results_without_running() {
    let controller = AbortController::new();
    let model = ScriptedModel::new([
        calls(&[
            ("c0", "aborts", json!({})),
            ("c1", "echo", json!({"text": "b"})),
        ]),
        assistant([text("never")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(Aborts(&controller)).with(Echo);
    let options = AgentOptions::default()
        .with_tool_execution(ToolExecution::Sequential)
        .with_signal(controller.signal());
    let r = block_on(run(&model, &tools, "go", options));
    assert_eq!(
        r.results(),
        [
            ("c0".into(), "stopped".into(), false),
            (
                "c1".into(),
                agentstream::agent::TOOL_ABORTED_MESSAGE.into(),
                true
            ),
        ]
    );
    // Echo reports progress when it runs: it never ran.
    assert!(!r.types().contains(&"tool_execution_update"));
    assert_eq!(r.outcome.stop, AgentStop::Aborted);
    assert_eq!(model.calls(), 1);
}

/// A deliberate difference from Pi (agent module docs): the calls of a
/// turn that ended in `error` get not-executed results, so the history
/// stays linkage-valid (Pi's `turn_end` has `toolResults: []` and the
/// calls stay unanswered).
#[test]
fn an_error_turn_with_tool_calls_gets_not_executed_results() {
    let mut failed = assistant(
        [tool_call("c1", "echo", json!({"text": "half"}))],
        StopReason::Error,
    );
    failed.error_message = Some("stream cut".into());
    let model = ScriptedModel::new([failed]);
    let r = block_on(run(
        &model,
        &ToolSet::new().with(Echo),
        "go",
        AgentOptions::default(),
    ));
    assert_eq!(
        r.results(),
        [("c1".into(), NOT_EXECUTED_MESSAGE.into(), true)]
    );
    assert!(!r.types().contains(&"tool_execution_start"));
    assert_eq!(r.outcome.stop, AgentStop::Error);
    let Some(AgentEvent::TurnEnd { tool_results, .. }) = r
        .events
        .iter()
        .rev()
        .find(|e| matches!(e, AgentEvent::TurnEnd { .. }))
    else {
        panic!("no turn_end")
    };
    assert_eq!(tool_results[0].details, Some(json!({})));
}
