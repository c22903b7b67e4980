//! [`GeminiConfig`]: the [`EndpointConfig`] of a Gemini
//! `streamGenerateContent` endpoint (the Gemini API, or Vertex AI), and
//! [`Gemini`], what the protocol adds.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use agentstream::model::ReasoningEffort;
use serde_json::Value;

use super::projector::{GeminiApi, GeminiProjector};
use super::request::{build_request, effort_thinking, SchemaMode, Thinking};
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::endpoint::{api_url_at, push_path_segment};
use crate::request::RequestError;

/// The Gemini API's base URL.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The API root of a Gemini base URL without a path.
const GEMINI_VERSION: &str = "/v1beta";

/// The configuration of a Gemini endpoint, shared by every adapter's
/// `GeminiModel` (the builders and fields every provider has are
/// [`EndpointConfig`]'s).
///
/// Calls go to `{base}/models/{model}:streamGenerateContent?alt=sse`. A
/// base URL without a path has the root `/v1beta`; another path is the
/// root itself (`…/v1beta`, `…/v1`, a proxy's path); the base's query
/// string follows `alt=sse`. The Gemini API takes the key in
/// `x-goog-api-key`; Vertex AI ([`vertex`](Self::vertex)) takes an OAuth
/// access token as a bearer token.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::gemini::GeminiConfig;
///
/// let config = GeminiConfig::new("gemini-2.5-flash").with_api_key("AIza-secret");
/// assert_eq!(
///     config.endpoint_url(),
///     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
/// );
/// let request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// assert_eq!(request.header("x-goog-api-key"), Some("AIza-secret"));
/// assert!(!format!("{config:?} {request:?}").contains("AIza-secret"));
///
/// let vertex = GeminiConfig::vertex("my-project", "us-central1", "gemini-2.5-pro").with_api_key("ya29.token");
/// assert_eq!(
///     vertex.endpoint_url(),
///     "https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
/// );
/// let request = vertex.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// assert_eq!(request.header("authorization"), Some("Bearer ya29.token"));
/// ```
pub type GeminiConfig = EndpointConfig<Gemini>;

/// How a Gemini endpoint takes its credential.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GeminiAuth {
    /// The Gemini API: the key in `x-goog-api-key`.
    #[default]
    ApiKey,
    /// Vertex AI: an OAuth access token in `Authorization: Bearer`.
    Bearer,
}

/// What Gemini adds to an [`EndpointConfig`]: which API serves it, how
/// the credential is sent, the thinking setting when a call asks for none,
/// and how schemas are sent. Its [`Protocol::body`] writes the request
/// body (see [`request`](super::request)):
///
/// ```
/// use agentstream::message::{assistant, tool_call, tool_result, user, Context, StopReason};
/// use agentstream::model::StreamOptions;
/// use agentstream_wire::config::{Call, Protocol};
/// use agentstream_wire::gemini::Gemini;
/// use serde_json::json;
///
/// let mut context = Context::from_messages([
///     user("Weather in Paris?").into(),
///     assistant([tool_call("c1", "weather", json!({"city": "Paris"}))], StopReason::ToolUse).into(),
///     tool_result("c1", "weather", "18°C", false).into(),
/// ]);
/// context.system_prompt = Some("Be brief.".into());
/// let options = StreamOptions::default();
/// let call = Call { model: "gemini-2.5-flash", provider: "google", options: &options };
/// let body = Gemini::default().body(&context, &call).unwrap();
/// assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "Be brief."}]}));
/// assert_eq!(body["contents"][1]["parts"][0]["functionCall"]["name"], "weather");
/// assert_eq!(
///     body["contents"][2],
///     json!({"role": "user", "parts": [
///         {"functionResponse": {"name": "weather", "response": {"output": "18°C"}}}
///     ]})
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gemini {
    /// The API the messages record (and the one "the same model" is
    /// checked against). Default [`GeminiApi::GenerativeAi`];
    /// [`GeminiConfig::vertex`] sets [`GeminiApi::Vertex`].
    pub api: GeminiApi,
    /// How the credential is sent. Default [`GeminiAuth::ApiKey`].
    pub auth: GeminiAuth,
    /// The thinking setting when a call sets no thinking budget and no
    /// reasoning effort (see [`thinking_for`](Gemini::thinking_for)).
    pub thinking: Option<Thinking>,
    /// How schemas are sent. Default [`SchemaMode::JsonSchema`].
    pub schema_mode: SchemaMode,
}

