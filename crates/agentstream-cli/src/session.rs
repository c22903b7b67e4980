//! `agentstream session`: read a Pi session file as Pi does.
//!
//! - `session context FILE [--leaf ID] [--llm]` prints, as one JSON value,
//!   what Pi's `buildSessionContext` returns for the leaf (`{"messages",
//!   "thinkingLevel", "model"}`; the last entry by default), or with
//!   `--llm` the messages after Pi's default `convertToLlm`.
//! - `session tree FILE` draws the tree: one line per entry, indented at
//!   branch points only (so a long conversation does not drift right),
//!   with labels, the default leaf marked, and every control character of
//!   the file escaped.
//!
//! - `session branch FILE --from ID|--from-root --summary TEXT`,
//!   `session fork FILE --leaf ID` and `session label FILE ID [LABEL]`
//!   write with Pi's policy (see [`agentstream::session::SessionWriter`]).
//!
//! Unlike Pi, an unknown `--leaf` id is an error (Pi falls back to the last
//! entry silently), and so is a `parentId` cycle (Pi never returns).
//! Exit status: 0, or 2 on an unreadable file, a file without a session
//! header, an unknown leaf or a cycle.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentstream::message::{Context, Message};
use agentstream::model::ThinkingLevel;
use agentstream::session::{
    build_session_context, convert_to_llm, parse_session, AgentMessage, Leaf, ParsedSession,
    SessionEntry, SessionTree,
};
use serde_json::Value;

use crate::terminal::escape_line;
use agentstream::session::{default_session_dir, most_recent_session, SessionWriter};

/// Arguments of `agentstream session`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: SessionCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SessionCommand {
    /// Print what Pi's buildSessionContext returns for a leaf, as JSON.
    Context {
        /// A Pi session file (JSON Lines, format version 1, 2 or 3).
        file: PathBuf,
        /// The entry id to build the context for (default: the last entry).
        #[arg(long, value_name = "ID")]
        leaf: Option<String>,
        /// Print the messages after Pi's default convertToLlm instead.
        #[arg(long)]
        llm: bool,
    },
    /// Draw the session's tree of entries.
    Tree {
        /// A Pi session file.
        file: PathBuf,
    },
    /// Leave the current branch: continue from entry ID (or, with
    /// --from-root, before the first entry) with a branch_summary entry
    /// holding SUMMARY, as Pi's /tree does; prints the new entry's id.
    Branch {
        /// A Pi session file.
        file: PathBuf,
        /// The entry to continue from.
        #[arg(long, value_name = "ID", required_unless_present = "from_root")]
        from: Option<String>,
        /// Continue from before the first entry.
        #[arg(long, conflicts_with = "from")]
        from_root: bool,
        /// The summary of the branch left behind.
        #[arg(long)]
        summary: String,
    },
    /// Copy the path to entry ID into a new session file beside FILE (its
    /// header names FILE as parentSession), as Pi's /fork does; prints the
    /// new file's path.
    Fork {
        /// A Pi session file.
        file: PathBuf,
        /// The last entry to copy.
        #[arg(long, value_name = "ID")]
        leaf: String,
    },
    /// Set (or, without LABEL, clear) the label of entry ID.
    Label {
        /// A Pi session file.
        file: PathBuf,
        /// The labelled entry.
        id: String,
        /// The label.
        label: Option<String>,
    },
}

