//! [`EndpointConfig`]: the one configuration of every provider's endpoint,
//! generic over its [`Protocol`]. Everything an endpoint has whatever the
//! protocol (base URL, key, model, the per-call defaults as
//! [`StreamOptions`], timeouts, limits, extra body and headers, prices) and
//! its builders are here once; a protocol adds only what it sends
//! differently (the body, its headers, where the endpoint lies under the
//! base URL, its projector).
//! [`OpenAiConfig`](crate::openai::OpenAiConfig) and
//! [`AnthropicConfig`](crate::anthropic::AnthropicConfig) are this type
//! over their protocols.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use agentstream::message::Context;
use agentstream::model::{AbortSignal, StreamOptions};
use serde_json::Value;

pub use crate::endpoint::BasePath;
use crate::endpoint::{api_url, Endpoint, PreparedRequest, SigningError};
use crate::limits::Limits;
use crate::options::Redacted;
use crate::options::{merge_body, ExtraHeaders, HeaderError};
use crate::pricing::Pricing;
use crate::request::RequestError;
use crate::sse::{SseProjector, SseStream};

/// `call` laid over `defaults`: every option `call` sets replaces the one
/// of `defaults`, the others stay; the signal is `call`'s. A call that
/// sets a reasoning effort but no thinking budget drops the default
/// budget (the budget wins over an effort where the API takes one, so a
/// default budget would otherwise hide the call's effort). This is the one
/// place per-call options meet defaults: [`EndpointConfig`] layers its
/// [`defaults`](EndpointConfig::defaults) and a call's options with it,
/// and hands the result to the protocol in a [`Call`].
///
/// ```
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::config::layered;
///
/// let defaults = StreamOptions::default().with_max_tokens(1000).with_temperature(0.7);
/// let call = StreamOptions::default().with_max_tokens(50);
/// let options = layered(&defaults, &call);
/// assert_eq!((options.max_tokens, options.temperature), (Some(50), Some(0.7)));
/// ```
pub fn layered(defaults: &StreamOptions, call: &StreamOptions) -> StreamOptions {
    let mut options = call.clone();
    options.max_tokens = call.max_tokens.or(defaults.max_tokens);
    options.temperature = call.temperature.or(defaults.temperature);
    options.top_p = call.top_p.or(defaults.top_p);
    if call.stop.is_none() {
        options.stop.clone_from(&defaults.stop);
    }
    if call.tool_choice.is_none() {
        options.tool_choice.clone_from(&defaults.tool_choice);
    }
    options.reasoning_effort = call.reasoning_effort.or(defaults.reasoning_effort);
    options.thinking_budget = call.thinking_budget.or(if call.reasoning_effort.is_some() {
        None
    } else {
        defaults.thinking_budget
    });
    if call.response_format.is_none() {
        options
            .response_format
            .clone_from(&defaults.response_format);
    }
    options.cache_retention = call.cache_retention.or(defaults.cache_retention);
    options.thinking = call.thinking.or(defaults.thinking);
    options.thinking_model = call.thinking_model.or(defaults.thinking_model);
    if call.session_id.is_none() {
        options.session_id.clone_from(&defaults.session_id);
    }
    options
}

/// One call as a protocol's body writer reads it, borrowed: the model,
/// the provider, and the call's options already [`layered`] over the
/// configuration's defaults. [`EndpointConfig::prepare_call`] builds it
/// once per request and hands it to [`Protocol::body`].
///
/// `model` is sent (as `model`, or in Gemini's URL); with `provider` and
/// the protocol's API it decides which assistant messages of the history
/// are "the same model" (see
/// [`transform`](agentstream::message::transform)). What the protocol
/// sends of `options`, and under which field names, each provider's
/// request module lists.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The model id.
    pub model: &'a str,
    /// The provider name recorded in the messages (`openai`,
    /// `anthropic`, `google`, `google-vertex`, a compatible server's).
    pub provider: &'a str,
    /// The call's options, over the defaults.
    pub options: &'a StreamOptions,
}

