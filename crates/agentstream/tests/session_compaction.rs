//! Compaction end to end (#40 section 2): `prepare_compaction` on a
//! written session, the summary by one scripted model call with Pi's
//! prompts, the `compaction` entry with the read/modified file lists, and
//! the agent's transcript replaced, through `SessionRecorder::compact`.

// These tests read or write files, which neither Miri's isolation nor
// WASI without a preopened directory allows; CI runs them natively
// (`cargo test`), and Miri and wasm32-wasip1 on the rest.
#![cfg(not(any(miri, target_family = "wasm")))]
#![cfg(feature = "std")]

use agentstream::agent::{Agent, ToolSet};
use agentstream::message::{
    assistant, text, tool_call, tool_result, user, Message, StopReason, UserContent,
};
use agentstream::model::ScriptedModel;
use agentstream::session::{
    prepare_compaction, should_compact, summary_prompt, CompactionSettings, SessionEntry,
    SessionRecorder, SessionWriter, SUMMARIZATION_SYSTEM_PROMPT,
};
use serde_json::json;

fn session(dir: &std::path::Path) -> SessionWriter {
    let mut w = SessionWriter::create(dir, "/work/x");
    let long = "x".repeat(400);
    let messages: Vec<Message> = vec![
        user(format!("read the files {long}")).into(),
        assistant(
            [
                tool_call("c1", "read", json!({"path": "a.txt"})),
                tool_call("c2", "edit", json!({"path": "b.txt"})),
                tool_call("c3", "read", json!({"path": "b.txt"})),
            ],
            StopReason::ToolUse,
        )
        .into(),
        tool_result("c1", "read", long.clone(), false).into(),
        tool_result("c2", "edit", "ok", false).into(),
        tool_result("c3", "read", "ok", false).into(),
        assistant([text(format!("done {long}"))], StopReason::Stop).into(),
        user("next").into(),
        assistant([text("fine")], StopReason::Stop).into(),
    ];
    for m in messages {
        w.append_message(m.into()).unwrap();
    }
    w
}

fn user_text(m: &Message) -> String {
    match m {
        Message::User(u) => match &u.content {
            UserContent::Text(t) => t.clone(),
            UserContent::Blocks(_) => serde_json::to_value(m).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned(),
        },
        _ => panic!("not a user message"),
    }
}

#[test]
fn defaults_and_threshold_are_pis() {
    let s = CompactionSettings::default();
    assert_eq!(
        (s.enabled, s.reserve_tokens, s.keep_recent_tokens),
        (true, 16384, 20000)
    );
    assert!(should_compact(200_000 - 16384 + 1, 200_000, &s));
    assert!(!should_compact(200_000 - 16384, 200_000, &s));
    assert!(!should_compact(1_000_000, 200_000, &s.with_enabled(false)));
}

#[test]
fn manual_compaction_summarizes_writes_the_entry_and_replaces_the_transcript() {
    let dir = std::env::temp_dir().join(format!("agentstream-compaction-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let writer = session(&dir);
    let settings = CompactionSettings::default().with_keep_recent_tokens(2);
    let path = writer.branch_entries();
    let preparation = prepare_compaction(&path, &settings).expect("something to compact");
    assert!(!preparation.is_split_turn);
    assert_eq!(
        preparation.messages_to_summarize.len(),
        6,
        "up to the last turn"
    );
    assert_eq!(preparation.file_lists.read_files, ["a.txt"]);
    assert_eq!(preparation.file_lists.modified_files, ["b.txt"]);

    let recorder = SessionRecorder::new(writer);
    let context = recorder.with_writer(|w| w.context()).unwrap();
    let agent = Agent::from_session(
        ScriptedModel::new(Vec::<agentstream::message::AssistantMessage>::new()),
        ToolSet::new(),
        &context,
    );
    assert_eq!(agent.state().messages.len(), 8);
    let summarizer =
        ScriptedModel::new([assistant([text("SUMMARY")], StopReason::Stop)]).recording_requests();
    let result = futures_executor::block_on(recorder.compact(
        &agent,
        &summarizer,
        &settings,
        Some("the files"),
    ))
    .unwrap();

    // One model call with Pi's system prompt and summary prompt.
    let requests = summarizer.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].system_prompt.as_deref(),
        Some(SUMMARIZATION_SYSTEM_PROMPT)
    );
    assert_eq!(
        user_text(&requests[0].messages[0]),
        summary_prompt(&preparation.messages_to_summarize, Some("the files"), None)
    );
    assert_eq!(
        result.summary,
        "SUMMARY\n\n<read-files>\na.txt\n</read-files>\n\n<modified-files>\nb.txt\n</modified-files>"
    );
    assert_eq!(
        result.details,
        json!({"readFiles": ["a.txt"], "modifiedFiles": ["b.txt"]})
    );

    // The entry, as Pi writes it, and the compacted transcript.
    let last = recorder
        .with_writer(|w| w.entries().last().cloned())
        .unwrap();
    let SessionEntry::Compaction(entry) = last else {
        panic!("not a compaction: {last:?}")
    };
    assert_eq!(entry.summary, result.summary);
    assert_eq!(
        entry.first_kept_entry_id.as_deref(),
        Some(result.first_kept_entry_id.as_str())
    );
    assert_eq!(entry.from_hook, Some(json!(false)));
    let roles: Vec<String> = agent
        .state()
        .messages
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(
        roles,
        ["user", "user", "assistant"],
        "the summary, then the kept turn"
    );
    assert!(user_text(&agent.state().messages[0]).contains("SUMMARY"));

    // Compacting again right away is refused as Pi refuses it.
    let again = futures_executor::block_on(recorder.compact(&agent, &summarizer, &settings, None));
    assert_eq!(again.unwrap_err().0, "Already compacted");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_failed_summary_is_pis_error_and_writes_nothing() {
    let dir =
        std::env::temp_dir().join(format!("agentstream-compaction-err-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let recorder = SessionRecorder::new(session(&dir));
    let agent = Agent::new(
        ScriptedModel::new(Vec::<agentstream::message::AssistantMessage>::new()),
        ToolSet::new(),
    );
    let mut failed = assistant([], StopReason::Error);
    failed.error_message = Some("boom".into());
    let summarizer = ScriptedModel::new([failed]);
    let settings = CompactionSettings::default().with_keep_recent_tokens(2);
    let before = recorder.with_writer(|w| w.entries().len());
    let error = futures_executor::block_on(recorder.compact(&agent, &summarizer, &settings, None))
        .unwrap_err();
    assert_eq!(error.0, "Summarization failed: boom");
    assert_eq!(recorder.with_writer(|w| w.entries().len()), before);
    std::fs::remove_dir_all(&dir).ok();
}
