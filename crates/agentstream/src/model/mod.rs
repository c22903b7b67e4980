//! The model boundary: the [`ModelEvent`] protocol, the [`Model`] trait,
//! cancellation, and the deterministic [`ScriptedModel`].
//!
//! A [`Model`] turns a [`Context`] into a [`ModelStream`]: a stream of
//! [`ModelEvent`]s that ends with exactly one `done` or `error`, plus the
//! final [`AssistantMessage`](crate::message::AssistantMessage). Code
//! written against `Model` cannot tell the scripted double from a real
//! provider.

mod abort;
mod cause;
mod deadline;
mod event;
mod options;
mod partial;
mod partial_json;
mod persistent;
mod protocol;
mod retry;
mod rope;
mod scripted;
mod stream;
mod thinking;

pub use abort::{AbortController, AbortSignal, Aborted, ABORTED_MESSAGE};
pub use cause::{
    ErrorCause, HttpFailure, ProviderFailure, RetryAfter, SharedError, TimeoutKind, RETRY_AFTER_MAX,
};
pub(crate) use deadline::stream_with_deadline;
pub use event::{DoneReason, ErrorReason, EventCause, ModelEvent, WithoutPartial};
pub use options::{ApiKey, CacheRetention, ReasoningEffort, ResponseFormat, ToolChoice};
pub use partial::{BlockShape, PartialBuilder, PartialMessage};
pub use protocol::validate_events;
#[cfg(feature = "std")]
pub use retry::{os_entropy, system_unix_millis};
pub use retry::{Jitter, RetryModel, RetryPolicy, DEFAULT_SEED};
pub use scripted::{
    ScriptStep, ScriptedFailure, ScriptedModel, ScriptedReply, ScriptedTurn, EXHAUSTED_MESSAGE,
};
#[allow(deprecated)]
pub use stream::{
    AssistantMessageEventStream, AssistantMessageProducer, LocalModelDriver, ModelDriver,
    ResultHandle,
};
pub use stream::{
    LocalModelStream, ModelProducer, ModelResult, ModelStream, PRODUCER_DROPPED_MESSAGE,
};
pub use thinking::{ThinkingLevel, ThinkingLevelMap, ThinkingModel};

use alloc::string::String;
use alloc::vec::Vec;

use crate::message::Context;

/// Options of one model call.
///
/// Every request option is optional: `None` leaves the model's
/// configuration (or the provider's default) in place, a value overrides
/// it for this call. Models that do not send requests (the scripted one)
/// ignore them.
///
/// ```
/// use agentstream::model::{ReasoningEffort, StreamOptions, ToolChoice};
///
/// let options = StreamOptions::default()
///     .with_max_tokens(512)
///     .with_temperature(0.2)
///     .with_stop(["\n\n"])
///     .with_tool_choice(ToolChoice::Tool("search".into()))
///     .with_reasoning_effort(ReasoningEffort::Low);
/// assert_eq!(options.max_tokens, Some(512));
/// assert_eq!(options.stop.as_deref(), Some(&["\n\n".to_string()][..]));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Aborts the call when its controller aborts.
    pub signal: Option<AbortSignal>,
    /// The output token limit.
    pub max_tokens: Option<u64>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass to sample from.
    pub top_p: Option<f64>,
    /// Sequences that end the response when generated.
    pub stop: Option<Vec<String>>,
    /// Which tool the model must (or must not) call.
    pub tool_choice: Option<ToolChoice>,
    /// How hard a reasoning model should think (OpenAI's
    /// `reasoning_effort`; mapped to a thinking budget where the API takes
    /// one). Superseded by [`thinking`](Self::thinking), which wins when
    /// set; kept for existing callers.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The thinking budget in tokens, where the API takes one (Anthropic);
    /// wins over [`reasoning_effort`](Self::reasoning_effort) there.
    /// Superseded by [`thinking`](Self::thinking), which wins when set.
    pub thinking_budget: Option<u64>,
    /// The thinking level (Pi's `thinkingLevel`, pi-ai's `reasoning`),
    /// mapped per API as pi-ai's `streamSimple` does (each request module
    /// of the wire crate says how); `Off` is sent as each provider spells
    /// "no thinking". Unset sends no thinking setting at all.
    pub thinking: Option<ThinkingLevel>,
    /// What the model says about reasoning (from a catalogue): which
    /// levels it supports, their provider names, its output limit. A
    /// configured model sets it in its defaults; unset is
    /// [`ThinkingModel::default`].
    pub thinking_model: Option<ThinkingModel>,
    /// Structured output: a JSON schema the response must match.
    pub response_format: Option<ResponseFormat>,
    /// How long the provider should cache the request's prefix; unset is
    /// Pi's default, [`CacheRetention::Short`] (see
    /// [`cache_retention_or_default`](Self::cache_retention_or_default));
    /// [`CacheRetention::None`] places no cache markers.
    pub cache_retention: Option<CacheRetention>,
    /// The conversation's id (pi-ai's `sessionId`): the prompt cache key
    /// and session headers where the provider takes them. The
    /// [`Agent`](crate::agent::Agent) sends its own on every call.
    pub session_id: Option<String>,
    /// The API key of this call (pi-ai's `options.apiKey`), used in place
    /// of the one the model was configured with (the wire crate's
    /// endpoints do; an empty key counts as none). The agent loop sets it
    /// before every model call from its
    /// [`api_key`](crate::agent::AgentHooks::api_key) hook (Pi's
    /// `getApiKey`), for tokens that expire during a run.
    pub api_key: Option<ApiKey>,
}

