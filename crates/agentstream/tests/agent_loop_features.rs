//! What a real agent needs from the loop: async hooks, per-call model
//! options, the typed cause of a failed turn, a run that stops when its
//! event stream is dropped, an `FnMut` event callback, typed tools and
//! tool errors with details and a source, typed results in the events,
//! messages shared (not copied) between the events that carry them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentstream::agent::{
    agent_loop, run_agent, AfterToolCallHook, AgentEvent, AgentHooks, AgentOptions, AgentStop,
    AgentTool, ApiKeyHook, BeforeToolCallHook, StopAfterTurnHook, ToolCallDecision, ToolContext,
    ToolError, ToolOutput, ToolSet, TransformContextHook, TypedTool,
};
use agentstream::message::{
    assistant, text, tool_call, user, Context, Message, SharedMessage, StopReason,
};
use agentstream::model::{
    ApiKey, Model, ModelStream, ReasoningEffort, ScriptedModel, StreamOptions, ToolChoice,
};
use agentstream::yield_now;
use serde_json::{json, Value};

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::{object_tool, run_go as collect, Failing};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

/// Counts its calls in `calls`; answers `ok`.
fn counted(calls: Arc<AtomicUsize>) -> impl AgentTool {
    object_tool("count", "Counts its calls.", move |_| {
        let calls = Arc::clone(&calls);
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            yield_now().await;
            Ok(ToolOutput::text("ok"))
        }
    })
}

fn call_turn(id: &str, name: &str, args: Value) -> agentstream::message::AssistantMessage {
    assistant([tool_call(id, name, args)], StopReason::ToolUse)
}

/// Each tool result's text and whether it is an error, in history order.
fn result_texts(outcome: &agentstream::agent::AgentOutcome) -> Vec<(String, bool)> {
    agent_support::tool_results(&outcome.messages)
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect()
}

/// Each tool result's (text, is error) of a run with `options` and the
/// tool [`Echo`], in which the model calls `echo` once for each of `calls`
/// (call id, arguments) in one turn, then says "done".
fn echo_results(calls: [(&str, Value); 2], options: AgentOptions) -> Vec<(String, bool)> {
    let model = ScriptedModel::new([
        assistant(
            calls.map(|(id, arguments)| tool_call(id, "echo", arguments)),
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(Echo);
    let (outcome, _) = block_on(collect(&model, &tools, options));
    result_texts(&outcome)
}

#[test]
fn run_agent_takes_an_fnmut_callback_that_collects_events_into_a_vec() {
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let mut events: Vec<AgentEvent> = Vec::new();
    let mut count = 0usize;
    block_on(run_agent(
        &model,
        &ToolSet::new(),
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |event| {
            count += 1;
            events.push(event);
        },
    ));
    assert_eq!(count, events.len());
    assert_eq!(
        events.first().map(AgentEvent::type_name),
        Some("agent_start")
    );
    assert_eq!(events.last().map(AgentEvent::type_name), Some("agent_end"));
}

#[test]
fn an_async_before_tool_call_hook_blocks_and_rewrites_after_awaiting() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&seen);
    let hooks =
        AgentHooks::default().with_before_tool_call(BeforeToolCallHook::new_async(move |call| {
            let id = call.id.clone();
            let recorded = Arc::clone(&recorded);
            async move {
                // A human answers: the answer comes after a suspension.
                yield_now().await;
                recorded.lock().unwrap().push(id.clone());
                match id.as_str() {
                    "blocked" => ToolCallDecision::Block("denied by the user".into()),
                    _ => ToolCallDecision::Rewrite(
                        json!({"text": "rewritten"}).as_object().unwrap().clone(),
                    ),
                }
            }
        }));
    let results = echo_results(
        [
            ("blocked", json!({"text": "a"})),
            ("rewritten", json!({"text": "b"})),
        ],
        AgentOptions::default().with_hooks(hooks),
    );
    assert_eq!(
        results,
        [
            ("denied by the user".to_owned(), true),
            ("rewritten".to_owned(), false)
        ]
    );
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["blocked", "rewritten"]);
}

