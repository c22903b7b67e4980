//! [`AnthropicConfig`], the settings of one Anthropic Messages endpoint.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use agentstream::message::Context;
use agentstream::model::{AbortSignal, StreamOptions};
use serde_json::Value;

use super::request::{build_request, RequestError, RequestOptions, ToolChoice, DEFAULT_MAX_TOKENS};
use super::stream::AnthropicStream;
use crate::endpoint::{api_url, Endpoint, OtherBasePath, PreparedRequest, Redacted};
use crate::limits::Limits;
use crate::options::{merge_body, ExtraHeaders, HeaderError};
use crate::pricing::Pricing;

/// Anthropic's API base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent by default.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The configuration of an Anthropic Messages endpoint, shared by every
/// adapter's `AnthropicModel`.
///
/// The API key is never printed: [`Debug`](fmt::Debug) shows `<redacted>`
/// in its place.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::anthropic::AnthropicConfig;
///
/// let config = AnthropicConfig::new("claude-sonnet-4-5").with_api_key("sk-ant-secret");
/// assert_eq!(config.endpoint_url(), "https://api.anthropic.com/v1/messages");
/// let request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// assert_eq!(request.header("x-api-key"), Some("sk-ant-secret"));
/// assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
/// assert!(!format!("{config:?} {request:?}").contains("sk-ant-secret"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The base URL. Default: [`ANTHROPIC_BASE_URL`]; the request goes to
    /// `{root}/messages` (see [`endpoint_url`](Self::endpoint_url); a
    /// query string of the base URL kept at the end).
    pub base_url: String,
    /// The key sent as `x-api-key`, if any.
    pub api_key: Option<String>,
    /// The `anthropic-version` header. Default: [`ANTHROPIC_VERSION`].
    pub version: String,
    /// The model id, sent as `model` and recorded in the messages.
    pub model: String,
    /// The provider name recorded in the messages. Default: `anthropic`.
    pub provider: String,
    /// The output token limit (always sent). Default:
    /// [`DEFAULT_MAX_TOKENS`].
    pub max_tokens: u64,
    /// The sampling temperature, if any.
    pub temperature: Option<f64>,
    /// The extended-thinking budget, if thinking is on.
    pub thinking_budget: Option<u64>,
    /// The tool choice, if any.
    pub tool_choice: Option<ToolChoice>,
    /// How long establishing the connection (TCP and TLS) may take.
    pub connect_timeout: Option<Duration>,
    /// How long the response may stay silent.
    pub idle_timeout: Option<Duration>,
    /// The caps on each response. Default: [`Limits::DEFAULT`].
    pub limits: Limits,
    /// JSON merged into every request body, after the builder wrote it
    /// (see [`merge_body`]: objects merge recursively, **the extra value
    /// wins** over what the builder wrote). `None`, or a value that is not
    /// an object, adds nothing.
    pub extra_body: Option<Value>,
    /// Headers sent with every request, after (and replacing) the default
    /// ones of the same name. Add them with [`with_header`](Self::with_header).
    pub extra_headers: ExtraHeaders,
    /// The model's prices, which fill `usage.cost` of the final messages
    /// (see [`Pricing`]). `None` leaves the costs at 0.
    pub pricing: Option<Pricing>,
}