impl StreamOptions {
    /// Options with the call's [`api_key`](Self::api_key) set.
    pub fn with_api_key(mut self, api_key: impl Into<ApiKey>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Options with `signal` set.
    pub fn with_signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets nucleus sampling's `top_p`.
    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Sets the stop sequences.
    pub fn with_stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = Some(stop.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets the reasoning effort.
    pub fn with_reasoning_effort(mut self, effort: ReasoningEffort) -> Self {
        self.reasoning_effort = Some(effort);
        self
    }

    /// Sets the thinking level.
    pub fn with_thinking(mut self, level: ThinkingLevel) -> Self {
        self.thinking = Some(level);
        self
    }

    /// Sets what the model says about reasoning.
    pub fn with_thinking_model(mut self, model: ThinkingModel) -> Self {
        self.thinking_model = Some(model);
        self
    }

    /// The call's thinking level clamped to what the model supports
    /// (pi-ai's `clampThinkingLevel`), if one is set. `Off` stays `Off`
    /// (Pi sends it as no reasoning at all, never clamped up).
    pub fn clamped_thinking(&self) -> Option<ThinkingLevel> {
        match self.thinking? {
            ThinkingLevel::Off => Some(ThinkingLevel::Off),
            level => Some(self.thinking_model.unwrap_or_default().clamp(level)),
        }
    }

    /// Sets the thinking budget in tokens.
    pub fn with_thinking_budget(mut self, tokens: u64) -> Self {
        self.thinking_budget = Some(tokens);
        self
    }

    /// Asks for structured output matching `format`.
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// Sets the prompt-cache retention.
    pub fn with_cache_retention(mut self, retention: CacheRetention) -> Self {
        self.cache_retention = Some(retention);
        self
    }

    /// The retention the request builders apply: the one set, else Pi's
    /// default [`CacheRetention::Short`] (pi-ai's `resolveCacheRetention`;
    /// the `PI_CACHE_RETENTION=long` environment override is the command
    /// line's, since this crate reads no environment).
    ///
    /// ```
    /// use agentstream::model::{CacheRetention, StreamOptions};
    /// assert_eq!(StreamOptions::default().cache_retention_or_default(), CacheRetention::Short);
    /// let off = StreamOptions::default().with_cache_retention(CacheRetention::None);
    /// assert_eq!(off.cache_retention_or_default(), CacheRetention::None);
    /// ```
    pub fn cache_retention_or_default(&self) -> CacheRetention {
        self.cache_retention.unwrap_or_default()
    }

    /// Sets the session id.
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}

/// Something that answers a context with a stream of model events.
///
/// `stream` returns synchronously; the events come later, when the returned
/// [`ModelStream`] is polled (or its driver is spawned). Failures are never
/// returned here: they arrive as the stream's `error` event.
pub trait Model {
    /// Starts a call.
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream;

    /// The wall clock this model's runtime keeps, if it has one (an HTTP
    /// model's host, a [`RetryModel`]'s timer); the agent loop stamps the
    /// messages it makes with it when its options name no
    /// [`clock`](crate::agent::AgentOptions::with_clock). `None` by default.
    fn clock(&self) -> Option<crate::rt::Clock> {
        None
    }
}

impl<M: Model + ?Sized> Model for &M {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
    fn clock(&self) -> Option<crate::rt::Clock> {
        (**self).clock()
    }
}

impl<M: Model + ?Sized> Model for alloc::boxed::Box<M> {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
    fn clock(&self) -> Option<crate::rt::Clock> {
        (**self).clock()
    }
}

impl<M: Model + ?Sized> Model for alloc::sync::Arc<M> {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
    fn clock(&self) -> Option<crate::rt::Clock> {
        (**self).clock()
    }
}
