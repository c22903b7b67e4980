//! The stateful `Agent`: Pi's operations, its state, its subscribers, and
//! its use from other threads, on `!Send` models, and with no runtime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use agentstream::agent::{
    Agent, AgentError, AgentEvent, AgentOptions, AgentStop, GatedTool, Lagged, QueueMode,
    ToolOutput, ToolSet,
};
use agentstream::message::{
    assistant, text, tool_call, user, validate_linkage, AssistantMessage, Context, Message,
    StopReason,
};
use agentstream::model::{Model, ModelStream, ScriptedModel, StreamOptions};
use futures_util::future::join;
use futures_util::StreamExt;
use serde_json::json;

#[path = "support/agent.rs"]
mod agent_support;
use agent_support::Failing;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

fn done(text_: &str) -> AssistantMessage {
    assistant([text(text_)], StopReason::Stop)
}

fn wait_call(id: &str) -> AssistantMessage {
    assistant([tool_call(id, "wait", json!({}))], StopReason::ToolUse)
}

fn roles(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(Message::role).collect()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::User(u) => format!("user:{}", serde_json::to_value(u).unwrap()["content"]),
            Message::Assistant(a) => format!(
                "assistant:{}",
                a.content.first().and_then(|b| b.as_text()).unwrap_or("")
            ),
            Message::ToolResult(r) => format!("result:{}", r.tool_call_id),
            _ => "other".into(),
        })
        .collect()
}

#[test]
fn prompt_runs_the_loop_and_keeps_the_transcript_and_system_prompt() {
    let model = Arc::new(ScriptedModel::new([done("one"), done("two")]).recording_requests());
    let agent = Agent::new(Arc::clone(&model), ToolSet::new()).with_system_prompt("Be brief.");
    let outcome = block_on(agent.prompt_text("hi")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(roles(&agent.state().messages), ["user", "assistant"]);
    block_on(agent.prompt(vec![user("again").into()])).unwrap();
    let state = agent.state();
    assert_eq!(
        roles(&state.messages),
        ["user", "assistant", "user", "assistant"]
    );
    assert!(!state.is_running);
    assert!(state.pending_tool_calls.is_empty());
    assert!(state.last_error.is_none());
    assert_eq!(validate_linkage(&state.messages), vec![]);
    // The second call saw the whole transcript and the system prompt.
    let requests = model.requests();
    assert_eq!(requests[1].messages.len(), 3);
    assert_eq!(requests[1].system_prompt.as_deref(), Some("Be brief."));
}

#[test]
fn a_second_prompt_while_a_run_is_going_is_refused_as_busy() {
    let (gated, gate) = GatedTool::new("wait");
    let agent = Agent::new(
        ScriptedModel::new([wait_call("w1"), done("done")]),
        ToolSet::new().with(gated),
    );
    let second = Mutex::new(None);
    let continued = Mutex::new(None);
    let test = async {
        gate.started(1).await;
        assert!(agent.is_running());
        *second.lock().unwrap() = Some(agent.prompt_text("again").await);
        *continued.lock().unwrap() = Some(agent.continue_run().await);
        gate.release("w1", ToolOutput::text("ok"));
    };
    let (outcome, ()) = block_on(join(agent.prompt_text("go"), test));
    assert_eq!(outcome.unwrap().stop, AgentStop::Completed);
    let refused = second.into_inner().unwrap().unwrap().unwrap_err();
    assert_eq!(refused, AgentError::Busy);
    assert!(refused
        .to_string()
        .starts_with("Agent is already processing a prompt."));
    assert_eq!(
        continued.into_inner().unwrap().unwrap().unwrap_err(),
        AgentError::Busy
    );
    assert_eq!(agent.state().messages.len(), 4);
}

#[cfg(not(target_family = "wasm"))] // MaybeSend is no bound there
#[test]
fn steer_and_abort_work_from_another_thread_while_a_run_goes_on() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Agent<ScriptedModel>>();

    let (gated, gate) = GatedTool::new("wait");
    let agent = Arc::new(Agent::new(
        ScriptedModel::new([wait_call("w1"), wait_call("w2"), done("never")]),
        ToolSet::new().with(gated),
    ));
    let runner = {
        let agent = Arc::clone(&agent);
        std::thread::spawn(move || block_on(agent.prompt_text("go")))
    };
    block_on(gate.started(1));
    // From this thread: steer, then release the first call.
    agent.steer(user("steered").into());
    assert_eq!(agent.state().pending_tool_calls, ["w1"]);
    gate.release("w1", ToolOutput::text("ok"));
    block_on(gate.started(2));
    agent.abort();
    let outcome = runner.join().unwrap().unwrap();
    assert_eq!(outcome.stop, AgentStop::Aborted);
    let state = agent.state();
    assert!(!state.is_running);
    // The steering message landed after the first batch, before the second call.
    let texts = texts(&state.messages);
    let steered = texts.iter().position(|t| t.contains("steered")).unwrap();
    let first_result = texts.iter().position(|t| t == "result:w1").unwrap();
    let second_result = texts.iter().position(|t| t == "result:w2").unwrap();
    assert!(
        first_result < steered && steered < second_result,
        "{texts:?}"
    );
    assert_eq!(validate_linkage(&state.messages), vec![]);
}