impl Gemini {
    /// The thinking setting sent for `call`: its thinking budget
    /// ([`Thinking::Budget`]), else its reasoning effort as Pi maps it for
    /// the model (a `thinkingLevel` for Gemini 3 Pro: `minimal`/`low` →
    /// `LOW`, else `HIGH`; for Gemma 4: `MINIMAL` or `HIGH`; for Gemini 3
    /// Flash: the same name; otherwise a budget: Pi's table for Gemini 2.5
    /// Pro (128, 2048, 8192, 32768), 2.5 Flash-Lite (512, 2048, 8192,
    /// 24576) and 2.5 Flash (128, 2048, 8192, 24576), `-1` (dynamic) for
    /// other models), else [`thinking`](Gemini::thinking).
    ///
    /// ```
    /// use agentstream::model::{ReasoningEffort, StreamOptions};
    /// use agentstream_wire::config::Call;
    /// use agentstream_wire::gemini::{Gemini, Thinking, ThinkingLevel};
    ///
    /// let options = StreamOptions::default().with_reasoning_effort(ReasoningEffort::Low);
    /// let call = |model| Call { model, provider: "google", options: &options };
    /// let gemini = Gemini::default();
    /// assert_eq!(gemini.thinking_for(&call("gemini-2.5-flash")), Some(Thinking::Budget(2048)));
    /// assert_eq!(
    ///     gemini.thinking_for(&call("gemini-3-pro-preview")),
    ///     Some(Thinking::Level(ThinkingLevel::Low))
    /// );
    /// ```
    ///
    /// A call's [`thinking`](agentstream::model::StreamOptions::thinking)
    /// level wins over all of these, as pi-ai's `streamSimpleGoogle` maps
    /// it: nothing for a model that does not reason; `Off` as
    /// [`Thinking::Off`]; another level clamped to the model's levels (a
    /// level clamped to `off` counts as `high`, `xhigh` as `high`) and
    /// mapped as the effort of the same name above.
    pub fn thinking_for(&self, call: &Call<'_>) -> Option<Thinking> {
        if let Some(level) = call.options.thinking {
            return level_thinking(call, level);
        }
        if let Some(budget) = call.options.thinking_budget {
            Some(Thinking::Budget(i64::try_from(budget).unwrap_or(i64::MAX)))
        } else if let Some(effort) = call.options.reasoning_effort {
            Some(effort_thinking(call.model, effort))
        } else {
            self.thinking
        }
    }
}

/// The thinking setting of a Pi thinking level (see
/// [`Gemini::thinking_for`]).
fn level_thinking(call: &Call<'_>, level: agentstream::model::ThinkingLevel) -> Option<Thinking> {
    use agentstream::model::ThinkingLevel as Level;
    let traits = call.options.thinking_model.unwrap_or_default();
    if !traits.reasoning {
        return None;
    }
    if level == Level::Off {
        return Some(Thinking::Off);
    }
    let effort = match traits.clamp(level) {
        Level::Minimal => ReasoningEffort::Minimal,
        Level::Low => ReasoningEffort::Low,
        Level::Medium => ReasoningEffort::Medium,
        _ => ReasoningEffort::High,
    };
    Some(effort_thinking(call.model, effort))
}

impl GeminiConfig {
    /// A configuration for `model` on the Gemini API
    /// ([`GEMINI_BASE_URL`]), without API key or timeouts.
    pub fn new(model: impl Into<String>) -> Self {
        Self::with_protocol(GEMINI_BASE_URL, model, Gemini::default())
    }

    /// A configuration for `model` on Vertex AI in `project` at `location`
    /// (`us-central1`, or `global`), provider and API `google-vertex` (as
    /// Pi records them): the base URL
    /// `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google`
    /// (`aiplatform.googleapis.com` for `global`) and the access token set
    /// with [`with_api_key`](EndpointConfig::with_api_key) sent as a bearer
    /// token.
    pub fn vertex(
        project: impl AsRef<str>,
        location: impl AsRef<str>,
        model: impl Into<String>,
    ) -> Self {
        let (project, location) = (project.as_ref(), location.as_ref());
        let host = if location == "global" {
            "aiplatform.googleapis.com".to_owned()
        } else {
            format!("{location}-aiplatform.googleapis.com")
        };
        let base =
            format!("https://{host}/v1/projects/{project}/locations/{location}/publishers/google");
        let protocol = Gemini {
            api: GeminiApi::Vertex,
            auth: GeminiAuth::Bearer,
            ..Gemini::default()
        };
        Self::with_protocol(base, model, protocol).with_provider("google-vertex")
    }

