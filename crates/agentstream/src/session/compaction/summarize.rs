//! Pi's `compact`: the summary of a [`CompactionPreparation`] made by the
//! model (one call, or two for a split turn), with the file lists
//! appended.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::Value;

use super::prepare::CompactionPreparation;
use super::prompts::{summary_prompt, SUMMARIZATION_SYSTEM_PROMPT};
use super::serialize::serialize_conversation;
use crate::message::{text, user_blocks, ContentBlock, Context, StopReason};
use crate::model::{AbortSignal, Model, StreamOptions, ThinkingLevel, ThinkingModel};
use crate::session::{convert_to_llm, AgentMessage, CompactionSettings};

/// Pi's prompt for the start of a split turn, byte for byte.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str =
    "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix.";

/// What Pi's `compact` gives its summary calls besides the prompt and the
/// token limit: the abort signal, and the agent's thinking level with the
/// model's traits (Pi passes the session's `thinkingLevel` as `reasoning`
/// when the model reasons and the level is not `off`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// Aborts the summary calls (Pi's compaction abort controller).
    pub signal: Option<AbortSignal>,
    /// The agent's thinking level; `None`: the calls set none.
    pub thinking: Option<ThinkingLevel>,
    /// The model's traits (whether it reasons, its level map), as the
    /// agent's calls carry them.
    pub thinking_model: Option<ThinkingModel>,
}

impl SummaryOptions {
    /// The thinking level and model traits of an agent's calls (their
    /// signal is the run's, so it is not taken).
    pub fn from_stream(options: &StreamOptions) -> Self {
        Self {
            signal: None,
            thinking: options.thinking,
            thinking_model: options.thinking_model,
        }
    }

    /// The same options with this abort signal.
    pub fn with_signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }

    /// One summary call's options, as Pi's `completeSimple` gets them:
    /// `max_tokens`, the signal, and the level when the model reasons and
    /// the level is not `Off` (else `Off`: Pi's call without `reasoning`).
    pub(super) fn call(&self, max_tokens: u64) -> StreamOptions {
        let mut options = StreamOptions::default().with_max_tokens(max_tokens);
        options.signal.clone_from(&self.signal);
        options.thinking_model = self.thinking_model;
        let reasons = self.thinking_model.map_or(true, |m| m.reasoning);
        options.thinking = self.thinking.map(|level| {
            if reasons && level != ThinkingLevel::Off {
                level
            } else {
                ThinkingLevel::Off
            }
        });
        options
    }
}

/// What a compaction produced (Pi's `CompactionResult`): the fields of
/// its `compaction` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// `summary`: the model's summary, then the file lists.
    pub summary: String,
    /// `firstKeptEntryId`.
    pub first_kept_entry_id: String,
    /// `tokensBefore`.
    pub tokens_before: u64,
    /// `details`: `{"readFiles", "modifiedFiles"}`.
    pub details: Value,
}

/// A summary call that failed; the message is Pi's (`Summarization
/// failed: …` or `Turn prefix summarization failed: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionError(pub String);

impl fmt::Display for CompactionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for CompactionError {}

/// One summary call: `prompt` as the user's text block under Pi's
/// summarization system prompt, at most `max_tokens`; the text blocks of
/// the answer joined by newlines.
async fn summarize<M: Model + ?Sized>(
    model: &M,
    prompt: String,
    max_tokens: u64,
    options: &SummaryOptions,
    failure: &str,
) -> Result<String, CompactionError> {
    let context = Context {
        system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.into()),
        messages: alloc::vec![user_blocks([text(prompt)]).into()],
        ..Context::default()
    };
    let mut stream = model.stream(&context, options.call(max_tokens));
    let answer = stream.result().await;
    if answer.stop_reason == StopReason::Error {
        let reason = answer
            .error_message
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or("Unknown error");
        return Err(CompactionError(alloc::format!("{failure}: {reason}")));
    }
    let texts: Vec<&str> = answer
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    Ok(texts.join("\n"))
}

/// Pi's `compact`: summarizes the prepared history (updating the previous
/// summary, with `custom_instructions` as `Additional focus`) in one model
/// call of at most 80% of `reserve_tokens`; a split turn's prefix gets a
/// second call of at most 50% (the two run concurrently, as Pi's do), and
/// the two summaries are joined as Pi joins them. The read and modified
/// file lists follow the summary. Each call gets `options` as Pi's get its
/// signal and thinking level ([`SummaryOptions`]).
pub async fn compact<M: Model + ?Sized>(
    preparation: &CompactionPreparation,
    model: &M,
    settings: &CompactionSettings,
    custom_instructions: Option<&str>,
    options: &SummaryOptions,
) -> Result<CompactionResult, CompactionError> {
    let history = |messages: &[AgentMessage]| {
        summarize(
            model,
            summary_prompt(
                messages,
                custom_instructions,
                preparation.previous_summary.as_deref(),
            ),
            settings.reserve_tokens * 8 / 10,
            options,
            "Summarization failed",
        )
    };
    let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let conversation =
            serialize_conversation(&convert_to_llm(&preparation.turn_prefix_messages));
        let prefix = summarize(
            model,
            alloc::format!(
                "<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
            ),
            settings.reserve_tokens / 2,
            options,
            "Turn prefix summarization failed",
        );
        let before = async {
            if preparation.messages_to_summarize.is_empty() {
                Ok(String::from("No prior history."))
            } else {
                history(&preparation.messages_to_summarize).await
            }
        };
        let (before, prefix) = futures_util::future::join(before, prefix).await;
        alloc::format!(
            "{}\n\n---\n\n**Turn Context (split turn):**\n\n{}",
            before?,
            prefix?
        )
    } else {
        history(&preparation.messages_to_summarize).await?
    };
    summary.push_str(&preparation.file_lists.format());
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details: preparation.file_lists.to_details(),
    })
}