#[test]
fn a_follow_up_runs_once_the_run_would_end_one_at_a_time_or_all() {
    let model = Arc::new(ScriptedModel::new([
        done("a"),
        done("b"),
        done("c"),
        done("d"),
    ]));
    let agent = Agent::new(Arc::clone(&model), ToolSet::new());
    agent.follow_up(user("f1").into());
    agent.follow_up(user("f2").into());
    block_on(agent.prompt_text("go")).unwrap();
    // One at a time (Pi's default): each follow-up starts its own turn.
    assert_eq!(model.calls(), 3);
    assert_eq!(
        roles(&agent.state().messages),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );

    let model = Arc::new(ScriptedModel::new([done("a"), done("b")]));
    let agent = Agent::new(Arc::clone(&model), ToolSet::new());
    agent.set_follow_up_mode(QueueMode::All);
    agent.follow_up(user("f1").into());
    agent.follow_up(user("f2").into());
    block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(model.calls(), 2);
    assert_eq!(
        roles(&agent.state().messages),
        ["user", "assistant", "user", "user", "assistant"]
    );
    assert!(!agent.has_queued_messages());
}

#[test]
fn steering_queued_before_a_prompt_lands_in_its_first_turn() {
    let model = Arc::new(ScriptedModel::new([done("a")]).recording_requests());
    let agent = Agent::new(Arc::clone(&model), ToolSet::new());
    agent.steer(user("early").into());
    block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(model.calls(), 1);
    assert_eq!(model.requests()[0].messages.len(), 2);
    assert_eq!(
        roles(&agent.state().messages),
        ["user", "user", "assistant"]
    );
}

#[test]
fn continue_run_resumes_after_an_abort_and_refuses_after_an_assistant_message() {
    let agent = Agent::new(ScriptedModel::new([done("resumed")]), ToolSet::new());
    assert_eq!(
        block_on(agent.continue_run()).unwrap_err(),
        AgentError::NothingToContinue
    );
    // A transcript that ends with a user message (as after an aborted prompt).
    agent.set_messages(vec![user("where were we").into()]);
    let outcome = block_on(agent.continue_run()).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
    assert_eq!(roles(&agent.state().messages), ["user", "assistant"]);
    let refused = block_on(agent.continue_run()).unwrap_err();
    assert_eq!(refused, AgentError::CannotContinueFrom("assistant".into()));
    assert_eq!(
        refused.to_string(),
        "Cannot continue from message role: assistant"
    );
}

#[test]
fn continue_run_after_an_assistant_message_takes_the_queued_steering_first() {
    let model = Arc::new(ScriptedModel::new([done("a"), done("b")]));
    let agent = Agent::new(Arc::clone(&model), ToolSet::new());
    block_on(agent.prompt_text("go")).unwrap();
    agent.follow_up(user("later").into());
    agent.steer(user("now").into());
    block_on(agent.continue_run()).unwrap();
    let texts = texts(&agent.state().messages);
    assert!(texts[2].contains("now"), "{texts:?}");
    // The follow-up is still queued... and runs when the run would end.
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(texts[4].contains("later"), "{texts:?}");
}

