//! Pi's `prepareCompaction` and what it needs: the settings with Pi's
//! defaults, the context-size estimate, the threshold test and the
//! read/modified file lists.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::cut::find_cut_point;
use super::estimate::estimate_tokens;
use crate::message::{ContentBlock, Message, StopReason, Usage};
use crate::session::agent_message::truthy;
use crate::session::{build_from_path, js_date_millis, AgentMessage, SessionEntry};

/// Pi's compaction settings (`compaction` in its settings file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactionSettings {
    /// `enabled`: whether the automatic compaction runs (default `true`).
    pub enabled: bool,
    /// `reserveTokens`: the room kept free for the answer (default 16384);
    /// the summary may use 80% of it.
    pub reserve_tokens: u64,
    /// `keepRecentTokens`: about how many tokens of the newest messages
    /// stay (default 20000).
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

impl CompactionSettings {
    /// The same settings with `enabled` set.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// The same settings with `reserve_tokens` set.
    pub fn with_reserve_tokens(mut self, reserve_tokens: u64) -> Self {
        self.reserve_tokens = reserve_tokens;
        self
    }

    /// The same settings with `keep_recent_tokens` set.
    pub fn with_keep_recent_tokens(mut self, keep_recent_tokens: u64) -> Self {
        self.keep_recent_tokens = keep_recent_tokens;
        self
    }
}

/// Pi's `calculateContextTokens`: `totalTokens` when non-zero, else the
/// sum of input, output and cache tokens.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    match usage.total_tokens {
        Some(total) if total > 0 => total,
        _ => usage
            .input
            .saturating_add(usage.output)
            .saturating_add(usage.cache_read)
            .saturating_add(usage.cache_write),
    }
}

/// Pi's `estimateContextTokens(messages).tokens`: the last usable
/// assistant usage (not aborted, not an error) plus the estimate of the
/// messages after it, or the estimate of all messages without one.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> u64 {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| match m {
            AgentMessage::Llm(Message::Assistant(a))
                if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error) =>
            {
                Some((i, calculate_context_tokens(&a.usage)))
            }
            _ => None,
        });
    let (from, base) = last.map_or((0, 0), |(i, tokens)| (i + 1, tokens));
    messages[from..]
        .iter()
        .fold(base, |sum, m| sum.saturating_add(estimate_tokens(m)))
}

/// Pi's `shouldCompact`: enabled, and the context past the window less
/// the reserve.
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled
        && (context_tokens as f64) > context_window as f64 - settings.reserve_tokens as f64
}

/// The files a compacted conversation read and changed (Pi's
/// `computeFileLists`), kept in the `compaction` entry's `details`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    /// `readFiles`: read and never written or edited, sorted.
    pub read_files: Vec<String>,
    /// `modifiedFiles`: written or edited, sorted.
    pub modified_files: Vec<String>,
}

impl FileLists {
    /// Pi's `formatFileOperations`: the `<read-files>` and
    /// `<modified-files>` sections appended to a summary (empty when both
    /// lists are).
    pub fn format(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(alloc::format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(alloc::format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            return String::new();
        }
        alloc::format!("\n\n{}", sections.join("\n\n"))
    }

    /// `{"readFiles", "modifiedFiles"}`.
    pub fn to_details(&self) -> Value {
        serde_json::json!({"readFiles": self.read_files, "modifiedFiles": self.modified_files})
    }
}

/// Pi's `createFileOps`: paths read, written, edited.
#[derive(Default)]
pub(super) struct FileOps {
    read: BTreeSet<String>,
    changed: BTreeSet<String>,
}

impl FileOps {
    /// Pi's `extractFileOpsFromMessage`: the `path` argument of the
    /// assistant's `read`, `write` and `edit` tool calls.
    pub(super) fn add_message(&mut self, message: &AgentMessage) {
        let AgentMessage::Llm(Message::Assistant(a)) = message else {
            return;
        };
        for block in &a.content {
            let ContentBlock::ToolCall(call) = block else {
                continue;
            };
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            match call.name.as_str() {
                "read" => {
                    self.read.insert(path.into());
                }
                "write" | "edit" => {
                    self.changed.insert(path.into());
                }
                _ => {}
            }
        }
    }

    /// A summary's `details`: its `readFiles` as read, its
    /// `modifiedFiles` as changed.
    pub(super) fn add_details(&mut self, details: &Value) {
        Self::add_list(&mut self.read, details.get("readFiles"));
        Self::add_list(&mut self.changed, details.get("modifiedFiles"));
    }

