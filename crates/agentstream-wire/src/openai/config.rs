//! [`OpenAiConfig`], the settings of one OpenAI-compatible endpoint, and
//! the [`PreparedRequest`] an HTTP adapter sends for a call (defined in
//! [`endpoint`](crate::endpoint), shared by every provider).

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use agentstream::message::Context;
use agentstream::model::{AbortSignal, StreamOptions};
use serde_json::Value;

use super::request::{build_request, Compat, RequestError, RequestOptions};
use super::stream::OpenAiStream;
pub use crate::endpoint::PreparedRequest;
use crate::endpoint::{api_url, Endpoint, OtherBasePath, Redacted};
use crate::limits::Limits;
use crate::options::{merge_body, ExtraHeaders, HeaderError};
use crate::pricing::Pricing;

/// The configuration of an OpenAI-compatible endpoint, shared by every
/// adapter's `OpenAiCompatModel`.
///
/// The API key is never printed: [`Debug`](fmt::Debug) shows `<redacted>`
/// in its place.
///
/// ```
/// use agentstream_wire::openai::OpenAiConfig;
///
/// let config = OpenAiConfig::new("https://api.example.com/v1/", "gpt-4o").with_api_key("sk-secret");
/// assert_eq!(config.endpoint_url(), "https://api.example.com/v1/chat/completions");
/// assert!(!format!("{config:?}").contains("sk-secret"));
///
/// // A query string of the base URL (Azure's `api-version`) stays last.
/// let azure = OpenAiConfig::new("https://example.invalid/openai/v1?api-version=2024-06-01", "gpt-4o");
/// assert_eq!(
///     azure.endpoint_url(),
///     "https://example.invalid/openai/v1/chat/completions?api-version=2024-06-01"
/// );
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The base URL, such as `https://api.openai.com/v1` (or, the same,
    /// `https://api.openai.com`); the request goes to
    /// `{root}/chat/completions`, with a query string of the base URL kept
    /// at the end (see [`endpoint_url`](Self::endpoint_url)).
    pub base_url: String,
    /// The bearer token sent in `Authorization`, if any (local servers
    /// often need none).
    pub api_key: Option<String>,
    /// The model id, sent as `model` and recorded in the messages.
    pub model: String,
    /// The provider name recorded in the messages. Default: `openai`.
    pub provider: String,
    /// Provider differences in the request body.
    pub compat: Compat,
    /// The output token limit, if any.
    pub max_tokens: Option<u64>,
    /// The sampling temperature, if any.
    pub temperature: Option<f64>,
    /// How long establishing the connection (TCP and TLS) may take. When it
    /// passes, the call ends in `error(aborted)`.
    pub connect_timeout: Option<Duration>,
    /// How long the response may stay silent: waiting for the response
    /// head, then between two pieces of the body. When it passes, the call
    /// ends in `error(aborted)` with what was received so far.
    pub idle_timeout: Option<Duration>,
    /// The caps on each response (see [`Limits`]). Default:
    /// [`Limits::DEFAULT`].
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

impl OpenAiConfig {
    /// A configuration for `model` at `base_url`, without API key or
    /// timeouts, with the default [`Compat`].
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            provider: "openai".to_owned(),
            compat: Compat::default(),
            max_tokens: None,
            temperature: None,
            connect_timeout: None,
            idle_timeout: None,
            limits: Limits::DEFAULT,
            extra_body: None,
            extra_headers: ExtraHeaders::default(),
            pricing: None,
        }
    }

    /// Sets the JSON merged into every request body (see
    /// [`extra_body`](Self::extra_body)). Adding a field the typed options
    /// lack takes three lines; here `response_format` (which also has a
    /// typed per-call option,
    /// [`StreamOptions::with_response_format`](agentstream::model::StreamOptions::with_response_format)):
    ///
    /// ```
    /// use agentstream::message::{user, Context};
    /// use agentstream_wire::openai::OpenAiConfig;
    /// use serde_json::json;
    ///
    /// let config = OpenAiConfig::new("https://api.openai.com/v1", "gpt-4o-mini")
    ///     .with_extra_body(json!({"response_format": {"type": "json_object"}}));
    /// let request = config.prepare(&Context::from_messages([user("JSON please").into()])).unwrap();
    ///
    /// let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    /// assert_eq!(body["response_format"], json!({"type": "json_object"}));
    /// assert_eq!(body["model"], "gpt-4o-mini");
    /// ```
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

    /// Sets the caps on each response.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Sets the provider name recorded in the messages.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the provider differences.
    pub fn with_compat(mut self, compat: Compat) -> Self {
        self.compat = compat;
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

    /// The URL calls go to: `/chat/completions` under the API root of
    /// [`base_url`](Self::base_url), with the base URL's query string kept
    /// after it. As for every provider, a base without a path
    /// (`http://127.0.0.1:8080`) and one ending in `/v1` both mean the
    /// root `/v1`; any other path is the root itself (as the OpenAI SDKs'
    /// `baseURL`). Azure-style bases such as
    /// `https://host/openai/v1?api-version=2024-06-01` thus give
    /// `https://host/openai/v1/chat/completions?api-version=2024-06-01`.
    /// A fragment is dropped (it is never sent), and so is an empty query.
    ///
    /// The base URL is not validated here: the adapters' HTTP clients parse
    /// the result and refuse a URL they cannot use (such as one without a
    /// host) with the call's `error` event.
    pub fn endpoint_url(&self) -> String {
        api_url(&self.base_url, OtherBasePath::Root, "/chat/completions")
    }

    /// The request options [`build_request`] needs.
    pub fn request_options(&self) -> RequestOptions {
        let mut options = RequestOptions::new(self.model.clone())
            .with_compat(self.compat)
            .with_provider(self.provider.clone());
        options.max_tokens = self.max_tokens;
        options.temperature = self.temperature;
        options
    }

    /// The request for `context`: URL, headers and JSON body.
    ///
    /// # Errors
    /// The [`RequestError`] of [`build_request`] when the context's tool
    /// calls and results do not pair up.
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
        let mut headers = Vec::with_capacity(3);
        headers.push(("content-type", "application/json".to_owned()));
        headers.push(("accept", "text/event-stream".to_owned()));
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let mut extra_headers = Vec::new();
        self.extra_headers.apply(&mut headers, &mut extra_headers);
        // Serializing a `Value` cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut request = PreparedRequest::new(self.endpoint_url(), headers, body);
        request.extra_headers = extra_headers;
        Ok(request)
    }

    /// A new [`OpenAiStream`] for one response of this endpoint.
    pub fn open_stream(&self, signal: Option<AbortSignal>) -> OpenAiStream {
        OpenAiStream::new(self.model.clone(), self.provider.clone(), signal)
            .with_limits(self.limits)
            .with_pricing(self.pricing)
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| Redacted))
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("compat", &self.compat)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("limits", &self.limits)
            .field("extra_body", &self.extra_body)
            .field("extra_headers", &self.extra_headers)
            .field("pricing", &self.pricing)
            .finish()
    }
}