#[test]
fn async_after_tool_call_and_transform_context_hooks_are_awaited() {
    let hooks = AgentHooks::default()
        .with_after_tool_call(AfterToolCallHook::new_async(
            |_, output: ToolOutput| async move {
                yield_now().await;
                output.with_details(json!({"audited": true}))
            },
        ))
        .with_transform_context(TransformContextHook::new_async(
            |mut context: Context| async move {
                yield_now().await;
                context.system_prompt = Some("compacted".into());
                context
            },
        ));
    let model = ScriptedModel::new([
        call_turn("c1", "echo", json!({"text": "x"})),
        assistant([text("done")], StopReason::Stop),
    ])
    .recording_requests();
    let tools = ToolSet::new().with(Echo);
    let (outcome, events) = block_on(collect(
        &model,
        &tools,
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(outcome.stop, AgentStop::Completed);
    let end = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(end.details, Some(json!({"audited": true})));
    // Every model call saw the transformed copy; the history did not change.
    for request in model.requests() {
        assert_eq!(request.system_prompt.as_deref(), Some("compacted"));
    }
    assert_eq!(model.requests().len(), 2);
}

/// Records the options of every call, then answers as the script says.
struct Recording {
    inner: ScriptedModel,
    options: Mutex<Vec<StreamOptions>>,
}

impl Model for Recording {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.options.lock().unwrap().push(options.clone());
        self.inner.stream(context, options)
    }
}

#[test]
fn the_runs_stream_options_reach_every_model_call() {
    let model = Recording {
        inner: ScriptedModel::new([
            call_turn("c1", "echo", json!({"text": "x"})),
            assistant([text("done")], StopReason::Stop),
        ]),
        options: Mutex::new(Vec::new()),
    };
    let stream = StreamOptions::default()
        .with_temperature(0.25)
        .with_max_tokens(333)
        .with_stop(["END"])
        .with_tool_choice(ToolChoice::Tool("echo".into()))
        .with_reasoning_effort(ReasoningEffort::Low);
    let tools = ToolSet::new().with(Echo);
    block_on(collect(
        &model,
        &tools,
        AgentOptions::default().with_stream_options(stream),
    ));
    let seen = model.options.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for options in seen.iter() {
        assert_eq!(options.temperature, Some(0.25));
        assert_eq!(options.max_tokens, Some(333));
        assert_eq!(options.stop.as_deref(), Some(&["END".to_owned()][..]));
        assert!(matches!(&options.tool_choice, Some(ToolChoice::Tool(name)) if name == "echo"));
        assert_eq!(options.reasoning_effort, Some(ReasoningEffort::Low));
        // The run's own signal is always there.
        assert!(options.signal.is_some());
    }
}

#[test]
fn the_api_key_hook_is_asked_before_every_call_and_none_keeps_the_runs_key() {
    // Pi's `getApiKey(...) || config.apiKey`: a key from the hook wins; no
    // key (or an empty one) leaves the run's own.
    let model = Recording {
        inner: ScriptedModel::new([
            call_turn("c1", "echo", json!({"text": "x"})),
            call_turn("c2", "echo", json!({"text": "y"})),
            assistant([text("done")], StopReason::Stop),
        ]),
        options: Mutex::new(Vec::new()),
    };
    let asked = Arc::new(AtomicUsize::new(0));
    let hook = {
        let asked = Arc::clone(&asked);
        ApiKeyHook::new(move || match asked.fetch_add(1, Ordering::SeqCst) {
            0 => Some(ApiKey::from("fresh-1")),
            1 => None,
            _ => Some(ApiKey::from("")),
        })
    };
    let options = AgentOptions::default()
        .with_stream_options(StreamOptions::default().with_api_key("configured"))
        .with_hooks(AgentHooks::default().with_api_key(hook));
    let tools = ToolSet::new().with(Echo);
    block_on(collect(&model, &tools, options));
    assert_eq!(asked.load(Ordering::SeqCst), 3, "once per model call");
    let keys: Vec<_> = model
        .options
        .lock()
        .unwrap()
        .iter()
        .map(|o| o.api_key.as_ref().map(|k| k.as_str().to_owned()))
        .collect();
    assert_eq!(
        keys,
        [
            Some("fresh-1".to_owned()),
            Some("configured".to_owned()),
            Some("configured".to_owned())
        ]
    );
}

#[test]
fn a_stop_after_turn_hook_ends_the_run_before_queued_steering() {
    // Pi asks `shouldStopAfterTurn` right after `turn_end`, before it
    // polls the steering queue: a queued message is not delivered.
    let model = ScriptedModel::new([
        call_turn("c1", "echo", json!({"text": "x"})),
        assistant([text("never")], StopReason::Stop),
    ]);
    let polled = Arc::new(AtomicUsize::new(0));
    let steering = {
        let polled = Arc::clone(&polled);
        Arc::new(move || {
            polled.fetch_add(1, Ordering::SeqCst);
            vec![user("late").into()]
        }) as agentstream::agent::MessageSource
    };
    let hooks = AgentHooks::default()
        .with_should_stop_after_turn(StopAfterTurnHook::new(|turn| {
            turn.tool_results.len() == 1 && turn.new_messages.len() == 4
        }))
        .with_steering(steering);
    let tools = ToolSet::new().with(Echo);
    let (outcome, events) = block_on(collect(
        &model,
        &tools,
        AgentOptions::default().with_hooks(hooks),
    ));
    assert_eq!(outcome.stop, AgentStop::StoppedAfterTurn);
    assert_eq!(outcome.turns, 1);
    // Polled once before the first turn (its message joined the prompt),
    // never after the hook said stop.
    assert_eq!(polled.load(Ordering::SeqCst), 1);
    assert_eq!(events.last().map(AgentEvent::type_name), Some("agent_end"));
    let before_end = &events[events.len() - 2];
    assert_eq!(before_end.type_name(), "turn_end");
}

#[test]
fn a_failed_turns_typed_cause_is_in_the_outcome() {
    for status in [401u16, 429] {
        let (outcome, _) = block_on(collect(
            &Failing(status),
            &ToolSet::new(),
            AgentOptions::default(),
        ));
        assert_eq!(outcome.stop, AgentStop::Error);
        let cause = outcome.error_cause.clone().expect("a cause");
        assert_eq!(cause.status(), Some(status));
        assert_eq!(cause.is_retryable(), status == 429);
        assert_eq!(
            outcome.error_message(),
            Some(format!("HTTP {status}").as_str())
        );
    }
    let model = ScriptedModel::new([assistant([text("fine")], StopReason::Stop)]);
    let (outcome, _) = block_on(collect(&model, &ToolSet::new(), AgentOptions::default()));
    assert!(outcome.error_cause.is_none());
    assert_eq!(outcome.error_message(), None);
}

#[test]
fn dropping_the_event_stream_of_agent_loop_stops_the_run() {
    let tool_calls = Arc::new(AtomicUsize::new(0));
    let tools = ToolSet::new().with(counted(Arc::clone(&tool_calls)));
    // A model that would call the tool for ever.
    let model =
        ScriptedModel::new((0..1000).map(|i| call_turn(&format!("c{i}"), "count", json!({}))));
    let (events, run) = agent_loop(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
    );
    let mut events = Box::pin(events);
    let mut run = Box::pin(run);
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    // Run until the first tool call has ended, reading the events.
    use futures_util::StreamExt;
    loop {
        let _ = run.as_mut().poll(&mut cx);
        let mut ended = false;
        while let std::task::Poll::Ready(Some(Ok(event))) = events.poll_next_unpin(&mut cx) {
            ended |= event.type_name() == "tool_execution_end";
        }
        if ended {
            break;
        }
    }
    let (model_calls, tools_run) = (model.calls(), tool_calls.load(Ordering::SeqCst));
    drop(events);
    // The next poll ends the run: no model or tool call after the drop.
    assert!(run.as_mut().poll(&mut cx).is_ready());
    assert_eq!(model.calls(), model_calls);
    assert_eq!(tool_calls.load(Ordering::SeqCst), tools_run);
    assert!(model.calls() < 5, "{} model calls", model.calls());
}

use std::future::Future;

/// Echoes its text, with typed arguments.
struct Echo;

#[derive(serde::Deserialize)]
struct EchoArgs {
    text: String,
}

impl TypedTool for Echo {
    type Args = EchoArgs;
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its text."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    async fn call(&self, args: EchoArgs, _: ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text))
    }
}