    /// Sets the API (see [`Gemini::api`]).
    pub fn with_api(mut self, api: GeminiApi) -> Self {
        self.protocol.api = api;
        self
    }

    /// Sets how the credential is sent.
    pub fn with_auth(mut self, auth: GeminiAuth) -> Self {
        self.protocol.auth = auth;
        self
    }

    /// Sets the thinking setting used when a call asks for none.
    pub fn with_thinking(mut self, thinking: Thinking) -> Self {
        self.protocol.thinking = Some(thinking);
        self
    }

    /// Sets how schemas are sent.
    pub fn with_schema_mode(mut self, mode: SchemaMode) -> Self {
        self.protocol.schema_mode = mode;
        self
    }
}

impl Protocol for Gemini {
    type Projector = GeminiProjector;
    const PROVIDER: &'static str = "google";
    const ENDPOINT: &'static str = ":streamGenerateContent";
    const BASE_PATH: BasePath = BasePath::Root;

    fn endpoint_url(&self, base_url: &str, model: &str) -> String {
        // The model is one path segment: anything else is percent-encoded.
        let mut endpoint = String::from("/models/");
        push_path_segment(&mut endpoint, model);
        endpoint.push_str(Self::ENDPOINT);
        api_url_at(
            base_url,
            Self::BASE_PATH,
            GEMINI_VERSION,
            &endpoint,
            "alt=sse",
        )
    }

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(
            context,
            self.api.name(),
            self.schema_mode,
            self.thinking_for(call),
            call,
        )
    }

    fn projector(&self, model: String, provider: String) -> GeminiProjector {
        GeminiProjector::for_api(self.api, model, provider)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        match (api_key, self.auth) {
            (None, _) => {}
            (Some(key), GeminiAuth::Bearer) => {
                headers.push(("authorization", format!("Bearer {key}")));
            }
            (Some(key), _) => headers.push(("x-goog-api-key", key.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::user;
    use agentstream::model::StreamOptions;

    fn url(base: &str, model: &str) -> String {
        GeminiConfig::new(model).with_base_url(base).endpoint_url()
    }

    #[test]
    fn base_url_forms_give_the_stream_endpoint() {
        for base in [
            "http://h:1",
            "http://h:1/",
            "http://h:1/v1beta",
            "http://h:1/v1beta/",
        ] {
            assert_eq!(
                url(base, "g"),
                "http://h:1/v1beta/models/g:streamGenerateContent?alt=sse",
                "{base}"
            );
        }
        assert_eq!(
            url("https://proxy/google/v1?x=1#f", "g"),
            "https://proxy/google/v1/models/g:streamGenerateContent?alt=sse&x=1"
        );
        assert_eq!(
            url("http://h", "a/b?c"),
            "http://h/v1beta/models/a%2Fb%3Fc:streamGenerateContent?alt=sse"
        );
        let global = GeminiConfig::vertex("p", "global", "g");
        assert!(global
            .endpoint_url()
            .starts_with("https://aiplatform.googleapis.com/v1/projects/p/locations/global/"));
        assert_eq!(global.provider, "google-vertex");
        assert_eq!(global.protocol.api, GeminiApi::Vertex);
        assert_eq!(GeminiConfig::new("g").protocol.api, GeminiApi::GenerativeAi);
    }

    #[test]
    fn defaults_then_call_options_reach_the_body() {
        let config = GeminiConfig::new("gemini-2.5-flash")
            .with_defaults(StreamOptions::default().with_max_tokens(100))
            .with_thinking(Thinking::Off);
        let call = StreamOptions::default().with_temperature(0.25);
        let request = config
            .prepare_call(&Context::from_messages([user("hi").into()]), &call)
            .unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let generation = &body["generationConfig"];
        assert_eq!(generation["maxOutputTokens"], 100);
        assert_eq!(generation["temperature"], 0.25);
        assert_eq!(generation["thinkingConfig"]["thinkingBudget"], 0);
        assert!(body.get("model").is_none());
    }
}