#[test]
fn abort_stops_the_run_and_wait_for_idle_resolves_after_it() {
    let (gated, gate) = GatedTool::new("wait");
    let agent = Agent::new(
        ScriptedModel::new([wait_call("w1"), done("never")]),
        ToolSet::new().with(gated),
    );
    // Idle: resolves at once.
    block_on(agent.wait_for_idle());
    let idle_seen = AtomicUsize::new(0);
    let test = async {
        gate.started(1).await;
        let wait = agent.wait_for_idle();
        agent.abort();
        wait.await;
        idle_seen.store(1, Ordering::SeqCst);
        assert!(!agent.is_running());
    };
    let (outcome, ()) = block_on(join(agent.prompt_text("go"), test));
    let outcome = outcome.unwrap();
    assert_eq!(outcome.stop, AgentStop::Aborted);
    assert_eq!(idle_seen.load(Ordering::SeqCst), 1);
    assert_eq!(validate_linkage(&agent.state().messages), vec![]);
}

#[test]
fn dropping_the_prompt_future_leaves_the_agent_idle() {
    let (gated, gate) = GatedTool::new("wait");
    let agent = Agent::new(
        ScriptedModel::new([wait_call("w1"), done("done")]),
        ToolSet::new().with(gated),
    );
    {
        let mut run = Box::pin(agent.prompt_text("go"));
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        // Poll until the call is running (the gate holds it there).
        for _ in 0..100 {
            assert!(run.as_mut().poll(&mut cx).is_pending());
            if !agent.state().pending_tool_calls.is_empty() {
                break;
            }
        }
        assert!(agent.is_running());
        assert_eq!(agent.state().pending_tool_calls, ["w1"]);
    }
    let state = agent.state();
    assert!(!state.is_running);
    assert!(state.pending_tool_calls.is_empty());
    assert_eq!(roles(&state.messages), ["user", "assistant"]);
    drop(gate);
}

#[test]
fn reset_clears_the_transcript_the_queues_and_the_last_error() {
    let agent = Agent::new(Failing(500), ToolSet::new());
    block_on(agent.prompt_text("go")).unwrap();
    agent.follow_up(user("queued").into());
    assert!(agent.state().last_error.is_some());
    assert!(agent.has_queued_messages());
    agent.reset();
    let state = agent.state();
    assert!(state.messages.is_empty());
    assert!(state.last_error.is_none());
    assert!(!agent.has_queued_messages());
}

#[test]
fn the_last_error_in_the_state_carries_the_typed_cause() {
    let agent = Agent::new(Failing(401), ToolSet::new());
    let outcome = block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Error);
    let error = agent.state().last_error.unwrap();
    assert_eq!(error.message, "HTTP 401");
    let cause = error.cause.unwrap();
    assert_eq!(cause.status(), Some(401));
    assert!(!cause.is_retryable());
    // The next run starts with no error.
    agent.set_model(Failing(200));
    agent.set_messages(Vec::new());
    let _ = block_on(agent.prompt_text("go"));
    assert_eq!(agent.state().last_error.unwrap().message, "HTTP 200");
}

#[test]
fn setters_take_effect_at_the_next_run() {
    let first = Arc::new(ScriptedModel::new([done("first")]));
    let second = Arc::new(ScriptedModel::new([done("second")]).recording_requests());
    let agent = Agent::new(Arc::clone(&first), ToolSet::new());
    block_on(agent.prompt_text("go")).unwrap();
    agent.set_model(Arc::clone(&second));
    agent.set_system_prompt(Some("new prompt".into()));
    let (gated, _gate) = GatedTool::new("wait");
    agent.set_tools(ToolSet::new().with(gated));
    agent.set_options(AgentOptions::default().with_max_turns(1));
    block_on(agent.prompt_text("again")).unwrap();
    assert_eq!(first.calls(), 1);
    assert_eq!(second.calls(), 1);
    let request = &second.requests()[0];
    assert_eq!(request.system_prompt.as_deref(), Some("new prompt"));
    assert_eq!(request.tools.as_ref().unwrap()[0].name, "wait");
    assert_eq!(agent.state().system_prompt.as_deref(), Some("new prompt"));
}

