//! [`MistralConfig`]: the [`EndpointConfig`] of a Mistral endpoint, and
//! [`Mistral`], what the protocol adds.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::MistralProjector;
use super::request::build_request;
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::request::RequestError;

/// Mistral's own API root.
pub const MISTRAL_BASE_URL: &str = "https://api.mistral.ai";

/// The configuration of a Mistral endpoint (`POST {base}/v1/chat/completions`;
/// a base without a path, or ending in `/v1`, has the root `/v1`).
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::mistral::{MistralConfig, MISTRAL_BASE_URL};
///
/// let config = MistralConfig::new(MISTRAL_BASE_URL, "mistral-medium-latest").with_api_key("secret");
/// assert_eq!(config.endpoint_url(), "https://api.mistral.ai/v1/chat/completions");
/// let options = StreamOptions::default().with_session_id("s-1");
/// let request = config.prepare_call(&Context::from_messages([user("hi").into()]), &options).unwrap();
/// assert_eq!(request.header("authorization"), Some("Bearer secret"));
/// assert_eq!(request.header("x-affinity"), Some("s-1"));
/// ```
pub type MistralConfig = EndpointConfig<Mistral>;

/// What Mistral adds to an [`EndpointConfig`]: a bearer key, the session
/// id as `x-affinity` (Mistral's prefix-cache affinity), and the body of
/// [`request`](super::request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mistral;

impl MistralConfig {
    /// A configuration for `model` at `base_url` (such as
    /// [`MISTRAL_BASE_URL`]), without API key or timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::with_protocol(base_url, model, Mistral)
    }
}

impl Protocol for Mistral {
    type Projector = MistralProjector;
    const PROVIDER: &'static str = "mistral";
    const ENDPOINT: &'static str = "/chat/completions";
    const BASE_PATH: BasePath = BasePath::Prefix;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(key) = api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
    }

    /// pi-ai's `x-affinity`: the session id, whatever the cache retention.
    fn call_headers(&self, call: &Call<'_>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(id) = &call.options.session_id {
            headers.push(("x-affinity", id.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_forms_give_the_chat_endpoint() {
        for base in [
            "https://api.mistral.ai",
            "https://api.mistral.ai/",
            "https://api.mistral.ai/v1",
        ] {
            assert_eq!(
                MistralConfig::new(base, "m").endpoint_url(),
                "https://api.mistral.ai/v1/chat/completions"
            );
        }
        assert_eq!(
            MistralConfig::new("http://h:1/mistral", "m").endpoint_url(),
            "http://h:1/mistral/v1/chat/completions"
        );
    }
}
