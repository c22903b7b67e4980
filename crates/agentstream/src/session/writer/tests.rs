//! The session writer's tests: Pi's policy, branches, forks, labels,
//! symlinks and concurrent appends.

use super::*;
use crate::message::{assistant, text, user, StopReason};
use crate::session::{build_session_context, parse_session, Leaf};
use alloc::string::ToString;
use std::format;

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("agentstream-writer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn msg_user(s: &str) -> AgentMessage {
    Message::from(user(s)).into()
}

fn msg_assistant(s: &str) -> AgentMessage {
    Message::from(assistant([text(s)], StopReason::Stop)).into()
}

#[test]
fn nothing_is_written_before_the_first_assistant_message() {
    let dir = temp_dir("policy");
    let mut w = SessionWriter::create(&dir, "/work/x");
    let name = w.path().file_name().unwrap().to_string_lossy().into_owned();
    let id = &w.header().unwrap().id;
    assert!(name.ends_with(&format!("_{id}.jsonl")), "{name}");
    assert_eq!(&name[4..5], "-");
    assert!(!name[..24].contains([':', '.']), "{name}");
    let first = w.append_message(msg_user("hi")).unwrap();
    assert_eq!(first.len(), 8);
    assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(!w.path().exists());
    w.append_message(msg_assistant("hello")).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.path()).unwrap().lines().count(),
        3
    );
    w.append_message(msg_user("more")).unwrap();
    let text = std::fs::read_to_string(w.path()).unwrap();
    assert_eq!(text.lines().count(), 4);
    let session = parse_session(&text).unwrap();
    assert_eq!(session.entries[2].parent_id(), Some(first.as_str()));
    let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
    assert_eq!(ctx.messages.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn branches_summaries_forks_and_labels() {
    let dir = temp_dir("branch");
    let mut w = SessionWriter::create(&dir, "/work/x");
    let u1 = w.append_message(msg_user("one")).unwrap();
    let a1 = w.append_message(msg_assistant("reply")).unwrap();
    w.append_message(msg_user("abandoned")).unwrap();
    w.append_label(&a1, Some("here")).unwrap();
    assert!(w.append_label("nope", Some("x")).is_err());
    let s = w.branch_with_summary(Some(&a1), "tried something").unwrap();
    w.append_message(msg_assistant("after")).unwrap();
    let session = parse_session(&std::fs::read_to_string(w.path()).unwrap()).unwrap();
    let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
    let roles: Vec<&str> = ctx.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "branchSummary", "assistant"]);
    assert_eq!(
        session
            .entries
            .iter()
            .find(|e| e.id() == Some(&s))
            .unwrap()
            .parent_id(),
        Some(a1.as_str())
    );

    let fork = w.create_branched_session(&a1).unwrap();
    let text = std::fs::read_to_string(fork.path()).unwrap();
    let forked = parse_session(&text).unwrap();
    assert_eq!(
        forked.header().unwrap().parent_session.as_deref(),
        Some(w.path().display().to_string().as_str())
    );
    let types: Vec<&str> = forked
        .entries
        .iter()
        .map(SessionEntry::entry_type)
        .collect();
    assert_eq!(types, ["session", "message", "message", "label"]);
    assert_eq!(forked.entries[1].id(), Some(u1.as_str()));
    assert_eq!(
        SessionTree::new(&forked.entries)
            .labels()
            .get(&a1)
            .map(String::as_str),
        Some("here")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn symlinks_are_never_written_through() {
    let dir = temp_dir("symlink");
    let target = dir.join("target.jsonl");
    std::fs::write(&target, "").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = SessionWriter::open(&link, "/").unwrap_err();
    assert!(err.0.contains("not a regular file"), "{err}");
    // A writer whose file became a symlink refuses to append.
    let mut w = SessionWriter::open(&dir.join("new.jsonl"), "/").unwrap();
    std::os::unix::fs::symlink(&target, dir.join("new.jsonl")).unwrap();
    w.append_message(msg_user("q")).unwrap();
    let err = w.append_message(msg_assistant("a")).unwrap_err();
    assert!(err.0.contains("refusing"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_appends_never_interleave_half_lines() {
    let dir = temp_dir("concurrent");
    let path = dir.join("s.jsonl");
    let mut first = SessionWriter::open(&path, "/").unwrap();
    first.append_message(msg_user("q")).unwrap();
    first.append_message(msg_assistant("a")).unwrap();
    let long = "x".repeat(100_000);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let long = &long;
            let path = &path;
            scope.spawn(move || {
                let mut w = SessionWriter::open(path, "/").unwrap();
                for _ in 0..20 {
                    w.append_message(msg_assistant(long)).unwrap();
                }
            });
        }
    });
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3 + 80);
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn times_and_ids_have_pis_shapes() {
    assert_eq!(iso_time(1_763_681_630_805), "2025-11-20T23:33:50.805Z");
    assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
    let id = uuid_v7(1_763_681_630_805);
    assert_eq!(id.len(), 36);
    assert!(id.starts_with("019aa39d-fa55-7"), "{id}");
    assert_eq!(&id[14..15], "7");
    assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
    assert_eq!(
        default_session_dir("/work/a:b").map(|p| p.ends_with("sessions/--work-a-b--")),
        Some(true)
    );
}

/// Pi's `SessionManager` rewrites a version 1 or 2 file as version 3 when
/// it opens one: the file on disk then reads as version 3 with nothing to
/// migrate, its context unchanged, and appends go on from its last entry.
#[test]
fn a_version_1_file_is_written_back_as_version_3_when_opened() {
    let dir = temp_dir("migrate");
    let v1 = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pi-sessions/corpus/v1-compaction.jsonl"
    ))
    .unwrap();
    let before = parse_session(&v1).unwrap();
    assert_eq!((before.version, before.migrated), (1, true));
    let path = dir.join("old.jsonl");
    std::fs::write(&path, &v1).unwrap();

    let mut w = SessionWriter::open(&path, "/work/x").unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert_ne!(written, v1, "not rewritten");
    let after = parse_session(&written).unwrap();
    assert_eq!((after.version, after.migrated), (3, false));
    assert_eq!(after.header().map(|h| h.version), Some(Some(3)));
    let context = |s: &ParsedSession| build_session_context(&s.entries, Leaf::Last).unwrap();
    assert_eq!(context(&after), context(&before));

    let last = after
        .entries
        .last()
        .and_then(SessionEntry::id)
        .map(str::to_owned);
    let id = w.append_message(msg_user("more")).unwrap();
    let reread = parse_session(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let appended = reread.entries.last().unwrap();
    assert_eq!(appended.id(), Some(id.as_str()));
    assert_eq!(appended.parent_id(), last.as_deref());
    std::fs::remove_dir_all(&dir).ok();
}

