//! The summarization request of Pi's compaction (`generateSummary`): the
//! system prompt, and the user prompt that wraps the serialized
//! conversation, the previous summary when there is one, and the
//! instructions. The texts are Pi 0.73.1's, to the byte, so that a summary
//! is asked for exactly as Pi asks for it.

use alloc::format;
use alloc::string::String;

use super::serialize::serialize_conversation;
use crate::session::{convert_to_llm, AgentMessage};

/// The system prompt of the summarization call.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = r#"You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."#;

/// The instructions for a first summary.
pub const SUMMARIZATION_PROMPT: &str = r#"The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// The instructions for updating the summary of an earlier compaction.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = r#"The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// The user prompt Pi's `generateSummary` sends: the messages (after
/// [`convert_to_llm`]) serialized inside `<conversation>` tags, the
/// previous summary inside `<previous-summary>` tags when there is a
/// non-empty one (and then the update instructions), then the
/// instructions, with `Additional focus: ...` when `custom_instructions`
/// is non-empty.
///
/// ```
/// use agentstream::session::{summary_prompt, AgentMessage, SUMMARIZATION_PROMPT};
///
/// let messages = [AgentMessage::from(agentstream::message::Message::from(agentstream::message::user("hi")))];
/// let prompt = summary_prompt(&messages, None, None);
/// assert_eq!(prompt, format!("<conversation>\n[User]: hi\n</conversation>\n\n{SUMMARIZATION_PROMPT}"));
/// ```
pub fn summary_prompt(
    messages: &[AgentMessage],
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> String {
    let previous = previous_summary.filter(|s| !s.is_empty());
    let mut instructions = String::from(if previous.is_some() {
        UPDATE_SUMMARIZATION_PROMPT
    } else {
        SUMMARIZATION_PROMPT
    });
    if let Some(custom) = custom_instructions.filter(|s| !s.is_empty()) {
        instructions.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let mut prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        prompt.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    prompt.push_str(&instructions);
    prompt
}
