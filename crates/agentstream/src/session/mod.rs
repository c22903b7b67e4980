//! Pi session files (format version 3): typed entries, the tree, migration
//! from versions 1 and 2, and the context Pi sends to the model for a leaf.
//!
//! A session file is JSON Lines: a `session` header, then one entry per
//! line. Entries link by `id`/`parentId` into a tree whose branches are the
//! conversation's alternatives; the *leaf* is the entry the conversation
//! continues from. [`build_session_context`] walks from a leaf to the root
//! and returns what Pi's `buildSessionContext` returns, and
//! [`convert_to_llm`] turns Pi's application roles into user messages with
//! Pi's exact text.
//!
//! Reading follows Pi's loader: blank lines and lines that are not JSON are
//! skipped (and reported in [`ParsedSession::skipped`]), the first entry
//! must be a `session` header with a string `id`, and older versions are
//! migrated. Entries of unknown types are kept verbatim and written back as
//! the same JSON value; entries of known types whose fields do not decode
//! are kept verbatim too, as [`SessionEntry::Malformed`].
//!
//! This module is `no_std` (with `alloc`); files, ids and clocks are the
//! host's business.
//!
//! # Checked against Pi, and where it differs
//!
//! `tests/session_oracle.rs` compares [`build_session_context`],
//! [`convert_to_llm`] and [`SessionTree::shape`] with what pi-coding-agent
//! 0.73.1 returns for a corpus Pi generated (`tests/fixtures/pi-sessions/`)
//! for every entry as the leaf. Differences, each by design and each shown
//! by a test in `tests/session_hostile.rs` unless named otherwise:
//!
//! - a `parentId` cycle on the walked path is [`TreeError::Cycle`]; Pi's
//!   walk never ends (`a_parent_cycle_is_an_error_not_a_hang`);
//! - an entry of a known type whose fields do not decode is
//!   [`SessionEntry::Malformed`]: kept, written back, walked through, but
//!   it adds nothing to a context, where Pi would read whatever it has
//!   (`unknown_and_malformed_entries_round_trip_and_stay_in_the_tree`);
//! - a line that is JSON but not an object is skipped; Pi keeps it and
//!   fails on it later (`missing_parents_duplicates_and_bad_lines`);
//! - [`parse_session`] gives a version 1 file counter ids (`00000001`, ...)
//!   so that reading twice gives the same ids; Pi draws random ones, as
//!   [`parse_session_with_ids`] can
//!   (`version_1_migration_is_deterministic_and_chains_entries`);
//! - an entry time without a UTC offset is read as UTC, and V8's
//!   non-ISO date formats give `null` (see [`js_date_millis`]; Pi writes
//!   only `toISOString()` times).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Value};

mod agent_message;
mod compaction;
mod context;
mod date;
mod entry;
mod entry_json;
mod migrate;
mod resume;
mod tree;
#[cfg(feature = "std")]
mod writer;

pub use agent_message::{
    bash_execution_to_text, convert_to_llm, AgentMessage, AppMessage, BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use compaction::{
    branch_summary_prompt, calculate_context_tokens, collect_entries_for_branch_summary, compact,
    estimate_context_tokens, estimate_tokens, find_cut_point, find_turn_start_index,
    generate_branch_summary, is_context_overflow, is_overflow_error, prepare_branch_entries,
    prepare_compaction, serialize_conversation, should_compact, summary_prompt, BranchPreparation,
    BranchSummary, BranchSummarySettings, CompactionError, CompactionPreparation, CompactionResult,
    CompactionSettings, CutPoint, FileLists, SummaryOptions, BRANCH_SUMMARY_MAX_TOKENS,
    BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
pub use context::{build_from_path, build_session_context, Leaf, ModelRef, SessionContext};
pub use date::js_date_millis;
pub use entry::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, EntryBase, LabelEntry,
    MessageEntry, ModelChangeEntry, RawEntry, SessionEntry, SessionHeader, SessionInfoEntry,
    ThinkingLevelChangeEntry, KNOWN_TYPES,
};
pub use migrate::{file_version, migrate_entries, CURRENT_SESSION_VERSION};
pub use tree::{SessionTree, TreeError, TreeShape};
#[cfg(feature = "std")]
pub use writer::{
    default_session_dir, iso_time, most_recent_session, uuid_v7, SessionRecorder,
    SessionWriteError, SessionWriter,
};

/// Why a session file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// The file holds no entry.
    Empty,
    /// The first entry is not a `session` header with a string `id` (Pi
    /// then treats the file as no session at all).
    NoHeader,
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Empty => f.write_str("the session file holds no entry"),
            SessionError::NoHeader => f.write_str(
                "the first entry is not a session header ({\"type\":\"session\",\"id\":...})",
            ),
        }
    }
}