/// What one wire protocol adds to an [`EndpointConfig`]: its own
/// settings (OpenAI's [`Compat`](crate::openai::Compat), Anthropic's
/// version header) and how it builds a request and reads the response.
pub trait Protocol: Clone + fmt::Debug {
    /// The projector of the protocol's SSE stream.
    type Projector: SseProjector + Send + 'static;
    /// The provider name recorded in the messages unless set.
    const PROVIDER: &'static str;
    /// The endpoint under the API root, such as `/chat/completions`.
    const ENDPOINT: &'static str;
    /// How a base URL whose path is neither empty nor `/v1` is read.
    const BASE_PATH: BasePath;

    /// The JSON body of `call` for `context`: the protocol's body writer,
    /// which reads the call's options (the configuration's defaults with
    /// the call's own [`layered`] over them, once) and this protocol's
    /// settings.
    ///
    /// ```
    /// use agentstream::message::{user, Context};
    /// use agentstream::model::StreamOptions;
    /// use agentstream_wire::config::{Call, Protocol};
    /// use agentstream_wire::openai::OpenAiChat;
    ///
    /// let context = Context::from_messages([user("hi").into()]);
    /// let options = StreamOptions::default().with_max_tokens(64);
    /// let call = Call { model: "gpt-4o", provider: "openai", options: &options };
    /// let body = OpenAiChat::default().body(&context, &call).unwrap();
    /// assert_eq!((body["model"].as_str(), body["max_tokens"].as_u64()), (Some("gpt-4o"), Some(64)));
    /// ```
    ///
    /// # Errors
    /// A [`RequestError`] when the context cannot be sent (its tool calls
    /// and results do not pair up).
    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError>;

    /// The URL calls for `model` go to under `base_url` (see
    /// [`EndpointConfig::endpoint_url`]). Default: [`ENDPOINT`](Self::ENDPOINT)
    /// under the API root, read as [`BASE_PATH`](Self::BASE_PATH) says; a
    /// protocol whose URL names the model (Gemini's) replaces it.
    fn endpoint_url(&self, base_url: &str, model: &str) -> String {
        let _ = model;
        api_url(base_url, Self::BASE_PATH, Self::ENDPOINT)
    }

    /// Adds the protocol's headers (authentication with `api_key`, a
    /// version) after `content-type` and `accept`.
    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>);

    /// Adds the headers that depend on the call (the session headers of
    /// prompt caching), after [`headers`](Self::headers). None by default.
    fn call_headers(&self, call: &Call<'_>, headers: &mut Vec<(&'static str, String)>) {
        let _ = (call, headers);
    }

    /// Signs `request`, complete (URL, every header, the body bytes), at
    /// `now_ms` (Unix milliseconds, the host's clock at the start of the
    /// call); `api_key` is the configuration's key, as
    /// [`headers`](Self::headers) saw it. Called by
    /// [`EndpointConfig`]'s [`Endpoint::sign`] after
    /// [`prepare_call`](EndpointConfig::prepare_call). Nothing by default:
    /// only a protocol whose authentication covers the request's bytes
    /// (Bedrock's SigV4) replaces it.
    ///
    /// # Errors
    /// A [`SigningError`] when the request cannot be signed.
    fn sign(
        &self,
        api_key: Option<&str>,
        request: &mut PreparedRequest,
        now_ms: u64,
    ) -> Result<(), SigningError> {
        let _ = (api_key, request, now_ms);
        Ok(())
    }

    /// The projector of one response of `model` from `provider`, whose
    /// messages have timestamp 0. Default: the projector's
    /// [`for_model`](SseProjector::for_model); a protocol whose messages
    /// record an `api` that depends on its settings (Gemini on Vertex AI)
    /// replaces it.
    fn projector(&self, model: String, provider: String) -> Self::Projector {
        Self::Projector::for_model(model, provider)
    }
}

