//! Pi's branch summaries (`branch-summarization.js`): when the leaf moves
//! to another point of the tree, the branch left behind is summarized by
//! the model so its context is not lost: the entries from the old leaf
//! back to the common ancestor, the newest that fit a token budget, one
//! summary call, Pi's preamble, and the read/modified file lists.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::estimate::estimate_tokens;
use super::prepare::{message_of as compaction_message_of, FileLists, FileOps};
use super::prompts::SUMMARIZATION_SYSTEM_PROMPT;
use super::serialize::serialize_conversation;
use super::summarize::SummaryOptions;
use crate::message::{text, user_blocks, ContentBlock, Context, Message, StopReason};
use crate::model::{Model, ThinkingLevel};
use crate::session::agent_message::truthy;
use crate::session::{convert_to_llm, js_date_millis, AgentMessage, SessionEntry, SessionTree};

/// What Pi puts before a generated branch summary, byte for byte.
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// Pi's instructions for a branch summary, byte for byte.
pub const BRANCH_SUMMARY_PROMPT: &str =
    "Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or \"(none)\" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

/// The token limit of Pi's branch summary call.
pub const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// Pi's `collectEntriesForBranchSummary`: the entries of the branch left
/// when moving from `old_leaf` to `target` (from just after their deepest
/// common ancestor to the old leaf, oldest first; all of the old path when
/// they share none), and that ancestor's id. Nothing without an old leaf,
/// or when the old path cannot be followed (a cycle, where Pi would not
/// return).
pub fn collect_entries_for_branch_summary<'a>(
    entries: &'a [SessionEntry],
    old_leaf: Option<&str>,
    target: &str,
) -> (Vec<&'a SessionEntry>, Option<String>) {
    let tree = SessionTree::new(entries);
    let path = |id: &str| {
        tree.index_of(id)
            .map_or(Ok(Vec::new()), |leaf| tree.path(leaf))
    };
    let Some(Ok(old_path)) = old_leaf.map(path) else {
        return (Vec::new(), None);
    };
    let target_path = path(target).unwrap_or_default();
    let ancestor = target_path
        .iter()
        .rev()
        .find(|i| old_path.contains(i))
        .copied();
    let start = ancestor
        .and_then(|a| old_path.iter().position(|&i| i == a))
        .map_or(0, |p| p + 1);
    let branch = old_path[start..].iter().map(|&i| &entries[i]).collect();
    let ancestor_id = ancestor.and_then(|a| entries[a].id()).map(String::from);
    (branch, ancestor_id)
}

/// The message an entry gives a branch summary (Pi's
/// `getMessageFromEntry` there): messages but tool results, custom
/// messages, branch summaries and compactions as their summary messages.
fn message_of(entry: &SessionEntry) -> Option<AgentMessage> {
    match entry {
        SessionEntry::Message(e) if e.message.role() == "toolResult" => None,
        SessionEntry::Compaction(e) => Some(AgentMessage::compaction_summary(
            &e.summary,
            e.tokens_before.as_ref(),
            js_date_millis(Some(&Value::String(e.base.timestamp.clone()))),
        )),
        _ => compaction_message_of(entry),
    }
}

/// What [`prepare_branch_entries`] kept of a branch.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPreparation {
    /// The messages to summarize, oldest first.
    pub messages: Vec<AgentMessage>,
    /// The files read and modified on the branch, those of earlier branch
    /// summaries included.
    pub file_lists: FileLists,
    /// The estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// Pi's `prepareBranchEntries`: the newest messages that fit `token_budget`
/// (`0`: no limit; a summary that does not fit is still kept while under
/// 90 % of it), and the file lists of every entry (the `details` of
/// branch summaries not made by an extension included).
pub fn prepare_branch_entries(entries: &[&SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut ops = FileOps::default();
    for entry in entries {
        if let SessionEntry::BranchSummary(e) = entry {
            let from_hook = e.from_hook.as_ref().is_some_and(truthy);
            match &e.details {
                Some(details) if !from_hook && truthy(details) => ops.add_details(details),
                _ => {}
            }
        }
    }
    let mut messages = Vec::new();
    let mut total: u64 = 0;
    for entry in entries.iter().rev() {
        let Some(message) = message_of(entry) else {
            continue;
        };
        ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total + tokens > token_budget {
            let summary = matches!(
                entry,
                SessionEntry::Compaction(_) | SessionEntry::BranchSummary(_)
            );
            if summary && (total as f64) < token_budget as f64 * 0.9 {
                messages.push(message);
                total += tokens;
            }
            break;
        }
        messages.push(message);
        total += tokens;
    }
    messages.reverse();
    BranchPreparation {
        messages,
        file_lists: ops.lists(),
        total_tokens: total,
    }
}

/// Pi's branch summary prompt: the serialized conversation, then the
/// instructions (`custom_instructions` as `Additional focus`, or instead
/// of Pi's when `replace_instructions`).
pub fn branch_summary_prompt(
    messages: &[AgentMessage],
    custom_instructions: Option<&str>,
    replace_instructions: bool,
) -> String {
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let instructions = match custom_instructions {
        Some(custom) if replace_instructions => String::from(custom),
        Some(custom) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom}"),
        None => String::from(BRANCH_SUMMARY_PROMPT),
    };
    format!("<conversation>\n{conversation}\n</conversation>\n\n{instructions}")
}