impl AnthropicConfig {
    /// A configuration for `model` at [`ANTHROPIC_BASE_URL`], without API
    /// key or timeouts.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            base_url: ANTHROPIC_BASE_URL.to_owned(),
            api_key: None,
            version: ANTHROPIC_VERSION.to_owned(),
            model: model.into(),
            provider: "anthropic".to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            thinking_budget: None,
            tool_choice: None,
            connect_timeout: None,
            idle_timeout: None,
            limits: Limits::DEFAULT,
            extra_body: None,
            extra_headers: ExtraHeaders::default(),
            pricing: None,
        }
    }

    /// Sets the JSON merged into every request body (see
    /// [`extra_body`](Self::extra_body)).
    pub fn with_extra_body(mut self, extra: Value) -> Self {
        self.extra_body = Some(extra);
        self
    }

    /// Adds a header sent with every request (replacing a default header of
    /// the same name, such as `authorization` for Azure's `api-key`
    /// scheme).
    ///
    /// # Errors
    /// A [`HeaderError`] naming the header when its name is not an HTTP
    /// token, its value has control or non-ASCII characters, the name is
    /// one the HTTP client sets (`host`, `content-length`, …), or there
    /// are too many headers. The configuration is consumed either way.
    pub fn with_header(mut self, name: &str, value: &str) -> Result<Self, HeaderError> {
        self.extra_headers.insert(name, value)?;
        Ok(self)
    }

    /// Sets the model's prices (see [`pricing`](Self::pricing)).
    pub fn with_pricing(mut self, pricing: Pricing) -> Self {
        self.pricing = Some(pricing);
        self
    }

    /// Sets the base URL (a proxy, or a test server).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Sets the `anthropic-version` header.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets the provider name recorded in the messages.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Turns extended thinking on with a budget of `tokens`.
    pub fn with_thinking_budget(mut self, tokens: u64) -> Self {
        self.thinking_budget = Some(tokens);
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the idle timeout.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// Sets the caps on each response.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The URL calls go to: `/messages` under the API root of the base
    /// URL, with its query string kept after it. As for every provider, a
    /// base without a path (`https://api.anthropic.com`) and one ending in
    /// `/v1` (what `agentstream serve` prints) both mean the root `/v1`;
    /// any other path is a prefix before `/v1` (a gateway, as the
    /// Anthropic SDKs' `baseURL`).
    ///
    /// ```
    /// use agentstream_wire::anthropic::AnthropicConfig;
    ///
    /// for base in ["http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/"] {
    ///     let config = AnthropicConfig::new("claude").with_base_url(base);
    ///     assert_eq!(config.endpoint_url(), "http://127.0.0.1:8080/v1/messages");
    /// }
    /// ```
    pub fn endpoint_url(&self) -> String {
        api_url(&self.base_url, OtherBasePath::Prefix, "/messages")
    }

    /// The request options [`build_request`] needs.
    pub fn request_options(&self) -> RequestOptions {
        let mut options = RequestOptions::new(self.model.clone())
            .with_max_tokens(self.max_tokens)
            .with_provider(self.provider.clone());
        options.temperature = self.temperature;
        options.thinking_budget = self.thinking_budget;
        options.tool_choice = self.tool_choice.clone();
        options
    }

    /// The request for `context`: URL, headers (`x-api-key`,
    /// `anthropic-version`) and JSON body.
    ///
    /// # Errors
    /// The [`RequestError`] of [`build_request`].
    pub fn prepare(&self, context: &Context) -> Result<PreparedRequest, RequestError> {
        self.prepare_call(context, &StreamOptions::default())
    }

    /// The request for `context` with the per-call request options of
    /// `call` laid over this configuration's (see
    /// [`RequestOptions::with_call`]), then [`extra_body`](Self::extra_body)
    /// merged into the body and [`extra_headers`](Self::extra_headers)
    /// added.
    ///
    /// # Errors
    /// The [`RequestError`] of [`build_request`].
    pub fn prepare_call(
        &self,
        context: &Context,
        call: &StreamOptions,
    ) -> Result<PreparedRequest, RequestError> {
        let mut body = build_request(context, &self.request_options().with_call(call))?;
        if let Some(extra) = &self.extra_body {
            merge_body(&mut body, extra);
        }
        let mut headers = Vec::with_capacity(4);
        headers.push(("content-type", "application/json".to_owned()));
        headers.push(("accept", "text/event-stream".to_owned()));
        headers.push(("anthropic-version", self.version.clone()));
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.push(("x-api-key", key.to_owned()));
        }
        let mut extra_headers = Vec::new();
        self.extra_headers.apply(&mut headers, &mut extra_headers);
        // Serializing a `Value` cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut request = PreparedRequest::new(self.endpoint_url(), headers, body);
        request.extra_headers = extra_headers;
        Ok(request)
    }

    /// A new [`AnthropicStream`] for one response of this endpoint.
    pub fn open_stream(&self, signal: Option<AbortSignal>) -> AnthropicStream {
        AnthropicStream::new(self.model.clone(), self.provider.clone(), signal)
            .with_limits(self.limits)
            .with_pricing(self.pricing)
    }
}

impl Endpoint for AnthropicConfig {
    type Stream = AnthropicStream;
    type Error = RequestError;

    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, RequestError> {
        AnthropicConfig::prepare_call(self, context, options)
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> AnthropicStream {
        AnthropicConfig::open_stream(self, signal).with_timestamp(timestamp_ms)
    }

    fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| Redacted))
            .field("version", &self.version)
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("thinking_budget", &self.thinking_budget)
            .field("tool_choice", &self.tool_choice)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("limits", &self.limits)
            .field("extra_body", &self.extra_body)
            .field("extra_headers", &self.extra_headers)
            .field("pricing", &self.pricing)
            .finish()
    }
}
