//! [`AnthropicConfig`]: the [`EndpointConfig`] of an Anthropic Messages
//! endpoint, and [`AnthropicMessages`], what the protocol adds.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::AnthropicProjector;
use super::request::build_request;
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::request::RequestError;

/// Anthropic's API base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent by default.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The configuration of an Anthropic Messages endpoint, shared by every
/// adapter's `AnthropicModel` (the builders and fields every provider has
/// are [`EndpointConfig`]'s).
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
///
/// // `agentstream serve` prints `http://127.0.0.1:PORT/v1`: the same root.
/// for base in ["http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/"] {
///     let config = AnthropicConfig::new("claude").with_base_url(base);
///     assert_eq!(config.endpoint_url(), "http://127.0.0.1:8080/v1/messages");
/// }
/// ```
pub type AnthropicConfig = EndpointConfig<AnthropicMessages>;

/// What Anthropic Messages add to an [`EndpointConfig`]: the
/// `anthropic-version` header, the key in `x-api-key`, and `max_tokens`
/// always sent ([`DEFAULT_MAX_TOKENS`](super::DEFAULT_MAX_TOKENS) unless
/// set). Its [`Protocol::body`] writes the request body (see
/// [`request`](super::request)):
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream::model::{CacheRetention, StreamOptions};
/// use agentstream_wire::anthropic::AnthropicMessages;
/// use agentstream_wire::config::{Call, Protocol};
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("c1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("c1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// // Without prompt caching (Pi's default, `Short`, adds `cache_control` markers).
/// let options = StreamOptions::default().with_cache_retention(CacheRetention::None);
/// let call = Call { model: "claude-sonnet-4-5", provider: "anthropic", options: &options };
/// let body = AnthropicMessages::default().body(&context, &call).unwrap();
/// assert_eq!(body["system"], json!([{"type": "text", "text": "Be brief."}]));
/// assert_eq!(body["max_tokens"], 4096);
/// assert_eq!(
///     body["messages"][1]["content"][0],
///     json!({"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}})
/// );
/// assert_eq!(
///     body["messages"][2],
///     json!({"role": "user", "content": [
///         {"type": "tool_result", "tool_use_id": "c1", "content": "18°C", "is_error": false}
///     ]})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnthropicMessages {
    /// The `anthropic-version` header. Default: [`ANTHROPIC_VERSION`].
    pub version: String,
}

impl Default for AnthropicMessages {
    fn default() -> Self {
        Self {
            version: ANTHROPIC_VERSION.to_owned(),
        }
    }
}

impl AnthropicConfig {
    /// A configuration for `model` at [`ANTHROPIC_BASE_URL`], without API
    /// key or timeouts.
    pub fn new(model: impl Into<String>) -> Self {
        Self::with_protocol(ANTHROPIC_BASE_URL, model, AnthropicMessages::default())
    }

    /// Sets the `anthropic-version` header.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.protocol.version = version.into();
        self
    }
}

impl Protocol for AnthropicMessages {
    type Projector = AnthropicProjector;
    const PROVIDER: &'static str = "anthropic";
    const ENDPOINT: &'static str = "/messages";
    const BASE_PATH: BasePath = BasePath::Prefix;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        headers.push(("anthropic-version", self.version.clone()));
        if let Some(key) = api_key {
            headers.push(("x-api-key", key.to_owned()));
        }
    }

    /// pi-ai's `anthropic-beta: interleaved-thinking-2025-05-14` on models
    /// without adaptive thinking, for a model described by a catalogue
    /// (a call with a [`thinking_model`](agentstream::model::StreamOptions::thinking_model)).
    fn call_headers(&self, call: &Call<'_>, headers: &mut Vec<(&'static str, String)>) {
        if call.options.thinking_model.is_some() && !super::thinking::adaptive(call.model) {
            headers.push((
                "anthropic-beta",
                super::thinking::INTERLEAVED_THINKING_BETA.to_owned(),
            ));
        }
    }
}
