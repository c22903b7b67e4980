//! The per-call request options of [`StreamOptions`](super::StreamOptions):
//! [`ToolChoice`], [`ReasoningEffort`], [`ResponseFormat`] and [`ApiKey`]. They say
//! what to ask for, not how a provider spells it: each request builder of
//! the wire crate maps them onto its API (and its documentation says how).

use alloc::string::String;

use serde_json::Value;

/// Which tool the model must (or must not) call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the APIs' default).
    Auto,
    /// The model must not call a tool.
    None,
    /// The model must call some tool (OpenAI `required`, Anthropic `any`).
    Required,
    /// The model must call the tool with this name.
    Tool(String),
}

/// How hard a reasoning model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// The least reasoning the provider offers.
    Minimal,
    /// Little reasoning.
    Low,
    /// The usual amount.
    Medium,
    /// Much reasoning.
    High,
}

impl ReasoningEffort {
    /// The lower-case name the OpenAI API uses: `minimal`, `low`, `medium`
    /// or `high`.
    ///
    /// ```
    /// use agentstream::model::ReasoningEffort;
    /// assert_eq!(ReasoningEffort::High.as_str(), "high");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Structured output: the response must be JSON matching a schema.
///
/// ```
/// use agentstream::model::{ResponseFormat, StreamOptions};
/// use serde_json::json;
///
/// let format = ResponseFormat::json_schema(
///     "weather",
///     json!({"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}),
/// )
/// .with_strict(true);
/// let options = StreamOptions::default().with_response_format(format);
/// assert_eq!(options.response_format.unwrap().name, "weather");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResponseFormat {
    /// The schema's name (OpenAI requires one: `[a-zA-Z0-9_-]`, at most 64
    /// characters).
    pub name: String,
    /// What the schema describes, for the model, if anything.
    pub description: Option<String>,
    /// The JSON Schema of the response.
    pub schema: Value,
    /// Whether the provider must follow the schema exactly (OpenAI's
    /// `strict`). Default: `false`.
    pub strict: bool,
}

impl ResponseFormat {
    /// A response format asking for JSON that matches `schema`.
    pub fn json_schema(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            description: None,
            schema,
            strict: false,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets [`strict`](Self::strict).
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// How long the provider should keep the request's prefix in its prompt
/// cache (pi-ai's `cacheRetention`). [`Default`] is `Short`, Pi's default.
///
/// A [`StreamOptions`](super::StreamOptions) without one caches as
/// `Short`, as pi-ai does; set `None` for the request bodies of earlier
/// releases (no cache markers at all).
///
/// ```
/// use agentstream::model::CacheRetention;
/// assert_eq!(CacheRetention::default(), CacheRetention::Short);
/// assert_eq!(CacheRetention::parse("long"), Some(CacheRetention::Long));
/// assert_eq!(CacheRetention::Long.as_str(), "long");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    /// No caching: no markers, no cache key.
    None,
    /// The provider's default lifetime (Anthropic's 5 minutes).
    #[default]
    Short,
    /// The longest lifetime offered (Anthropic's `ttl: "1h"`, OpenAI's
    /// `prompt_cache_retention: "24h"`).
    Long,
}

impl CacheRetention {
    /// pi-ai's name: `none`, `short` or `long`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Short => "short",
            Self::Long => "long",
        }
    }

    /// The retention named `name` (pi-ai's spelling), if any.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::None, Self::Short, Self::Long]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

/// An API key for one call (pi-ai's `options.apiKey`), never shown by
/// `Debug`.
///
/// ```
/// use agentstream::model::ApiKey;
/// let key = ApiKey::from("sk-secret");
/// assert_eq!(key.as_str(), "sk-secret");
/// assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self(key.into())
    }
}

impl core::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}
