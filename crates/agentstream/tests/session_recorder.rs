//! An [`Agent`] resumed from a session file and writing to it as it runs
//! (#40 section 1): `Agent::from_session` and `SessionRecorder`.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]
#![cfg(feature = "std")]

use std::path::PathBuf;

use agentstream::agent::{Agent, ToolSet};
use agentstream::message::{assistant, text, Message, StopReason, UserContent};
use agentstream::model::ScriptedModel;
use agentstream::session::{
    parse_session, AgentMessage, SessionEntry, SessionRecorder, SessionWriter,
};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentstream-recorder-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::User(u) => match &u.content {
                UserContent::Text(t) => t.clone(),
                UserContent::Blocks(_) => String::from("<blocks>"),
            },
            Message::Assistant(a) => a.text(),
            Message::ToolResult(_) => String::from("<tool result>"),
            _ => String::new(),
        })
        .collect()
}

#[test]
fn an_agent_resumes_a_session_and_appends_to_it_with_model_and_thinking_changes() {
    let dir = temp_dir("resume");
    // The first run writes a new session.
    let recorder = SessionRecorder::new(SessionWriter::create(&dir, "/work/x"));
    recorder
        .record_model_change("anthropic", "claude-x")
        .unwrap();
    let model = ScriptedModel::new([assistant([text("one")], StopReason::Stop)]);
    let agent = Agent::from_session(
        model,
        ToolSet::new(),
        &recorder.with_writer(|w| w.context()).unwrap(),
    );
    recorder.attach(&agent);
    futures_executor::block_on(agent.prompt_text("first")).unwrap();
    assert!(recorder.take_error().is_none());
    let path = recorder.with_writer(|w| w.path().to_owned());
    drop(agent);
    drop(recorder);

    // The second opens the file, resumes, changes the thinking level and
    // goes on.
    let recorder = SessionRecorder::new(SessionWriter::open(&path, "/work/x").unwrap());
    let context = recorder.with_writer(|w| w.context()).unwrap();
    // The last model on the path: the scripted answer's, after the
    // `model_change` (Pi's rule).
    assert_eq!(context.model.as_ref().unwrap().model_id, "scripted");
    let model = ScriptedModel::new([assistant([text("two")], StopReason::Stop)]);
    let agent = Agent::from_session(model, ToolSet::new(), &context);
    assert_eq!(texts(&agent.state().messages), ["first", "one"]);
    recorder.attach(&agent);
    recorder.record_thinking_level_change("high").unwrap();
    futures_executor::block_on(agent.prompt_text("second")).unwrap();
    assert!(recorder.take_error().is_none());

    let file = std::fs::read_to_string(&path).unwrap();
    let parsed = parse_session(&file).unwrap();
    let kinds: Vec<&str> = parsed
        .entries
        .iter()
        .map(|e| match e {
            SessionEntry::Session(_) => "session",
            SessionEntry::Message(_) => "message",
            SessionEntry::ModelChange(_) => "model_change",
            SessionEntry::ThinkingLevelChange(_) => "thinking_level_change",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "model_change",
            "message",
            "message",
            "thinking_level_change",
            "message",
            "message"
        ]
    );
    let reread = SessionWriter::open(&path, "/work/x")
        .unwrap()
        .context()
        .unwrap();
    assert_eq!(reread.thinking_level, "high");
    let messages: Vec<Message> = reread
        .messages
        .into_iter()
        .map(|m| match m {
            AgentMessage::Llm(m) => m,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(texts(&messages), ["first", "one", "second", "two"]);
    assert_eq!(
        texts(&agent.state().messages),
        ["first", "one", "second", "two"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_write_error_is_kept_and_the_run_goes_on() {
    let dir = temp_dir("error");
    let recorder = SessionRecorder::new(SessionWriter::create(&dir, "/work/x"));
    // The sessions directory becomes a file: the first write fails.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, "not a directory").unwrap();
    let model = ScriptedModel::new([assistant([text("one")], StopReason::Stop)]);
    let agent = Agent::new(model, ToolSet::new());
    recorder.attach(&agent);
    let outcome = futures_executor::block_on(agent.prompt_text("first")).unwrap();
    assert_eq!(outcome.turns, 1);
    let error = recorder.take_error().expect("the write failed");
    assert!(error.to_string().contains("cannot"), "{error}");
    assert!(recorder.take_error().is_none(), "taken once");
    std::fs::remove_file(&dir).ok();
}
