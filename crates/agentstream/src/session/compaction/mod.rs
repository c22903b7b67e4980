//! The deterministic parts of Pi's compaction: context-overflow detection
//! ([`is_context_overflow`], pi-ai's `isContextOverflow`), the token
//! estimate ([`estimate_tokens`], pi-coding-agent's `estimateTokens`) and
//! the cut point ([`find_cut_point`], `findCutPoint`), the serialized
//! conversation ([`serialize_conversation`]) and the summarization prompts
//! ([`summary_prompt`], as `generateSummary` builds them).
//! [`prepare_compaction`] gathers what a compaction summarizes (with the
//! read/modified file lists) and [`compact`] makes the summary with one
//! model call (two for a split turn). [`generate_branch_summary`]
//! summarizes a branch left behind, as Pi's tree navigation does.
//! `tests/compaction_oracle.rs` compares both with Pi 0.73.1's own
//! functions on cases `oracle/pi-coding-agent/compaction.mjs` printed.

mod branch;
mod cut;
mod estimate;
mod overflow;
mod prepare;
mod prompts;
mod serialize;
mod summarize;

pub use branch::{
    branch_summary_prompt, collect_entries_for_branch_summary, generate_branch_summary,
    prepare_branch_entries, BranchPreparation, BranchSummary, BranchSummarySettings,
    BRANCH_SUMMARY_MAX_TOKENS, BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT,
};
pub use cut::{find_cut_point, find_turn_start_index, CutPoint};
pub use estimate::estimate_tokens;
pub use overflow::{is_context_overflow, is_overflow_error};
pub use prepare::{
    calculate_context_tokens, estimate_context_tokens, prepare_compaction, should_compact,
    CompactionPreparation, CompactionSettings, FileLists,
};
pub use prompts::{
    summary_prompt, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
pub use serialize::serialize_conversation;
pub use summarize::{
    compact, CompactionError, CompactionResult, SummaryOptions, TURN_PREFIX_SUMMARIZATION_PROMPT,
};