/// The settings of a branch summary (Pi's `GenerateBranchSummaryOptions`
/// beyond the model).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BranchSummarySettings {
    /// The model's context window (`0`: unknown, Pi's 128,000 then).
    pub context_window: u64,
    /// Tokens kept for the prompt and the answer (Pi's
    /// `branchSummary.reserveTokens`, 16,384).
    pub reserve_tokens: u64,
    /// Instructions added to Pi's (or replacing them).
    pub custom_instructions: Option<String>,
    /// Whether `custom_instructions` replace Pi's.
    pub replace_instructions: bool,
}

impl BranchSummarySettings {
    /// Pi's defaults for a model with this context window.
    pub fn new(context_window: u64) -> Self {
        Self {
            context_window,
            reserve_tokens: 16_384,
            custom_instructions: None,
            replace_instructions: false,
        }
    }
}

/// What [`generate_branch_summary`] gives (Pi's `BranchSummaryResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum BranchSummary {
    /// The summary (Pi's preamble, the model's text, the file lists) and
    /// the file lists for the entry's `details`.
    Summary {
        /// The text of the `branch_summary` entry.
        summary: String,
        /// `details`: `readFiles` and `modifiedFiles`.
        file_lists: FileLists,
    },
    /// The call was aborted.
    Aborted,
    /// The call failed: its error message (`Summarization failed` when it
    /// has none).
    Error(String),
}

/// Pi's `generateBranchSummary`: summarizes `entries` (from
/// [`collect_entries_for_branch_summary`]) with one call of at most
/// [`BRANCH_SUMMARY_MAX_TOKENS`] under Pi's summarization system prompt,
/// within `context_window - reserve_tokens` of history. As in Pi, the call
/// sets no reasoning whatever the agent's level (`options`' level is
/// ignored; its signal and model traits are used). With nothing to
/// summarize the summary is `No content to summarize` and no call is made.
pub async fn generate_branch_summary<M: Model + ?Sized>(
    entries: &[&SessionEntry],
    model: &M,
    settings: &BranchSummarySettings,
    options: &SummaryOptions,
) -> BranchSummary {
    let window = if settings.context_window == 0 {
        128_000
    } else {
        settings.context_window
    };
    // Pi's budget below 1 sets no limit.
    let budget = window.saturating_sub(settings.reserve_tokens);
    let prepared = prepare_branch_entries(entries, budget);
    if prepared.messages.is_empty() {
        return BranchSummary::Summary {
            summary: String::from("No content to summarize"),
            file_lists: FileLists::default(),
        };
    }
    let prompt = branch_summary_prompt(
        &prepared.messages,
        settings.custom_instructions.as_deref(),
        settings.replace_instructions,
    );
    let context = Context {
        system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.into()),
        messages: alloc::vec![Message::from(user_blocks([text(prompt)]))],
        ..Context::default()
    };
    let mut call = options.clone();
    call.thinking = Some(ThinkingLevel::Off);
    let mut stream = model.stream(&context, call.call(BRANCH_SUMMARY_MAX_TOKENS));
    let answer = stream.result().await;
    match answer.stop_reason {
        StopReason::Aborted => return BranchSummary::Aborted,
        StopReason::Error => {
            let message = answer
                .error_message
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| String::from("Summarization failed"));
            return BranchSummary::Error(message);
        }
        _ => {}
    }
    let texts: Vec<&str> = answer
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    let mut summary = format!("{BRANCH_SUMMARY_PREAMBLE}{}", texts.join("\n"));
    summary.push_str(&prepared.file_lists.format());
    BranchSummary::Summary {
        summary,
        file_lists: prepared.file_lists,
    }
}