    fn add_list(set: &mut BTreeSet<String>, value: Option<&Value>) {
        if let Some(Value::Array(items)) = value {
            // Pi adds whatever the array holds; only strings make sense.
            set.extend(items.iter().filter_map(Value::as_str).map(String::from));
        }
    }

    /// Pi's `computeFileLists` (its sort is by UTF-16 code units; for
    /// paths of BMP characters that is the byte order used here).
    pub(super) fn lists(self) -> FileLists {
        FileLists {
            read_files: self.read.difference(&self.changed).cloned().collect(),
            modified_files: self.changed.into_iter().collect(),
        }
    }
}

/// What [`prepare_compaction`] found (Pi's `CompactionPreparation`).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// `firstKeptEntryId`: the first entry kept after the summary.
    pub first_kept_entry_id: String,
    /// `messagesToSummarize`: the history before the cut (or before the
    /// split turn).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// `turnPrefixMessages`: the start of a split turn, summarized apart.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// `isSplitTurn`.
    pub is_split_turn: bool,
    /// `tokensBefore`: the context size before compacting.
    pub tokens_before: u64,
    /// `previousSummary`: the summary of the previous compaction on the
    /// path, updated rather than rewritten.
    pub previous_summary: Option<String>,
    /// The read and modified files, the previous compaction's included.
    pub file_lists: FileLists,
}

/// The message an entry contributes to a compaction's history: Pi's
/// `getMessageFromEntryForCompaction` (a `compaction` entry gives none).
pub(super) fn message_of(entry: &SessionEntry) -> Option<AgentMessage> {
    let timestamp = |t: &str| js_date_millis(Some(&Value::String(t.into())));
    match entry {
        SessionEntry::Message(e) => Some(e.message.clone()),
        SessionEntry::CustomMessage(e) => Some(AgentMessage::custom(
            &e.custom_type,
            &e.content,
            e.display.as_ref(),
            e.details.as_ref(),
            timestamp(&e.base.timestamp),
        )),
        SessionEntry::BranchSummary(e) => Some(AgentMessage::branch_summary(
            &e.summary,
            e.from_id.as_ref(),
            timestamp(&e.base.timestamp),
        )),
        _ => None,
    }
}

/// Pi's `prepareCompaction` on the entries of a path (root first, no
/// session header): `None` when the path ends with a compaction or the
/// first kept entry has no id.
pub fn prepare_compaction(
    path: &[SessionEntry],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    if matches!(path.last(), Some(SessionEntry::Compaction(_))) {
        return None;
    }
    let previous = path.iter().enumerate().rev().find_map(|(i, e)| match e {
        SessionEntry::Compaction(c) => Some((i, c)),
        _ => None,
    });
    let boundary_start = previous.map_or(0, |(i, c)| {
        c.first_kept_entry_id
            .as_deref()
            .and_then(|id| path.iter().position(|e| e.id() == Some(id)))
            .unwrap_or(i + 1)
    });
    let indexes: Vec<usize> = (0..path.len()).collect();
    let tokens_before = build_from_path(path, &indexes)
        .map(|ctx| estimate_context_tokens(&ctx.messages))
        .unwrap_or(0);
    let cut = find_cut_point(
        path,
        boundary_start,
        path.len(),
        settings.keep_recent_tokens,
    );
    let first_kept_entry_id = path.get(cut.first_kept_entry_index)?.id()?.into();
    let turn_start = cut.turn_start_index.filter(|_| cut.is_split_turn);
    let history_end = turn_start.unwrap_or(cut.first_kept_entry_index);
    let messages_to_summarize: Vec<AgentMessage> = path[boundary_start..history_end]
        .iter()
        .filter_map(message_of)
        .collect();
    let turn_prefix_messages: Vec<AgentMessage> = match turn_start {
        Some(start) => path[start..cut.first_kept_entry_index]
            .iter()
            .filter_map(message_of)
            .collect(),
        None => Vec::new(),
    };
    let mut ops = FileOps::default();
    if let Some((_, c)) = previous {
        if !c.from_hook.as_ref().is_some_and(truthy) {
            if let Some(details @ Value::Object(_)) = &c.details {
                ops.add_details(details);
            }
        }
    }
    messages_to_summarize
        .iter()
        .chain(&turn_prefix_messages)
        .for_each(|m| ops.add_message(m));
    Some(CompactionPreparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary: previous.map(|(_, c)| c.summary.clone()),
        file_lists: ops.lists(),
    })
}
