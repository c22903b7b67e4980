//! [`AutoCompaction`]: the [`Agent`](super::Agent)'s compaction after a
//! run, as Pi's coding agent (`AgentSession`) does it.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::maybe_send::{BoxFuture, MaybeSend, MaybeSync};
use crate::message::Message;
use crate::session::{CompactionError, CompactionResult, CompactionSettings, SummaryOptions};

/// What compacts the session an agent runs on: prepares, summarizes,
/// writes the `compaction` entry, and returns the result with the new
/// transcript (the compacted context after `convert_to_llm`). A
/// [`SessionRecorder`](crate::session::SessionRecorder)'s
/// `compactor` is one.
pub trait Compactor: MaybeSend + MaybeSync + 'static {
    /// Compacts now, with optional instructions for the summary; the
    /// summary calls get `options` (the agent's thinking level, as Pi's
    /// `compact` gets the session's).
    fn compact<'a>(
        &'a self,
        custom_instructions: Option<&'a str>,
        options: SummaryOptions,
    ) -> BoxFuture<'a, Result<(CompactionResult, Vec<Message>), CompactionError>>;
}

/// The compaction policy of an [`Agent`](super::Agent) (Pi's
/// `compaction` settings).
///
/// After each run the last assistant message is checked, as Pi does:
/// - a context overflow ([`is_context_overflow`](crate::session::is_context_overflow)
///   with `context_window`): the error message leaves the transcript,
///   the session is compacted ([`CompactionStart`](super::AgentEvent::CompactionStart),
///   [`CompactionEnd`](super::AgentEvent::CompactionEnd) with `willRetry`)
///   and the run continues, once: a second overflow before an answer
///   without error ends with Pi's failure text;
/// - otherwise, when the context (the message's usage, or for an error
///   the estimate from the last usage) passes `context_window -
///   reserve_tokens`, the session is compacted and the run ends there.
///
/// Nothing happens when `settings.enabled` is off or the message was
/// aborted.
#[derive(Clone)]
#[non_exhaustive]
pub struct AutoCompaction {
    /// `enabled`, `reserveTokens`, `keepRecentTokens`.
    pub settings: CompactionSettings,
    /// The model's context window in tokens (`0`: unknown, so only an
    /// overflow error text counts and the threshold never passes).
    pub context_window: u64,
    /// The agent's model as `(provider, model id)`, for Pi's same-model
    /// check: an overflow error from another model (one the agent used
    /// before switching) does not compact. `None` (the default): the
    /// model is not known, so every overflow counts (Pi, which always
    /// knows its model, never compacts without one).
    pub model: Option<(String, String)>,
    compactor: Arc<dyn Compactor>,
}

impl AutoCompaction {
    /// Pi's default settings, compacting with `compactor`, for a model
    /// of this context window.
    pub fn new(compactor: impl Compactor, context_window: u64) -> Self {
        Self {
            settings: CompactionSettings::default(),
            context_window,
            model: None,
            compactor: Arc::new(compactor),
        }
    }

    /// The same policy for the model `model_id` of `provider` (as its
    /// assistant messages name them), so an overflow from another model
    /// does not compact.
    pub fn with_model(mut self, provider: impl Into<String>, model_id: impl Into<String>) -> Self {
        self.model = Some((provider.into(), model_id.into()));
        self
    }

    /// The same policy with these settings.
    pub fn with_settings(mut self, settings: CompactionSettings) -> Self {
        self.settings = settings;
        self
    }

    pub(super) fn compactor(&self) -> &dyn Compactor {
        &*self.compactor
    }
}

impl fmt::Debug for AutoCompaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoCompaction")
            .field("settings", &self.settings)
            .field("context_window", &self.context_window)
            .finish_non_exhaustive()
    }
}