#[test]
fn a_typed_tool_gets_its_deserialized_arguments_and_an_error_for_others() {
    // Without the validator, the typed tool's own deserialization reports.
    let results = echo_results(
        [
            ("good", json!({"text": "typed"})),
            ("bad", json!({"text": ["not", "a", "string"]})),
        ],
        AgentOptions::default().with_validator(None),
    );
    assert_eq!(results[0], ("typed".to_owned(), false));
    assert!(results[1].1);
    assert!(
        results[1].0.starts_with("invalid arguments for echo: "),
        "{}",
        results[1].0
    );
}

/// Fails with details and a source.
fn failing2() -> impl AgentTool {
    object_tool("fail", "Fails.", |_| async {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        Err(ToolError::new("cannot read x")
            .with_details(json!({"path": "x", "errno": 13}))
            .with_source(io))
    })
}

#[test]
fn a_tool_errors_details_become_the_results_details_and_its_source_is_kept() {
    use core::error::Error;
    let error = ToolError::new("outer").with_source(std::io::Error::other("inner"));
    assert_eq!(
        error.source().map(|e| e.to_string()).as_deref(),
        Some("inner")
    );

    let model = ScriptedModel::new([
        call_turn("c1", "fail", json!({})),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(failing2());
    let (outcome, events) = block_on(collect(&model, &tools, AgentOptions::default()));
    let result = outcome
        .messages
        .iter()
        .find_map(|m| match m {
            Message::ToolResult(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.content[0].as_text(), Some("cannot read x"));
    assert_eq!(result.details, Some(json!({"path": "x", "errno": 13})));
    let end = events
        .iter()
        .find(|e| e.type_name() == "tool_execution_end")
        .unwrap();
    // Typed in Rust, Pi's JSON on the wire.
    assert_eq!(
        serde_json::to_value(end).unwrap(),
        json!({
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "fail",
            "result": {
                "content": [{"type": "text", "text": "cannot read x"}],
                "details": {"path": "x", "errno": 13}
            },
            "isError": true
        })
    );
}

#[test]
fn a_result_without_details_serializes_without_a_details_key() {
    let model = ScriptedModel::new([
        call_turn("c1", "echo", json!({"text": "x"})),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(Echo);
    let (_, events) = block_on(collect(&model, &tools, AgentOptions::default()));
    let end = events
        .iter()
        .find(|e| e.type_name() == "tool_execution_end")
        .unwrap();
    match end {
        AgentEvent::ToolExecutionEnd { result, .. } => {
            assert_eq!(result.content[0].as_text(), Some("x"));
            assert_eq!(result.details, None);
        }
        _ => unreachable!(),
    }
    assert_eq!(
        serde_json::to_value(end).unwrap()["result"],
        json!({"content": [{"type": "text", "text": "x"}]})
    );
}

#[cfg(not(target_family = "wasm"))] // MaybeSend is no bound there
#[test]
fn tools_and_their_calls_are_send_on_native_targets() {
    fn is_send_sync<T: Send + Sync>(_: &T) {}
    let tools = ToolSet::new().with(Echo).with(failing2());
    is_send_sync(&tools);
    let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
    let run = run_agent(
        &model,
        &tools,
        Context::default(),
        vec![user("go").into()],
        AgentOptions::default(),
        |_| {},
    );
    fn is_send<T: Send>(_: &T) {}
    is_send(&run);
    std::thread::scope(|scope| {
        scope.spawn(move || block_on(run));
    });
}

#[test]
fn the_events_share_each_message_instead_of_copying_it() {
    let model = ScriptedModel::new([
        assistant(
            [
                tool_call("c1", "count", json!({})),
                tool_call("c2", "count", json!({})),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(counted(Arc::default()));
    let (outcome, events) = block_on(collect(&model, &tools, AgentOptions::default()));
    // Each message's `message_start` and `message_end`, in order.
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    for event in &events {
        match event {
            AgentEvent::MessageStart { message } => starts.push(message),
            AgentEvent::MessageEnd { message } => ends.push(message),
            _ => {}
        }
    }
    let Some(AgentEvent::AgentEnd { messages }) = events.last() else {
        panic!("agent_end last")
    };
    // Prompt, call, two results, answer: each `message_end` holds the
    // message `agent_end` lists, not a copy of it.
    assert_eq!(ends.len(), 5);
    assert_eq!(messages.len(), 5);
    for (end, listed) in ends.iter().zip(messages) {
        assert!(end.ptr_eq(listed), "{} shared", end.role());
    }
    // A whole message's start is its end; a streamed one's is not.
    for (start, end) in starts.iter().zip(&ends) {
        assert_eq!(start.ptr_eq(end), end.role() != "assistant");
    }
    let turn_ends: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => Some((message, tool_results)),
            _ => None,
        })
        .collect();
    let [(call, results), (answer, no_results)] = turn_ends[..] else {
        panic!("two turns")
    };
    assert!(ends[1].ptr_eq(&SharedMessage::Assistant(call.clone())));
    assert!(ends[4].ptr_eq(&SharedMessage::Assistant(answer.clone())));
    assert_eq!(results.len(), 2);
    for (result, end) in results.iter().zip(&ends[2..4]) {
        assert!(end.ptr_eq(&SharedMessage::ToolResult(result.clone())));
    }
    assert!(no_results.is_empty());
    // The outcome holds the same messages, owned.
    assert_eq!(outcome.messages, *messages);
}
