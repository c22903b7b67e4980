//! Chapter 04 (`origin/ch04-scripted-model.zh.txt` in the shared folder
//! beside the repository; nothing here reads it), section by section:
//! every trace the chapter prints, replayed through `ScriptedModel`'s
//! default (short) trace, event by event and field by field. The
//! chapter's own strings are kept, so a reader can put this file beside
//! it. The last test shows the full sequence (Pi's shape) beside the
//! chapter's for the two cases where they differ.
#![cfg(not(loom))]

mod support;

use agentstream::message::{
    assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
};
use agentstream::model::{
    validate_events, AbortController, DoneReason, ErrorReason, Model, ModelEvent, ModelStream,
    ScriptedModel, ScriptedTurn, StreamOptions, ABORTED_MESSAGE, EXHAUSTED_MESSAGE,
};
use futures_util::StreamExt;
use serde_json::{json, Value};
use support::run_local;

/// Plays one call to its end: every event, then the result.
fn play(mut stream: ModelStream) -> (Vec<ModelEvent>, AssistantMessage) {
    run_local(async {
        let events: Vec<ModelEvent> = stream.by_ref().collect().await;
        let result = stream.result().await;
        (events, result)
    })
}

/// The event types joined as the chapter prints them.
fn trace(events: &[ModelEvent]) -> String {
    let types: Vec<&str> = events.iter().map(ModelEvent::type_name).collect();
    types.join(" → ")
}

fn user_context(text: &str) -> Context {
    Context::from_messages([user(text).into()])
}

/// `event` in Pi's JSON.
fn wire(event: &ModelEvent) -> Value {
    serde_json::to_value(event).unwrap()
}

/// The chapter's first turn: `text("先看")` and the `read` call `c1`.
fn first_turn() -> AssistantMessage {
    assistant(
        [
            text("先看"),
            tool_call("c1", "read", json!({"path": "README.md"})),
        ],
        StopReason::ToolUse,
    )
}

fn second_turn() -> AssistantMessage {
    assistant([text("第二轮")], StopReason::Stop)
}