#[test]
fn every_subscriber_gets_every_event_in_order_and_a_dropped_one_leaves() {
    let model = ScriptedModel::new([
        assistant([tool_call("c1", "wait", json!({}))], StopReason::ToolUse),
        done("done"),
    ]);
    let (gated, gate) = GatedTool::new("wait");
    gate.release("c1", ToolOutput::text("ok"));
    let agent = Agent::new(model, ToolSet::new().with(gated));
    let mut streams: Vec<_> = (0..8).map(|_| agent.subscribe()).collect();
    let dropped = agent.subscribe();
    drop(dropped);
    let called = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&called);
    let id = agent.subscribe_fn(move |event| sink.lock().unwrap().push(event.type_name()));
    assert_eq!(agent.subscriber_count(), 9);
    block_on(agent.prompt_text("go")).unwrap();
    let expected = called.lock().unwrap().clone();
    assert_eq!(expected.first(), Some(&"agent_start"));
    assert_eq!(expected.last(), Some(&"agent_end"));
    assert!(expected.contains(&"tool_execution_end"));
    for stream in &mut streams {
        let mut types = Vec::new();
        while stream.backlog() > 0 {
            let event = block_on(stream.next()).unwrap().unwrap();
            types.push(event.type_name());
        }
        assert_eq!(types, expected);
    }
    assert!(agent.unsubscribe(id));
    assert!(!agent.unsubscribe(id));
    drop(streams);
    assert_eq!(agent.subscriber_count(), 0);
}

#[test]
fn a_slow_subscriber_lags_without_stalling_the_run_or_the_others() {
    let agent = Agent::new(ScriptedModel::new([done("a"), done("b")]), ToolSet::new());
    let mut slow = agent.subscribe_with_capacity(3);
    let mut fast = agent.subscribe();
    block_on(agent.prompt_text("go")).unwrap();
    block_on(agent.prompt_text("again")).unwrap();
    let mut all = Vec::new();
    while fast.backlog() > 0 {
        all.push(block_on(fast.next()).unwrap().unwrap().type_name());
    }
    // The slow one lost its oldest events, is told how many, and has the
    // latest three.
    let lagged = block_on(slow.next()).unwrap().unwrap_err();
    assert_eq!(
        lagged,
        Lagged {
            missed: (all.len() - 3) as u64
        }
    );
    let rest: Vec<_> = (0..3)
        .map(|_| block_on(slow.next()).unwrap().unwrap().type_name())
        .collect();
    assert_eq!(rest, all[all.len() - 3..]);
    assert_eq!(slow.backlog(), 0);
}

#[test]
fn a_subscription_ends_when_the_agent_is_dropped() {
    let agent = Agent::new(ScriptedModel::new([done("a")]), ToolSet::new());
    let mut events = agent.subscribe();
    block_on(agent.prompt_text("go")).unwrap();
    drop(agent);
    let count = block_on(async {
        let mut count = 0;
        while let Some(event) = events.next().await {
            event.unwrap();
            count += 1;
        }
        count
    });
    assert!(count > 4);
}

#[test]
fn a_subscriber_on_another_task_reads_the_events_as_they_come() {
    let (gated, gate) = GatedTool::new("wait");
    let agent = Agent::new(
        ScriptedModel::new([wait_call("w1"), done("done")]),
        ToolSet::new().with(gated),
    );
    let mut events = agent.subscribe();
    let reader = async {
        let mut types = Vec::new();
        while let Some(Ok(event)) = events.next().await {
            types.push(event.type_name());
            if event.type_name() == "tool_execution_start" {
                gate.release("w1", ToolOutput::text("ok"));
            }
            if let AgentEvent::AgentEnd { .. } = *event {
                break;
            }
        }
        types
    };
    let (outcome, types) = block_on(join(agent.prompt_text("go"), reader));
    assert_eq!(outcome.unwrap().stop, AgentStop::Completed);
    assert_eq!(types.last(), Some(&"agent_end"));
}

/// A model that is neither `Send` nor `Sync`.
struct Local {
    inner: ScriptedModel,
    _not_send: std::rc::Rc<()>,
}

impl Model for Local {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.inner.stream(context, options)
    }
}

#[test]
fn an_agent_works_with_a_model_that_is_not_send() {
    let agent = Agent::new(
        Local {
            inner: ScriptedModel::new([done("local")]),
            _not_send: std::rc::Rc::new(()),
        },
        ToolSet::new(),
    );
    let outcome = block_on(agent.prompt_text("go")).unwrap();
    assert_eq!(outcome.stop, AgentStop::Completed);
}

#[test]
fn an_agent_runs_with_no_runtime_by_polling_its_future() {
    let agent = Agent::new(ScriptedModel::new([done("polled")]), ToolSet::new());
    let mut run = std::pin::pin!(agent.prompt_text("go"));
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let outcome = loop {
        if let Poll::Ready(outcome) = run.as_mut().poll(&mut cx) {
            break outcome;
        }
    };
    assert_eq!(outcome.unwrap().stop, AgentStop::Completed);
    assert_eq!(agent.state().messages.len(), 2);
}

use std::future::Future;
