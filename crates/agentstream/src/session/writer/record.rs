//! Typed appends beyond messages, and [`SessionRecorder`]: an
//! [`Agent`] that writes its session as it runs, as Pi's `AgentSession`
//! does.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};

use super::{SessionWriteError, SessionWriter};
use alloc::boxed::Box;

use crate::agent::{Agent, AgentEvent, BoxFuture, Compactor, SubscriberId};
use crate::message::Message;
use crate::model::{AbortSignal, Model};

/// Pi's error when a compaction was aborted.
const COMPACTION_CANCELLED: &str = "Compaction cancelled";
use crate::session::{
    build_session_context, compact, convert_to_llm, prepare_compaction, CompactionEntry,
    CompactionError, CompactionResult, CompactionSettings, Leaf, ModelChangeEntry, SessionContext,
    SessionEntry, SessionTree, SummaryOptions, ThinkingLevelChangeEntry,
};

impl SessionWriter {
    /// Appends a `model_change` entry (Pi's `appendModelChange`).
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, SessionWriteError> {
        let entry = SessionEntry::ModelChange(ModelChangeEntry {
            base: self.base(),
            provider: provider.into(),
            model_id: model_id.into(),
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// Appends a `thinking_level_change` entry (Pi's
    /// `appendThinkingLevelChange`).
    pub fn append_thinking_level_change(
        &mut self,
        thinking_level: &str,
    ) -> Result<String, SessionWriteError> {
        let entry = SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
            base: self.base(),
            thinking_level: thinking_level.into(),
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// Appends a `compaction` entry (Pi's `appendCompaction`): the path
    /// before `first_kept_entry_id` is replaced by `summary` in the
    /// context from now on.
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
    ) -> Result<String, SessionWriteError> {
        if !self.has(first_kept_entry_id) {
            return Err(werr!("entry {first_kept_entry_id} not found"));
        }
        let entry = SessionEntry::Compaction(CompactionEntry {
            base: self.base(),
            summary: summary.into(),
            first_kept_entry_id: Some(first_kept_entry_id.into()),
            tokens_before: Some(Value::from(tokens_before)),
            details,
            from_hook: Some(Value::Bool(false)),
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// The entries from the root to the leaf (Pi's `getBranch()`).
    pub fn branch_entries(&self) -> Vec<SessionEntry> {
        let tree = SessionTree::new(self.entries());
        let path = self
            .leaf()
            .and_then(|leaf| tree.index_of(leaf))
            .and_then(|i| tree.path(i).ok())
            .unwrap_or_default();
        path.into_iter()
            .filter_map(|i| self.entries().get(i).cloned())
            .collect()
    }

    /// What Pi's `buildSessionContext` gives for the leaf.
    pub fn context(&self) -> Result<SessionContext, SessionWriteError> {
        let leaf = self.leaf().map_or(Leaf::Last, Leaf::Id);
        build_session_context(self.entries(), leaf).map_err(|e| werr!("{e}"))
    }
}

/// Writes an [`Agent`]'s session as it runs: every message that ends
/// (prompts, assistant messages, tool results) becomes a `message` entry
/// under Pi's policy, and [`model_change`](Self::record_model_change) and
/// [`thinking_level_change`](Self::record_thinking_level_change) entries
/// are written when the caller switches them, as Pi's `setModel` and
/// `setThinkingLevel` do.
///
/// A failed write does not stop the run: the first error is kept for
/// [`take_error`](Self::take_error).
///
/// ```
/// use agentstream::agent::{Agent, ToolSet};
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::ScriptedModel;
/// use agentstream::session::{SessionRecorder, SessionWriter};
///
/// # if cfg!(any(miri, target_family = "wasm")) { return; } // no file system there
/// let dir = std::env::temp_dir().join(format!("agentstream-doc-recorder-{}", std::process::id()));
/// let recorder = SessionRecorder::new(SessionWriter::create(&dir, "/work"));
/// let context = recorder.with_writer(|w| w.context()).unwrap();
/// let model = ScriptedModel::new([assistant([text("hi")], StopReason::Stop)]);
/// let agent = Agent::from_session(model, ToolSet::new(), &context);
/// recorder.attach(&agent);
/// futures_executor::block_on(agent.prompt_text("hello")).unwrap();
/// assert!(recorder.take_error().is_none());
/// let written = recorder.with_writer(|w| std::fs::read_to_string(w.path())).unwrap();
/// assert_eq!(written.lines().count(), 3); // the header, the prompt, the answer
/// # std::fs::remove_dir_all(&dir).ok();
/// ```
#[derive(Clone)]
pub struct SessionRecorder {
    writer: Arc<Mutex<SessionWriter>>,
    error: Arc<Mutex<Option<SessionWriteError>>>,
}

impl SessionRecorder {
    /// A recorder appending to `writer`.
    pub fn new(writer: SessionWriter) -> Self {
        Self {
            writer: Arc::new(Mutex::new(writer)),
            error: Arc::new(Mutex::new(None)),
        }
    }

    /// Runs `f` on the writer (to read it, branch, label, …).
    pub fn with_writer<R>(&self, f: impl FnOnce(&mut SessionWriter) -> R) -> R {
        f(&mut lock(&self.writer))
    }

    /// Subscribes to `agent`: each `message_end` is appended from now on.
    /// [`Agent::unsubscribe`] with the id stops it.
    pub fn attach<M: Model>(&self, agent: &Agent<M>) -> SubscriberId {
        let recorder = self.clone();
        agent.subscribe_fn(move |event| {
            if let AgentEvent::MessageEnd { message } = event {
                let result = lock(&recorder.writer).append_message(message.to_message().into());
                recorder.keep(result);
            }
        })
    }

    /// Appends a `model_change` entry.
    pub fn record_model_change(
        &self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, SessionWriteError> {
        lock(&self.writer).append_model_change(provider, model_id)
    }

    /// Appends a `thinking_level_change` entry.
    pub fn record_thinking_level_change(
        &self,
        thinking_level: &str,
    ) -> Result<String, SessionWriteError> {
        lock(&self.writer).append_thinking_level_change(thinking_level)
    }

    /// Compacts the session now (Pi's manual `compact(customInstructions)`):
    /// [`prepare_compaction`] on the current branch, the summary by
    /// `summarizer` ([`compact`]), the `compaction` entry appended, and the
    /// agent's transcript replaced by the compacted context. A running
    /// agent is aborted first and waited for, as Pi's `compact` does; the
    /// agent's subscribers get `compaction_start` and `compaction_end`
    /// with reason `manual` (on failure with `errorMessage` `Compaction
    /// failed: …`). The summary calls get the agent's thinking level, and
    /// [`Agent::abort_compaction`] aborts them (`aborted` in the end event,
    /// nothing written). Pi's errors: `Already compacted`, `Nothing to
    /// compact (session too small)`, `Summarization failed: …`,
    /// `Compaction cancelled`.
    pub async fn compact<M: Model, S: Model + ?Sized>(
        &self,
        agent: &Agent<M>,
        summarizer: &S,
        settings: &CompactionSettings,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, CompactionError> {
        // Pi aborts a running turn first and waits for the agent to stop.
        agent.abort();
        agent.wait_for_idle().await;
        agent.publish(AgentEvent::CompactionStart { reason: "manual" });
        let (options, controller) = agent.begin_compaction();
        let compacted = self
            .compact_session(summarizer, settings, custom_instructions, options)
            .await;
        agent.end_compaction();
        match compacted {
            Err(error) if controller.is_aborted() => {
                agent.publish(AgentEvent::CompactionEnd {
                    reason: "manual",
                    result: None,
                    aborted: true,
                    will_retry: false,
                    error_message: None,
                });
                Err(error)
            }
            Ok((result, messages)) => {
                agent.set_messages(messages);
                agent.mark_compacted();
                agent.publish(AgentEvent::CompactionEnd {
                    reason: "manual",
                    result: Some(result.clone()),
                    aborted: false,
                    will_retry: false,
                    error_message: None,
                });
                Ok(result)
            }
            Err(error) => {
                agent.publish(AgentEvent::CompactionEnd {
                    reason: "manual",
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(alloc::format!("Compaction failed: {error}")),
                });
                Err(error)
            }
        }
    }

    /// A [`Compactor`] for an [`AutoCompaction`](crate::agent::AutoCompaction)
    /// policy: compacts this session with `summarizer`, as
    /// [`compact`](Self::compact) does.
    pub fn compactor<S>(&self, summarizer: S, settings: CompactionSettings) -> impl Compactor
    where
        S: Model + Send + Sync + 'static,
    {
        RecorderCompactor {
            recorder: self.clone(),
            summarizer,
            settings,
        }
    }

    /// Prepares, summarizes and writes a compaction; the compacted
    /// transcript.
    async fn compact_session<S: Model + ?Sized>(
        &self,
        summarizer: &S,
        settings: &CompactionSettings,
        custom_instructions: Option<&str>,
        options: SummaryOptions,
    ) -> Result<(CompactionResult, Vec<Message>), CompactionError> {
        let path = self.with_writer(|w| w.branch_entries());
        let Some(preparation) = prepare_compaction(&path, settings) else {
            let why = if matches!(path.last(), Some(SessionEntry::Compaction(_))) {
                "Already compacted"
            } else {
                "Nothing to compact (session too small)"
            };
            return Err(CompactionError(why.into()));
        };
        let result = compact(
            &preparation,
            summarizer,
            settings,
            custom_instructions,
            &options,
        )
        .await?;
        // Pi checks its abort signal before writing the entry.
        if options.signal.as_ref().is_some_and(AbortSignal::is_aborted) {
            return Err(CompactionError(COMPACTION_CANCELLED.into()));
        }
        let context = self
            .with_writer(|w| {
                w.append_compaction(
                    &result.summary,
                    &result.first_kept_entry_id,
                    result.tokens_before,
                    Some(result.details.clone()),
                )?;
                w.context()
            })
            .map_err(|e| CompactionError(e.0))?;
        Ok((result, convert_to_llm(&context.messages)))
    }

    /// The first write error since the last call, if any.
    pub fn take_error(&self) -> Option<SessionWriteError> {
        lock(&self.error).take()
    }

    fn keep(&self, result: Result<String, SessionWriteError>) {
        if let Err(error) = result {
            lock(&self.error).get_or_insert(error);
        }
    }
}

/// [`SessionRecorder::compactor`]'s compactor.
struct RecorderCompactor<S> {
    recorder: SessionRecorder,
    summarizer: S,
    settings: CompactionSettings,
}

impl<S: Model + Send + Sync + 'static> Compactor for RecorderCompactor<S> {
    fn compact<'a>(
        &'a self,
        custom_instructions: Option<&'a str>,
        options: SummaryOptions,
    ) -> BoxFuture<'a, Result<(CompactionResult, Vec<Message>), CompactionError>> {
        Box::pin(self.recorder.compact_session(
            &self.summarizer,
            &self.settings,
            custom_instructions,
            options,
        ))
    }
}

/// A poisoned lock still holds a usable writer (each append is one
/// whole line), so the poison is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
