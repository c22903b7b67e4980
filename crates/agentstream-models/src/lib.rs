//! pi-ai 0.73.1's model catalogue as a static table, `no_std` and without
//! allocation: every model pi-ai knows (969 of them from 31 providers) with
//! its API, base URL, prices, limits, headers, Chat Completions compat flags
//! and thinking-level map, and Pi's table of API-key environment variables.
//!
//! The table (`src/generated.rs`) is written by `generate.mjs` from pi-ai's
//! `models.generated.js`; `.ci/models-catalogue.sh` regenerates it and checks
//! that it still equals pi-ai's `getModels` for every provider.
//!
//! ```
//! use agentstream_models::{get_model, models, providers, InputKind};
//!
//! let opus = get_model("anthropic", "claude-opus-4-5").unwrap();
//! assert_eq!(opus.api, "anthropic-messages");
//! assert_eq!(opus.base_url, "https://api.anthropic.com");
//! assert!(opus.input.contains(&InputKind::Image));
//! assert!(providers().any(|p| p == "openrouter"));
//! assert!(models("openai").iter().any(|m| m.id == "gpt-4o"));
//! assert!(get_model("openai", "no-such-model").is_none());
//! ```
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "std")]
extern crate std;

mod env;
// Written by generate.mjs, one field a line; rustfmt would reflow it.
#[rustfmt::skip]
mod generated;
mod thinking;

pub use env::api_key_env_vars;
#[cfg(feature = "std")]
pub use env::env_api_key;
pub use thinking::{clamp_thinking_level, supported_thinking_levels, ThinkingLevel};

/// What a model accepts as input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// Text (`"text"`).
    Text,
    /// Images (`"image"`).
    Image,
}

impl InputKind {
    /// pi-ai's name for the kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Image => "image",
        }
    }
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Per million fresh input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Per million input tokens written to the prompt cache.
    pub cache_write: f64,
}

/// A model's compatibility flags (pi-ai's `compat`), mostly for Chat
/// Completions endpoints that differ from OpenAI's. `None`: the flag is not
/// set and the request builder detects the behaviour (from the base URL,
/// as pi-ai does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compat {
    /// How reasoning is requested (`thinkingFormat`): `openai`,
    /// `openrouter`, `deepseek`, `zai`, `qwen` or `qwen-chat-template`.
    pub thinking_format: Option<&'static str>,
    /// The output token limit's field (`maxTokensField`): `max_tokens` or
    /// `max_completion_tokens`.
    pub max_tokens_field: Option<&'static str>,
    /// Whether the endpoint takes `store` (`supportsStore`).
    pub supports_store: Option<bool>,
    /// Whether the endpoint takes the `developer` role
    /// (`supportsDeveloperRole`).
    pub supports_developer_role: Option<bool>,
    /// Whether tool definitions may carry `strict` (`supportsStrictMode`).
    pub supports_strict_mode: Option<bool>,
    /// Whether `stream_options.include_usage` is accepted
    /// (`supportsUsageInStreaming`).
    pub supports_usage_in_streaming: Option<bool>,
    /// Whether `reasoning_effort` is accepted (`supportsReasoningEffort`).
    pub supports_reasoning_effort: Option<bool>,
    /// Whether assistant messages must carry `reasoning_content`
    /// (`requiresReasoningContentOnAssistantMessages`).
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
    /// Whether tool results must carry the tool's `name`
    /// (`requiresToolResultName`).
    pub requires_tool_result_name: Option<bool>,
    /// Whether tool input may stream eagerly
    /// (`supportsEagerToolInputStreaming`).
    pub supports_eager_tool_input_streaming: Option<bool>,
    /// Whether session-affinity headers are sent
    /// (`sendSessionAffinityHeaders`).
    pub send_session_affinity_headers: Option<bool>,
    /// Whether Z.ai's `tool_stream` is sent (`zaiToolStream`).
    pub zai_tool_stream: Option<bool>,
}