impl core::error::Error for SessionError {}

/// A line [`parse_session`] skipped, as Pi's loader does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// The 1-based line number.
    pub line: usize,
    /// Why: the JSON error, or that it is not an object (Pi keeps such a
    /// value and fails on it later).
    pub reason: String,
}

/// A session file, read and migrated.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSession {
    /// Every entry in file order, the header first.
    pub entries: Vec<SessionEntry>,
    /// The version the file declared before migration (1, 2 or 3).
    pub version: u64,
    /// Whether migration changed anything (Pi then rewrites the file).
    pub migrated: bool,
    /// Lines that were skipped.
    pub skipped: Vec<SkippedLine>,
}

impl ParsedSession {
    /// The header.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.entries.iter().find_map(|e| match e {
            SessionEntry::Session(h) => Some(h),
            _ => None,
        })
    }
}

/// Reads a session file's text with migration ids from a counter
/// (`00000001`, `00000002`, ...): deterministic, which a version 1 file
/// needs for its ids to be stable between reads. Pi draws them at random;
/// use [`parse_session_with_ids`] to do the same.
pub fn parse_session(text: &str) -> Result<ParsedSession, SessionError> {
    let mut n: u32 = 0;
    parse_session_with_ids(text, &mut || {
        n = n.wrapping_add(1);
        format!("{n:08x}")
    })
}

/// Reads a session file's text; `new_id` gives the entry ids a version 1
/// file lacks.
pub fn parse_session_with_ids(
    text: &str,
    new_id: &mut dyn FnMut() -> String,
) -> Result<ParsedSession, SessionError> {
    let mut raw: Vec<Map<String, Value>> = Vec::new();
    let mut skipped = Vec::new();
    // Pi splits the trimmed text on "\n" and skips blank lines; a line
    // keeps its "\r", which JSON.parse reads as whitespace.
    for (n, line) in text.trim().split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => raw.push(map),
            Ok(_) => skipped.push(SkippedLine {
                line: n + 1,
                reason: "not a JSON object".into(),
            }),
            Err(e) => skipped.push(SkippedLine {
                line: n + 1,
                reason: format!("{e}"),
            }),
        }
    }
    let Some(first) = raw.first() else {
        return Err(SessionError::Empty);
    };
    if first.get("type").and_then(Value::as_str) != Some("session")
        || !first.get("id").is_some_and(Value::is_string)
    {
        return Err(SessionError::NoHeader);
    }
    let version = file_version(&raw);
    let migrated = migrate_entries(&mut raw, new_id);
    let entries = raw
        .into_iter()
        .filter_map(|m| SessionEntry::from_value(Value::Object(m)).ok())
        .collect();
    Ok(ParsedSession {
        entries,
        version,
        migrated,
        skipped,
    })
}

/// Writes entries as a session file's text: one JSON object per line, each
/// line ending in `\n`.
pub fn write_session(entries: &[SessionEntry]) -> String {
    let mut out = String::new();
    for e in entries {
        out.push_str(&serde_json::to_string(&e.to_value()).unwrap_or_default());
        out.push('\n');
    }
    out
}
