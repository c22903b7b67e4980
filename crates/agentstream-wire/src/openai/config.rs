//! [`OpenAiConfig`]: the [`EndpointConfig`] of an OpenAI-compatible Chat
//! Completions endpoint, and [`OpenAiChat`], what the protocol adds.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::OpenAiProjector;
use super::request::{build_request, Compat};
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
pub use crate::endpoint::PreparedRequest;
use crate::request::{caching, RequestError};

/// The configuration of an OpenAI-compatible endpoint, shared by every
/// adapter's `OpenAiCompatModel` (the builders and fields every provider
/// has are [`EndpointConfig`]'s).
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
pub type OpenAiConfig = EndpointConfig<OpenAiChat>;

/// What OpenAI-compatible Chat Completions add to an [`EndpointConfig`]:
/// the provider differences in the request body, and a bearer token in
/// `Authorization`. Its [`Protocol::body`] writes the request body (see
/// [`request`](super::request)):
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::config::{Call, Protocol};
/// use agentstream_wire::openai::OpenAiChat;
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("c1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("c1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// let options = StreamOptions::default();
/// let call = Call { model: "gpt-4o", provider: "openai", options: &options };
/// let body = OpenAiChat::default().body(&context, &call).unwrap();
/// assert_eq!(body["messages"][0], json!({"role": "system", "content": "Be brief."}));
/// assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"city\":\"Paris\"}");
/// assert_eq!(body["messages"][3], json!({"role": "tool", "tool_call_id": "c1", "content": "18°C"}));
/// assert_eq!(body["stream_options"], json!({"include_usage": true}));
///
/// // Without the tool result, the request would be broken: it is refused.
/// context.messages.pop();
/// let error = OpenAiChat::default().body(&context, &call).unwrap_err();
/// assert_eq!(error.diagnostics[0].code, "unanswered-tool-call");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenAiChat {
    /// Provider differences in the request body.
    pub compat: Compat,
}

impl OpenAiConfig {
    /// A configuration for `model` at `base_url` (such as
    /// `https://api.openai.com/v1`), without API key or timeouts, with the
    /// default [`Compat`].
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::with_protocol(base_url, model, OpenAiChat::default())
    }

    /// Sets the provider differences.
    pub fn with_compat(mut self, compat: Compat) -> Self {
        self.protocol.compat = compat;
        self
    }
}

impl Protocol for OpenAiChat {
    type Projector = OpenAiProjector;
    const PROVIDER: &'static str = "openai";
    const ENDPOINT: &'static str = "/chat/completions";
    const BASE_PATH: BasePath = BasePath::Root;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, self.compat, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(key) = api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
    }

    /// The session-affinity headers, when [`Compat::session_affinity_headers`]
    /// is on and the call caches with a session id.
    fn call_headers(&self, call: &Call<'_>, headers: &mut Vec<(&'static str, String)>) {
        if !self.compat.session_affinity_headers
            || !caching(call.options.cache_retention_or_default())
        {
            return;
        }
        if let Some(id) = &call.options.session_id {
            for name in ["session_id", "x-client-request-id", "x-session-affinity"] {
                headers.push((name, id.clone()));
            }
        }
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
        // Without a host, the URL stays without one (the call path refuses it).
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
