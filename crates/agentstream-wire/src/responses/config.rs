//! [`ResponsesConfig`]: the [`EndpointConfig`] of an OpenAI Responses
//! endpoint, and [`OpenAiResponses`], what the protocol adds.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::ResponsesProjector;
use super::request::{build_request, ReasoningSummary};
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::request::{caching, RequestError};

/// OpenAI's own API root: the default base URL of the Responses API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The configuration of an OpenAI Responses endpoint (`POST
/// {base}/responses`), shared by every adapter's `ResponsesModel` (the
/// builders and fields every provider has are [`EndpointConfig`]'s). Base
/// URLs read as for Chat Completions: `http://host:port` and `…/v1` (a
/// trailing `/` or not) have the root `/v1`; another path is the root
/// itself.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::responses::ResponsesConfig;
///
/// let config = ResponsesConfig::new("https://api.openai.com/v1/", "gpt-5").with_api_key("sk-secret");
/// assert_eq!(config.endpoint_url(), "https://api.openai.com/v1/responses");
/// let request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// assert_eq!(request.header("authorization"), Some("Bearer sk-secret"));
/// assert!(!format!("{config:?} {request:?}").contains("sk-secret"));
/// let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
/// assert_eq!((body["model"].as_str(), body["store"].as_bool()), (Some("gpt-5"), Some(false)));
/// ```
pub type ResponsesConfig = EndpointConfig<OpenAiResponses>;

/// What OpenAI Responses add to an [`EndpointConfig`]: the reasoning
/// summary, whether OpenAI stores the response, and a bearer token in
/// `Authorization`. Its [`Protocol::body`] writes the request body (see
/// [`request`](super::request)):
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::config::{Call, Protocol};
/// use agentstream_wire::responses::OpenAiResponses;
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("call_1|fc_1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("call_1|fc_1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// let options = StreamOptions::default();
/// let call = Call { model: "gpt-5", provider: "openai", options: &options };
/// let body = OpenAiResponses::default().body(&context, &call).unwrap();
/// assert_eq!(body["instructions"], "Be brief.");
/// assert_eq!(body["store"], false);
/// assert_eq!(body["input"][1]["call_id"], "call_1");
/// assert_eq!(
///     body["input"][2],
///     json!({"type": "function_call_output", "call_id": "call_1", "output": "18°C"})
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenAiResponses {
    /// `reasoning.summary`, if any (`auto` when only an effort is set).
    pub reasoning_summary: Option<ReasoningSummary>,
    /// `store`. Default `false`, with the encrypted reasoning included in
    /// the stream so it can be sent back.
    pub store: bool,
}

impl ResponsesConfig {
    /// A configuration for `model` at `base_url` (such as
    /// `https://api.openai.com/v1`), without API key or timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::with_protocol(base_url, model, OpenAiResponses::default())
    }

    /// Sets the reasoning summary.
    pub fn with_reasoning_summary(mut self, summary: ReasoningSummary) -> Self {
        self.protocol.reasoning_summary = Some(summary);
        self
    }

    /// Sets `store`.
    pub fn with_store(mut self, store: bool) -> Self {
        self.protocol.store = store;
        self
    }
}

impl Protocol for OpenAiResponses {
    type Projector = ResponsesProjector;
    const PROVIDER: &'static str = "openai";
    const ENDPOINT: &'static str = "/responses";
    const BASE_PATH: BasePath = BasePath::Root;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, self, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(key) = api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
    }

    /// pi-ai's session headers: `session_id` and `x-client-request-id`
    /// carry the session id when the call caches.
    fn call_headers(&self, call: &Call<'_>, headers: &mut Vec<(&'static str, String)>) {
        if !caching(call.options.cache_retention_or_default()) {
            return;
        }
        if let Some(id) = &call.options.session_id {
            headers.push(("session_id", id.clone()));
            headers.push(("x-client-request-id", id.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::user;
    use agentstream::model::StreamOptions;

    #[test]
    fn base_url_forms_give_the_responses_endpoint() {
        for base in [
            "http://h:1",
            "http://h:1/",
            "http://h:1/v1",
            "http://h:1/v1/",
        ] {
            assert_eq!(
                ResponsesConfig::new(base, "m").endpoint_url(),
                "http://h:1/v1/responses"
            );
        }
        let proxy = ResponsesConfig::new("https://h/openai?api-version=1", "m");
        assert_eq!(
            proxy.endpoint_url(),
            "https://h/openai/responses?api-version=1"
        );
    }

    #[test]
    fn defaults_then_call_options_reach_the_body() {
        let config = ResponsesConfig::new("http://h/v1", "gpt-5")
            .with_defaults(
                StreamOptions::default()
                    .with_max_tokens(100)
                    .with_temperature(0.5),
            )
            .with_reasoning_summary(ReasoningSummary::Detailed);
        let call = StreamOptions::default().with_max_tokens(7);
        let request = config
            .prepare_call(&Context::from_messages([user("hi").into()]), &call)
            .unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(body["max_output_tokens"], 7);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["reasoning"]["summary"], "detailed");
        assert!(request.header("authorization").is_none());
    }
}