impl Endpoint for OpenAiConfig {
    type Stream = OpenAiStream;
    type Error = RequestError;

    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, RequestError> {
        OpenAiConfig::prepare_call(self, context, options)
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> OpenAiStream {
        OpenAiConfig::open_stream(self, signal).with_timestamp(timestamp_ms)
    }

    fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::user;

    #[test]
    fn the_key_is_redacted() {
        let config = OpenAiConfig::new("http://h/v1", "m").with_api_key("sk-123");
        let request = config
            .prepare(&Context::from_messages([user("hi").into()]))
            .unwrap();
        assert!(request
            .headers
            .contains(&("authorization", "Bearer sk-123".into())));
        let printed = format!("{config:?} {request:?}");
        assert!(!printed.contains("sk-123"), "{printed}");
        assert!(printed.contains("<redacted>"));
    }

    fn endpoint(base: &str) -> String {
        OpenAiConfig::new(base, "m").endpoint_url()
    }

    #[test]
    fn the_endpoint_goes_after_the_path_and_before_the_query() {
        assert_eq!(endpoint("https://h/v1"), "https://h/v1/chat/completions");
        assert_eq!(endpoint("https://h/v1/"), "https://h/v1/chat/completions");
        assert_eq!(endpoint("https://h"), "https://h/v1/chat/completions");
        assert_eq!(endpoint("https://h/"), "https://h/v1/chat/completions");
        assert_eq!(
            endpoint("https://h/openai"),
            "https://h/openai/chat/completions"
        );
        assert_eq!(
            endpoint("https://h/v1?api-version=2024-06-01"),
            "https://h/v1/chat/completions?api-version=2024-06-01"
        );
        assert_eq!(
            endpoint("https://h/openai/v1/?a=1&b=2"),
            "https://h/openai/v1/chat/completions?a=1&b=2"
        );
        assert_eq!(
            endpoint("http://h:8080?x=y"),
            "http://h:8080/v1/chat/completions?x=y"
        );
        // A fragment is never sent; an empty query is dropped.
        assert_eq!(
            endpoint("https://h/v1?q=1#top"),
            "https://h/v1/chat/completions?q=1"
        );
        assert_eq!(
            endpoint("https://h/v1#top"),
            "https://h/v1/chat/completions"
        );
        assert_eq!(endpoint("https://h/v1?"), "https://h/v1/chat/completions");
        // Without a host, the URL stays without one (the adapters refuse it).
        assert_eq!(endpoint("http://"), "http:///v1/chat/completions");
        assert_eq!(endpoint("http:///v1//"), "http:///v1/chat/completions");
        // The query may hold `/` and `?`: only the first `?` splits.
        assert_eq!(
            endpoint("https://h/v1?next=/a?b"),
            "https://h/v1/chat/completions?next=/a?b"
        );
    }

    #[test]
    fn the_prepared_request_uses_the_endpoint() {
        let config = OpenAiConfig::new("https://h/v1?api-version=1", "m");
        let request = config
            .prepare(&Context::from_messages([user("hi").into()]))
            .unwrap();
        assert_eq!(request.url, "https://h/v1/chat/completions?api-version=1");
        assert!(!request
            .headers
            .iter()
            .any(|(name, _)| *name == "authorization"));
    }
}