/// The configuration of one endpoint speaking protocol `P`, shared by
/// every adapter's models.
///
/// The API key is never printed: [`Debug`](fmt::Debug) shows `<redacted>`
/// in its place.
///
/// ```
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::anthropic::AnthropicConfig;
/// use agentstream_wire::openai::OpenAiConfig;
///
/// // The same builders on every provider.
/// let defaults = StreamOptions::default().with_max_tokens(512);
/// let openai = OpenAiConfig::new("http://127.0.0.1:8080", "gpt-4o").with_defaults(defaults.clone());
/// let anthropic = AnthropicConfig::new("claude").with_base_url("http://127.0.0.1:8080").with_defaults(defaults);
/// assert_eq!(openai.defaults.max_tokens, anthropic.defaults.max_tokens);
/// assert_eq!(openai.endpoint_url(), "http://127.0.0.1:8080/v1/chat/completions");
/// assert_eq!(anthropic.endpoint_url(), "http://127.0.0.1:8080/v1/messages");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct EndpointConfig<P> {
    /// The base URL (see [`endpoint_url`](Self::endpoint_url)).
    pub base_url: String,
    /// The API key, if any (local servers often need none).
    pub api_key: Option<String>,
    /// The model id, sent as `model` and recorded in the messages.
    pub model: String,
    /// The provider name recorded in the messages (the protocol's
    /// [`PROVIDER`](Protocol::PROVIDER) unless set).
    pub provider: String,
    /// The defaults of every call: each option a call's [`StreamOptions`]
    /// sets replaces the one here (the signal here is ignored).
    pub defaults: StreamOptions,
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
    /// What the protocol adds.
    pub protocol: P,
}

impl<P: Protocol> EndpointConfig<P> {
    /// A configuration for `model` at `base_url` speaking `protocol`,
    /// without API key, defaults or timeouts.
    pub fn with_protocol(
        base_url: impl Into<String>,
        model: impl Into<String>,
        protocol: P,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            provider: P::PROVIDER.to_owned(),
            defaults: StreamOptions::default(),
            connect_timeout: None,
            idle_timeout: None,
            limits: Limits::DEFAULT,
            extra_body: None,
            extra_headers: ExtraHeaders::default(),
            pricing: None,
            protocol,
        }
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

