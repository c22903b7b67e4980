//! [`AnthropicConfig`]: the [`EndpointConfig`] of an Anthropic Messages
//! endpoint, and [`AnthropicMessages`], what the protocol adds.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use agentstream::model::StreamOptions;
use serde_json::Value;

use super::projector::EventProjector;
use super::request::{build_request, RequestOptions};
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Protocol};
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
/// set).
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
    type Projector = EventProjector;
    const PROVIDER: &'static str = "anthropic";
    const ENDPOINT: &'static str = "/messages";
    const BASE_PATH: BasePath = BasePath::Prefix;

    fn body(
        &self,
        context: &Context,
        (model, provider): (&str, &str),
        options: &StreamOptions,
    ) -> Result<Value, RequestError> {
        let options = RequestOptions::new(model)
            .with_provider(provider)
            .with_call(options);
        build_request(context, &options)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        headers.push(("anthropic-version", self.version.clone()));
        if let Some(key) = api_key {
            headers.push(("x-api-key", key.to_owned()));
        }
    }
}
