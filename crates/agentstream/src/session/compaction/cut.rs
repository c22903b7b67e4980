//! pi-coding-agent's `findCutPoint`: where a compaction cuts a branch so
//! that about `keep_recent_tokens` of the newest messages stay.

use super::estimate::estimate_tokens;
use crate::session::{AgentMessage, SessionEntry};

/// Where [`find_cut_point`] cuts (Pi's `CutPointResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// `firstKeptEntryIndex`: the first entry kept.
    pub first_kept_entry_index: usize,
    /// `turnStartIndex`: when the cut falls inside a turn, the entry that
    /// started it (a user message, a `bashExecution`, a `branch_summary`
    /// or a `custom_message`); `None` for Pi's `-1`.
    pub turn_start_index: Option<usize>,
    /// `isSplitTurn`: whether the cut falls inside a turn.
    pub is_split_turn: bool,
}

/// Whether a compaction may start keeping at this entry: a message of any
/// role but `toolResult` (a result must follow its call), a
/// `branch_summary` or a `custom_message`.
fn is_cut_point(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::Message(m) => {
            matches!(
                m.message.role(),
                "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
                    | "user"
                    | "assistant"
            )
        }
        SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
        _ => false,
    }
}

/// Pi's `findTurnStartIndex`: the entry at or before `index` (not before
/// `start`) that starts its turn.
pub fn find_turn_start_index(
    entries: &[SessionEntry],
    index: usize,
    start: usize,
) -> Option<usize> {
    (start..=index.min(entries.len().checked_sub(1)?))
        .rev()
        .find(|&i| match &entries[i] {
            SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
            SessionEntry::Message(m) => matches!(m.message.role(), "user" | "bashExecution"),
            _ => false,
        })
}

/// Pi's `findCutPoint` over `entries[start..end]` (a branch's entries,
/// root first): walks back from the newest message adding
/// [`estimate_tokens`] until `keep_recent_tokens` is reached, cuts at the
/// first valid cut point at or after that message (never at a tool
/// result), then moves the cut back over settings entries up to the
/// previous message or compaction.
///
/// ```
/// use agentstream::session::{find_cut_point, parse_session};
///
/// let file = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}
/// {"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"aaaaaaaa","timestamp":1}}
/// {"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"bbbbbbbb","timestamp":2}}"#;
/// let entries = parse_session(file).unwrap().entries.split_off(1);
/// let cut = find_cut_point(&entries, 0, entries.len(), 2);
/// assert_eq!(cut.first_kept_entry_index, 1);
/// ```
pub fn find_cut_point(
    entries: &[SessionEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: alloc::vec::Vec<usize> = (start..end)
        .filter(|&i| is_cut_point(&entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    let mut cut = first;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        let SessionEntry::Message(m) = &entries[i] else {
            continue;
        };
        accumulated += estimate_tokens(&m.message);
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }
    while cut > start {
        match &entries[cut - 1] {
            SessionEntry::Compaction(_) | SessionEntry::Message(_) => break,
            _ => cut -= 1,
        }
    }
    let is_user = matches!(&entries[cut], SessionEntry::Message(m) if matches!(m.message, AgentMessage::Llm(crate::message::Message::User(_))));
    let turn_start = if is_user {
        None
    } else {
        find_turn_start_index(entries, cut, start)
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index: turn_start,
        is_split_turn: !is_user && turn_start.is_some(),
    }
}