    /// Sets the provider name recorded in the messages.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the defaults of every call (see [`defaults`](Self::defaults)),
    /// built with [`StreamOptions`]' own builders:
    ///
    /// ```
    /// use agentstream::model::StreamOptions;
    /// use agentstream_wire::anthropic::AnthropicConfig;
    ///
    /// let config = AnthropicConfig::new("claude")
    ///     .with_defaults(StreamOptions::default().with_max_tokens(512).with_temperature(0.2));
    /// assert_eq!(config.defaults.max_tokens, Some(512));
    /// ```
    pub fn with_defaults(mut self, defaults: StreamOptions) -> Self {
        self.defaults = defaults;
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

    /// The URL calls go to: the protocol's endpoint under the API root of
    /// [`base_url`](Self::base_url), with the base URL's query string kept
    /// after it (a fragment, never sent, is dropped, and so is an empty
    /// query).
    ///
    /// The same base means the same for every provider: a base without a
    /// path (`http://127.0.0.1:8080`, a trailing `/` or not) and one whose
    /// path ends in `/v1` both have the root `/v1`. Another path is read
    /// as the protocol's SDKs read it ([`Protocol::BASE_PATH`]): for
    /// OpenAI the root itself (`https://host/openai` gives
    /// `https://host/openai/chat/completions`), for Anthropic a prefix
    /// before `/v1` (a gateway).
    ///
    /// The base URL is not validated here: the call path refuses a URL no
    /// host can use (see [`parse_url`](crate::model::parse_url)) with the
    /// call's `error` event.
    pub fn endpoint_url(&self) -> String {
        self.protocol.endpoint_url(&self.base_url, &self.model)
    }

    /// The request for `context` with the configuration's defaults: URL,
    /// headers and JSON body.
    ///
    /// # Errors
    /// The [`RequestError`] of the protocol's request builder when the
    /// context's tool calls and results do not pair up.
    pub fn prepare(&self, context: &Context) -> Result<PreparedRequest, RequestError> {
        self.prepare_call(context, &StreamOptions::default())
    }

    /// The request for `context` with the per-call options of `call` laid
    /// over this configuration's [`defaults`](Self::defaults), then
    /// [`extra_body`](Self::extra_body) merged into the body and
    /// [`extra_headers`](Self::extra_headers) added.
    ///
    /// # Errors
    /// The [`RequestError`] of the protocol's request builder.
    pub fn prepare_call(
        &self,
        context: &Context,
        call: &StreamOptions,
    ) -> Result<PreparedRequest, RequestError> {
        let options = layered(&self.defaults, call);
        let call = Call {
            model: &self.model,
            provider: &self.provider,
            options: &options,
        };
        let mut body = self.protocol.body(context, &call)?;
        if let Some(extra) = &self.extra_body {
            merge_body(&mut body, extra);
        }
        let mut headers = Vec::with_capacity(4);
        headers.push(("content-type", "application/json".to_owned()));
        // What the body is framed as (SSE, or Bedrock's event stream).
        let accept = <P::Projector as SseProjector>::framing().content_type();
        headers.push(("accept", accept.to_owned()));
        // The call's own key (pi-ai's `options.apiKey`: the agent loop's
        // `api_key` hook) wins over the configured one.
        let key = call
            .options
            .api_key
            .as_ref()
            .map(|k| k.as_str())
            .filter(|k| !k.is_empty())
            .or_else(|| self.api_key.as_deref().filter(|k| !k.is_empty()));
        self.protocol.headers(key, &mut headers);
        self.protocol.call_headers(&call, &mut headers);
        let mut extra_headers = Vec::new();
        self.extra_headers.apply(&mut headers, &mut extra_headers);
        // Serializing a `Value` cannot fail.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut request = PreparedRequest::new(self.endpoint_url(), headers, body);
        request.extra_headers = extra_headers;
        Ok(request)
    }

    /// A new stream for one response of this endpoint (timestamp 0).
    pub fn open_stream(&self, signal: Option<AbortSignal>) -> SseStream<P::Projector> {
        let projector = self
            .protocol
            .projector(self.model.clone(), self.provider.clone());
        SseStream::with_projector(projector, signal)
            .with_limits(self.limits)
            .with_pricing(self.pricing)
    }
}

impl<P: Protocol> Endpoint for EndpointConfig<P> {
    type Stream = SseStream<P::Projector>;
    type Error = RequestError;

    fn prepare_call(
        &self,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<PreparedRequest, RequestError> {
        EndpointConfig::prepare_call(self, context, options)
    }

    fn sign(&self, request: &mut PreparedRequest, now_ms: u64) -> Result<(), SigningError> {
        let key = self.api_key.as_deref().filter(|k| !k.is_empty());
        self.protocol.sign(key, request, now_ms)
    }

    fn open_stream_at(&self, signal: Option<AbortSignal>, timestamp_ms: u64) -> Self::Stream {
        self.open_stream(signal).with_timestamp(timestamp_ms)
    }

    fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }
}

impl<P: fmt::Debug> fmt::Debug for EndpointConfig<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| Redacted))
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("defaults", &self.defaults)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("limits", &self.limits)
            .field("extra_body", &self.extra_body)
            .field("extra_headers", &self.extra_headers)
            .field("pricing", &self.pricing)
            .field("protocol", &self.protocol)
            .finish()
    }
}