fn assert_valid(events: &[ModelEvent]) {
    let diagnostics = validate_events(events);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

/// "两次调用，各自拿到哪一轮": one instance, two contexts, two turns; the
/// first context is changed after the call and the recorded request is
/// not.
#[test]
fn two_calls_each_get_their_own_turn() {
    let model = ScriptedModel::new([
        assistant([text("先看")], StopReason::Stop),
        assistant([text("第二轮")], StopReason::Stop),
    ])
    .recording_requests();

    let mut first_context = user_context("请求一");
    let first_stream = model.stream(&first_context, StreamOptions::default());
    first_context.messages.push(user("事后追加").into());
    let (first_events, first_result) = play(first_stream);

    let second_stream = model.stream(&user_context("请求二"), StreamOptions::default());
    let (second_events, second_result) = play(second_stream);

    let printed = [
        trace(&first_events),
        first_result.text(),
        trace(&second_events),
        second_result.text(),
        model.requests().len().to_string(),
        model.requests()[0].messages.len().to_string(),
    ];
    assert_eq!(
        printed,
        [
            "start → text_delta → done",
            "先看",
            "start → text_delta → done",
            "第二轮",
            "2",
            "1"
        ]
    );
}

/// "cursor 只是一个数组下标": a third call past two turns finds no turn,
/// and that is the script running out, not the last turn again.
#[test]
fn the_cursor_is_an_array_index() {
    let model = ScriptedModel::new([
        assistant([text("先看")], StopReason::Stop),
        assistant([text("第二轮")], StopReason::Stop),
    ]);
    let texts: Vec<String> = (0..3)
        .map(|_| {
            let (_, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
            result.text()
        })
        .collect();
    assert_eq!(texts, ["先看", "第二轮", ""]);
    assert_eq!((model.calls(), model.remaining()), (3, 0));
}

/// "引用和快照记录的是两个时间点": the request is a snapshot of the
/// context when the call was made.
#[test]
fn a_reference_and_a_snapshot_record_two_moments() {
    let model = ScriptedModel::new([second_turn()]).recording_requests();
    let mut context = user_context("请求一");
    let stream = model.stream(&context, StreamOptions::default());
    context.messages.push(user("事后追加").into());
    assert_eq!(context.messages.len(), 2);
    assert_eq!(model.requests()[0].messages.len(), 1);
    assert_eq!(model.requests()[0], user_context("请求一"));
    drop(stream);
}

/// "microtask 把返回和生产分成两个时刻": `stream` returns before any event
/// exists; the turn is chosen synchronously, the events come after one
/// yield.
#[test]
fn returning_and_producing_are_two_moments() {
    use std::task::Poll;

    let model = ScriptedModel::new([first_turn(), second_turn()]);
    let mut stream = model.stream(&user_context("x"), StreamOptions::default());
    // The cursor already moved: the turn was taken in the synchronous part.
    assert_eq!((model.calls(), model.remaining()), (1, 1));
    let waker = support::CountingWaker::new();
    // The first poll runs the producer up to its yield: nothing yet.
    assert_eq!(waker.poll(&mut stream.next()), Poll::Pending);
    assert_eq!(waker.wakes(), 1, "the yield wakes the task at once");
    match waker.poll(&mut stream.next()) {
        Poll::Ready(Some(ModelEvent::Start { partial })) => assert_eq!(partial.content_len(), 0),
        other => panic!("expected start, got {other:?}"),
    }
}

/// "纯文本消息怎样进入流": `start` with an empty partial whose stop reason
/// is `stop`, a `text_delta` whose partial already holds the delta, and
/// `done` with the scripted message, which is also `result()`.
#[test]
fn how_a_plain_text_message_enters_the_stream() {
    let model = ScriptedModel::new([assistant([text("先看")], StopReason::Stop)]);
    let (events, result) = play(model.stream(&user_context("请求一"), StreamOptions::default()));
    assert_eq!(trace(&events), "start → text_delta → done");
    assert_valid(&events);

    let start = wire(&events[0]);
    assert_eq!(start["partial"]["content"], json!([]));
    assert_eq!(start["partial"]["stopReason"], "stop");

    let delta = wire(&events[1]);
    assert_eq!(delta["contentIndex"], 0);
    assert_eq!(delta["delta"], "先看");
    assert_eq!(
        delta["partial"]["content"],
        json!([{"type": "text", "text": "先看"}])
    );

    let ModelEvent::Done { reason, message } = &events[2] else {
        panic!("the turn ends with done");
    };
    assert_eq!(*reason, DoneReason::Stop);
    assert_eq!(message.content, [text("先看")]);
    assert_eq!(**message, result);
}

/// "第一轮再加一个 tool call": the tool call's `toolcall_delta` carries the
/// whole raw JSON once, its partial holds the call with `arguments: {}` and
/// `rawArguments`, and `toolcall_end` puts the complete call in the same
/// place; both partials keep the text at index 0.
#[test]
fn the_first_turn_gains_a_tool_call() {
    let model = ScriptedModel::new([first_turn(), second_turn()]);
    let (events, result) = play(model.stream(&user_context("请求一"), StreamOptions::default()));
    assert_eq!(
        trace(&events),
        "start → text_delta → toolcall_delta → toolcall_end → done"
    );
    assert_valid(&events);

    let delta = wire(&events[2]);
    assert_eq!(delta["contentIndex"], 1);
    assert_eq!(delta["delta"], r#"{"path":"README.md"}"#);
    assert_eq!(
        delta["partial"]["content"],
        json!([
            {"type": "text", "text": "先看"},
            {
                "type": "toolCall",
                "id": "c1",
                "name": "read",
                "arguments": {},
                "rawArguments": r#"{"path":"README.md"}"#,
            },
        ])
    );

    let end = wire(&events[3]);
    assert_eq!(end["contentIndex"], 1);
    let complete = json!({
        "type": "toolCall",
        "id": "c1",
        "name": "read",
        "arguments": {"path": "README.md"},
    });
    assert_eq!(end["toolCall"], complete);
    assert_eq!(
        end["partial"]["content"],
        json!([{"type": "text", "text": "先看"}, complete])
    );

    let done = wire(&events[4]);
    assert_eq!(done["reason"], "toolUse");
    assert_eq!(result, first_turn());

    let (events, result) = play(model.stream(&user_context("请求二"), StreamOptions::default()));
    assert_eq!(trace(&events), "start → text_delta → done");
    assert_eq!(result.text(), "第二轮");
}

/// "三种失败仍然结束同一个流", the explicit error turn: converted to a
/// canonical assistant message and played through the normal projection;
/// `result()` resolves with it.
#[test]
fn three_failures_an_explicit_error_keeps_its_partial_text() {
    let model = ScriptedModel::new([
        ScriptedTurn::failure(ErrorReason::Error, "rate limited").with_partial_text("正在")
    ]);
    let (events, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
    assert_eq!(trace(&events), "start → text_delta → error");
    assert_valid(&events);
    assert_eq!(wire(&events[1])["delta"], "正在");
    assert_eq!(wire(&events[2])["reason"], "error");
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(result.error_message.as_deref(), Some("rate limited"));
    assert_eq!(result.text(), "正在");
}

/// The explicit failure turn without `partialText` takes the same path:
/// the canonical message has no content, so the consumer sees `start`
/// then `error`. Only the two failures before any content (below) are a
/// lone `error`.
#[test]
fn three_failures_an_explicit_failure_without_partial_text_starts_then_errors() {
    let model = ScriptedModel::new([
        ScriptedTurn::failure(ErrorReason::Aborted, "user cancelled"),
        ScriptedTurn::failure(ErrorReason::Error, "rate limited"),
    ]);
    let (events, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
    assert_eq!(trace(&events), "start → error");
    assert_valid(&events);
    assert_eq!(wire(&events[1])["reason"], "aborted");
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.error_message.as_deref(), Some("user cancelled"));
    assert!(result.content.is_empty());

    let (events, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
    assert_eq!(trace(&events), "start → error");
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(result.error_message.as_deref(), Some("rate limited"));
}

/// "turn 不存在": a call past the script is one `error` event with no
/// `start`, inside the stream (not a synchronous failure), and it is
/// still recorded.
#[test]
fn three_failures_an_exhausted_script_is_a_lone_error() {
    let model = ScriptedModel::new([second_turn()]).recording_requests();
    let _ = play(model.stream(&user_context("x"), StreamOptions::default()));
    let (events, result) = play(model.stream(&user_context("y"), StreamOptions::default()));
    assert_eq!(trace(&events), "error");
    assert_valid(&events);
    assert_eq!(wire(&events[0])["reason"], "error");
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(result.error_message.as_deref(), Some(EXHAUSTED_MESSAGE));
    assert_eq!(model.requests().len(), 2);
}

/// "signal 已预取消": one `aborted` error with no `start`; the call is
/// still recorded and consumes its turn, because both happen in the
/// synchronous part before the check.
#[test]
fn three_failures_a_pre_aborted_signal_is_a_lone_error_that_consumes_its_turn() {
    let model = ScriptedModel::new([first_turn(), second_turn()]).recording_requests();
    let controller = AbortController::new();
    controller.abort();
    let options = StreamOptions::default().with_signal(controller.signal());
    let (events, result) = play(model.stream(&user_context("x"), options));
    assert_eq!(trace(&events), "error");
    assert_valid(&events);
    assert_eq!(wire(&events[0])["reason"], "aborted");
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(model.requests().len(), 1);
    let (_, next) = play(model.stream(&user_context("y"), StreamOptions::default()));
    assert_eq!(next.text(), "第二轮", "the aborted call consumed its turn");
}

/// "迁移 · 两个 text block 的 contentIndex".
#[test]
fn transfer_two_text_blocks_get_content_indexes_zero_and_one() {
    let model = ScriptedModel::new([assistant([text("A"), text("B")], StopReason::Stop)]);
    let (events, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
    let indexes: Vec<usize> = events
        .iter()
        .filter_map(ModelEvent::content_index)
        .collect();
    assert_eq!(indexes, [0, 1]);
    assert_eq!(
        wire(&events[2])["partial"]["content"],
        json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}])
    );
    assert_eq!(result.content, [text("A"), text("B")]);
}

/// The two modes side by side, where they differ: the full sequence shows
/// a streaming tool call as pi-ai does (the arguments parsed so far, no
/// `rawArguments`) and a failure with nothing streamed as a lone `error`,
/// as when a provider's request itself fails.
#[test]
fn the_full_sequence_differs_from_the_chapter_in_two_places() {
    let model = ScriptedModel::new([
        ScriptedTurn::message(first_turn()).full_sequence(),
        ScriptedTurn::failure(ErrorReason::Aborted, "user cancelled").full_sequence(),
    ]);
    let (events, _) = play(model.stream(&user_context("x"), StreamOptions::default()));
    let delta = events
        .iter()
        .find(|event| event.type_name() == "toolcall_delta")
        .map(wire)
        .unwrap();
    assert_eq!(
        delta["partial"]["content"][1],
        json!({"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "README.md"}})
    );

    let (events, result) = play(model.stream(&user_context("x"), StreamOptions::default()));
    assert_eq!(trace(&events), "error");
    assert_eq!(result.error_message.as_deref(), Some("user cancelled"));
}