/// Runs the command.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let (file, result) = match &args.command {
        SessionCommand::Context { file, leaf, llm } => (file, context(file, leaf.as_deref(), *llm)),
        SessionCommand::Tree { file } => (file, tree(file)),
        SessionCommand::Branch {
            file,
            from,
            summary,
            ..
        } => (
            file,
            edit(file, |w| {
                Ok(w.branch_with_summary(from.as_deref(), summary)?)
            }),
        ),
        SessionCommand::Fork { file, leaf } => (
            file,
            edit(file, |w| {
                let new = w.create_branched_session(leaf)?;
                Ok(new.path().display().to_string())
            }),
        ),
        SessionCommand::Label { file, id, label } => (
            file,
            edit(file, |w| Ok(w.append_label(id, label.as_deref())?)),
        ),
    };
    match result {
        Ok(text) => {
            let mut out = io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(message) => {
            eprintln!(
                "agentstream: {}: error: {}",
                escape_line(&file.display().to_string()),
                escape_line(&message)
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// Reads and parses a session file (invalid UTF-8 is replaced, as Node's
/// `readFileSync(path, "utf8")` does).
pub fn read_session(path: &Path) -> Result<ParsedSession, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    parse_session(&String::from_utf8_lossy(&bytes)).map_err(|e| e.to_string())
}

/// Opens an existing session file for writing and runs `change`, whose
/// result is printed on its own line.
fn edit(
    file: &Path,
    change: impl FnOnce(&mut SessionWriter) -> Result<String, String>,
) -> Result<String, String> {
    if std::fs::symlink_metadata(file).is_err() {
        return Err("no such session file".into());
    }
    let mut writer = SessionWriter::open(file, "")?;
    change(&mut writer).map(|out| format!("{}\n", escape_line(&out)))
}

/// The session `agent` appends to: `--session FILE` (resumed, or started
/// there), `--continue` (the newest of the current directory's sessions,
/// or a new one there), or none.
pub fn writer_for(
    file: Option<&Path>,
    continue_session: bool,
) -> Result<Option<SessionWriter>, String> {
    let cwd = std::env::current_dir()
        .map_err(|e| format!("cannot read the current directory: {e}"))?
        .display()
        .to_string();
    if let Some(file) = file {
        return Ok(Some(SessionWriter::open(file, &cwd)?));
    }
    if !continue_session {
        return Ok(None);
    }
    let dir = default_session_dir(&cwd)
        .ok_or("no home directory for the sessions (set $PI_CODING_AGENT_DIR)")?;
    match most_recent_session(&dir) {
        Some(file) => Ok(Some(SessionWriter::open(&file, &cwd)?)),
        None => Ok(Some(SessionWriter::create(&dir, &cwd))),
    }
}

/// What a run resumes from a session (Pi's `createAgentSession` on an
/// existing file).
pub struct Resumed {
    /// The model's context at the leaf: Pi's buildSessionContext, then its
    /// default convertToLlm.
    pub context: Context,
    /// The thinking level the branch last set; `None` when no
    /// `thinking_level_change` entry is on it.
    pub thinking_level: Option<ThinkingLevel>,
}

/// What `writer`'s session gives a run that resumes it.
pub fn resume(writer: &SessionWriter) -> Result<Resumed, String> {
    let ctx = writer.context().map_err(|e| e.to_string())?;
    let set = writer
        .branch_entries()
        .iter()
        .any(|entry| matches!(entry, SessionEntry::ThinkingLevelChange(_)));
    Ok(Resumed {
        context: Context::from_messages(convert_to_llm(&ctx.messages)),
        thinking_level: set
            .then(|| ThinkingLevel::parse(&ctx.thinking_level))
            .flatten(),
    })
}

fn context(path: &Path, leaf: Option<&str>, llm: bool) -> Result<String, String> {
    let session = read_session(path)?;
    let entries: Vec<SessionEntry> = session
        .entries
        .into_iter()
        .filter(|e| !matches!(e, SessionEntry::Session(_)))
        .collect();
    let leaf = match leaf {
        Some(id) => {
            if SessionTree::new(&entries).index_of(id).is_none() {
                return Err(format!("no entry has the id `{id}`"));
            }
            Leaf::Id(id)
        }
        None => Leaf::Last,
    };
    let ctx = build_session_context(&entries, leaf).map_err(|e| e.to_string())?;
    let json = if llm {
        serde_json::to_string(&convert_to_llm(&ctx.messages))
    } else {
        serde_json::to_string(&ctx)
    };
    json.map(|mut s| {
        s.push('\n');
        s
    })
    .map_err(|e| format!("cannot write JSON: {e}"))
}

/// At most this many characters of an entry's text on its tree line.
const PREVIEW_CHARS: usize = 60;

fn preview(text: &str) -> String {
    let mut short: String = text.chars().take(PREVIEW_CHARS).collect();
    if text.chars().nth(PREVIEW_CHARS).is_some() {
        short.push('…');
    }
    escape_line(&short).into_owned()
}

fn message_text(value: &Value) -> String {
    match value.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| {
                b.get("text")
                    .or_else(|| b.get("thinking"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| {
                        b.get("name")
                            .and_then(Value::as_str)
                            .map(|n| format!("{n}(…)"))
                    })
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// One line's description of an entry, after its id.
fn describe(entry: &SessionEntry) -> String {
    match entry {
        SessionEntry::Message(m) => {
            let value = m.message.to_value();
            let text = match &m.message {
                AgentMessage::BashExecution(a) => format!("$ {}", a.str("command").unwrap_or("")),
                AgentMessage::BranchSummary(a) | AgentMessage::CompactionSummary(a) => {
                    a.str("summary").unwrap_or("").to_owned()
                }
                AgentMessage::Llm(Message::ToolResult(t)) => {
                    format!("{}: {}", t.tool_name, t.text())
                }
                _ => message_text(&value),
            };
            format!("{}: {}", m.message.role(), preview(&text))
        }
        SessionEntry::ThinkingLevelChange(e) => {
            format!("thinking level: {}", preview(&e.thinking_level))
        }
        SessionEntry::ModelChange(e) => {
            format!("model: {}/{}", preview(&e.provider), preview(&e.model_id))
        }
        SessionEntry::Compaction(e) => format!("compaction: {}", preview(&e.summary)),
        SessionEntry::BranchSummary(e) => format!("branch summary: {}", preview(&e.summary)),
        SessionEntry::Custom(e) => format!("custom: {}", preview(&e.custom_type)),
        SessionEntry::CustomMessage(e) => {
            let text = match &e.content {
                Value::String(s) => s.clone(),
                other => message_text(&serde_json::json!({ "content": other })),
            };
            format!(
                "custom message ({}): {}",
                preview(&e.custom_type),
                preview(&text)
            )
        }
        SessionEntry::Label(e) => match &e.label {
            Some(l) => format!("label {} = {}", preview(&e.target_id), preview(l)),
            None => format!("label {} cleared", preview(&e.target_id)),
        },
        SessionEntry::SessionInfo(e) => {
            format!("name: {}", preview(e.name.as_deref().unwrap_or("")))
        }
        SessionEntry::Unknown(_) => format!("unknown entry type {}", preview(entry.entry_type())),
        SessionEntry::Malformed(_, err) => format!(
            "malformed {}: {}",
            preview(entry.entry_type()),
            preview(&err.to_string())
        ),
        SessionEntry::Session(_) => "session header".into(),
    }
}

fn tree(path: &Path) -> Result<String, String> {
    let session = read_session(path)?;
    let mut out = String::new();
    if let Some(h) = session.header() {
        out.push_str(&format!(
            "session {} (version {}, cwd {})\n",
            preview(&h.id),
            session.version,
            preview(&h.cwd)
        ));
    }
    let entries = &session.entries;
    let tree = SessionTree::new(entries);
    let shape = tree.shape();
    let labels = tree.labels();
    let last = tree.last();
    let line = |i: usize, prefix: &str, out: &mut String| {
        let id = entries[i].id().unwrap_or("?");
        let mut text = format!("{prefix}{} {}", preview(id), describe(&entries[i]));
        if let Some(label) = labels.get(id) {
            text.push_str(&format!(" [{}]", preview(label)));
        }
        if Some(i) == last {
            text.push_str("  <- leaf");
        }
        out.push_str(&text);
        out.push('\n');
    };
    // Iterative: (entry, prefix of its line, prefix of what follows it).
    let mut stack: Vec<(usize, String, String)> = Vec::new();
    let push_siblings = |stack: &mut Vec<(usize, String, String)>, list: &[usize], base: &str| {
        if list.len() == 1 {
            stack.push((list[0], base.to_owned(), base.to_owned()));
            return;
        }
        for (k, &c) in list.iter().enumerate().rev() {
            let is_last = k + 1 == list.len();
            let (head, rest) = if is_last {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            stack.push((c, format!("{base}{head}"), format!("{base}{rest}")));
        }
    };
    push_siblings(&mut stack, &shape.roots, "");
    let mut seen = vec![false; entries.len()];
    while let Some((i, head, rest)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            // A duplicated id's node appears once per entry, as in Pi; draw
            // its subtree once.
            out.push_str(&format!(
                "{head}{} (again)\n",
                preview(entries[i].id().unwrap_or("?"))
            ));
            continue;
        }
        line(i, &head, &mut out);
        push_siblings(&mut stack, &shape.children[i], &rest);
    }
    if !shape.unreachable.is_empty() {
        out.push_str("on a parentId cycle (reachable from no root):\n");
        for &i in &shape.unreachable {
            line(i, "  ", &mut out);
        }
    }
    for s in &session.skipped {
        out.push_str(&format!(
            "skipped line {}: {}\n",
            s.line,
            preview(&s.reason)
        ));
    }
    Ok(out)
}