/// Leaving a branch with a generated summary, as Pi's tree navigation
/// does: the branch's entries summarized by the model (one call, Pi's
/// preamble, the files the branch read), then a `branch_summary` entry
/// with `details` and `fromHook: false` where the new branch starts.
#[test]
fn a_branch_left_behind_gets_a_generated_summary() {
    use crate::message::tool_call;
    use crate::model::ScriptedModel;
    use crate::session::{
        collect_entries_for_branch_summary, generate_branch_summary, BranchSummary,
        BranchSummarySettings, SummaryOptions, BRANCH_SUMMARY_PREAMBLE,
    };
    let dir = temp_dir("branch-summary");
    let mut w = SessionWriter::create(&dir, "/work/x");
    let root = w.append_message(msg_user("start")).unwrap();
    w.append_message(msg_assistant("ok")).unwrap();
    w.append_message(msg_user("read it")).unwrap();
    let call = assistant(
        [tool_call(
            "c1",
            "read",
            serde_json::json!({"path": "src/a.rs"}),
        )],
        StopReason::ToolUse,
    );
    let old_leaf = w.append_message(Message::from(call).into()).unwrap();

    let (branch, ancestor) =
        collect_entries_for_branch_summary(w.entries(), Some(&old_leaf), &root);
    assert_eq!(ancestor.as_deref(), Some(root.as_str()));
    assert_eq!(branch.len(), 3);
    let model = ScriptedModel::new([assistant([text("tried reading")], StopReason::Stop)])
        .recording_requests();
    let summary = futures_executor::block_on(generate_branch_summary(
        &branch,
        &model,
        &BranchSummarySettings::new(200_000),
        &SummaryOptions::default(),
    ));
    let BranchSummary::Summary {
        summary,
        file_lists,
    } = summary
    else {
        panic!("{summary:?}");
    };
    assert_eq!(model.calls(), 1);
    assert!(summary.starts_with(&format!("{BRANCH_SUMMARY_PREAMBLE}tried reading")));
    assert!(
        summary.ends_with("<read-files>\nsrc/a.rs\n</read-files>"),
        "{summary}"
    );
    let prompt = serde_json::to_string(&model.requests()[0].messages[0]).unwrap();
    assert!(prompt.contains("read it"), "{prompt}");

    let id = w
        .branch_with_generated_summary(Some(&root), &summary, &file_lists)
        .unwrap();
    let written = std::fs::read_to_string(w.path()).unwrap();
    let line: serde_json::Value = serde_json::from_str(written.lines().last().unwrap()).unwrap();
    assert_eq!(line["id"], id.as_str());
    assert_eq!(line["parentId"], root.as_str());
    assert_eq!(line["fromId"], root.as_str());
    assert_eq!(line["fromHook"], false);
    assert_eq!(
        line["details"],
        serde_json::json!({"readFiles": ["src/a.rs"], "modifiedFiles": []})
    );
    let context = w.context().unwrap();
    assert_eq!(context.messages.len(), 2, "the root and the summary");
    assert_eq!(context.messages[1].role(), "branchSummary");
    std::fs::remove_dir_all(&dir).ok();
}