impl Compat {
    /// No flag set.
    pub const NONE: Self = Self {
        thinking_format: None,
        max_tokens_field: None,
        supports_store: None,
        supports_developer_role: None,
        supports_strict_mode: None,
        supports_usage_in_streaming: None,
        supports_reasoning_effort: None,
        requires_reasoning_content_on_assistant_messages: None,
        requires_tool_result_name: None,
        supports_eager_tool_input_streaming: None,
        send_session_affinity_headers: None,
        zai_tool_stream: None,
    };
}

/// One model of the catalogue (pi-ai's `Model`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The id sent to the provider (`"claude-opus-4-5"`).
    pub id: &'static str,
    /// The display name.
    pub name: &'static str,
    /// The wire protocol (`"anthropic-messages"`, `"openai-completions"`,
    /// `"openai-responses"`, `"google-generative-ai"`, …).
    pub api: &'static str,
    /// The provider (`"anthropic"`, `"openrouter"`, …).
    pub provider: &'static str,
    /// The endpoint's base URL.
    pub base_url: &'static str,
    /// Whether the model reasons (takes a thinking level).
    pub reasoning: bool,
    /// What it accepts as input.
    pub input: &'static [InputKind],
    /// Its prices.
    pub cost: Cost,
    /// The context window in tokens.
    pub context_window: u64,
    /// The output token limit.
    pub max_tokens: u64,
    /// Headers sent with every request, when the provider needs some.
    pub headers: Option<&'static [(&'static str, &'static str)]>,
    /// Compatibility flags, when the model has any.
    pub compat: Option<Compat>,
    /// How thinking levels map to the provider's values (pi-ai's
    /// `thinkingLevelMap`): a level listed with `None` is not supported, one
    /// with `Some(value)` sends `value`, one not listed uses the default.
    pub thinking_level_map: Option<&'static [(ThinkingLevel, Option<&'static str>)]>,
}

impl Model {
    /// A blank model, the base the generated table fills in.
    pub const EMPTY: Self = Self {
        id: "",
        name: "",
        api: "",
        provider: "",
        base_url: "",
        reasoning: false,
        input: &[],
        cost: Cost {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
        },
        context_window: 0,
        max_tokens: 0,
        headers: None,
        compat: None,
        thinking_level_map: None,
    };

    /// The level map's entry for `level`: `None` when the map does not
    /// list it, `Some(None)` when it marks it unsupported, `Some(Some(v))`
    /// when it sends `v`.
    pub fn thinking_level_value(&self, level: ThinkingLevel) -> Option<Option<&'static str>> {
        self.thinking_model().mapped(level)
    }

    /// What `input`, `output`, `cache_read` and `cache_write` tokens cost
    /// at this model's prices, in dollars (pi-ai's `calculateCost` total).
    pub fn cost_of(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        // Token counts stay far below 2^53, where f64 is exact.
        #[allow(clippy::cast_precision_loss)]
        let per = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
        per(self.cost.input, input)
            + per(self.cost.output, output)
            + per(self.cost.cache_read, cache_read)
            + per(self.cost.cache_write, cache_write)
    }
}

/// The providers, in pi-ai's order.
pub fn providers() -> impl ExactSizeIterator<Item = &'static str> + Clone {
    generated::PROVIDERS.iter().map(|(name, _)| *name)
}

/// The models of `provider`, in pi-ai's order; empty for an unknown
/// provider.
pub fn models(provider: &str) -> &'static [Model] {
    generated::PROVIDERS
        .iter()
        .find(|(name, _)| *name == provider)
        .map_or(&[], |(_, models)| models)
}

/// Every model of every provider.
pub fn all_models() -> impl Iterator<Item = &'static Model> + Clone {
    generated::PROVIDERS
        .iter()
        .flat_map(|(_, models)| models.iter())
}

/// The model `id` of `provider`, if the catalogue has it.
pub fn get_model(provider: &str, id: &str) -> Option<&'static Model> {
    models(provider).iter().find(|m| m.id == id)
}
