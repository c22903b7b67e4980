//! [`AzureConfig`]: the [`EndpointConfig`] of an Azure OpenAI Responses
//! endpoint, and [`AzureOpenAiResponses`], what the protocol adds.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::{AzureResponsesProjector, AZURE_OPENAI_RESPONSES_API};
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::endpoint::api_url_at;
use crate::request::RequestError;
use crate::responses::request::{write_body, Dialect, ReasoningSummary};

/// The `api-version` query pi-ai sends by default (`AZURE_OPENAI_API_VERSION`
/// overrides it).
pub const AZURE_API_VERSION: &str = "v1";

/// pi-ai's provider name of Azure OpenAI Responses.
pub(crate) const PROVIDER: &str = "azure-openai-responses";

/// The API root Azure's base URLs are normalised to.
const AZURE_ROOT: &str = "/openai/v1";

/// The providers whose `call|item` tool-call ids pi-ai keeps paired for
/// Azure.
const PAIRED_ID_PROVIDERS: [&str; 4] = [
    "openai",
    "openai-codex",
    "opencode",
    "azure-openai-responses",
];

/// The configuration of an Azure OpenAI Responses endpoint (`POST
/// {base}/responses?api-version=v1`). A base URL without a path, or with
/// the path `/openai`, has the root `/openai/v1` (pi-ai does so for
/// `*.openai.azure.com` and `*.cognitiveservices.azure.com` hosts; here
/// every host, so a local server reads the same base as Azure); another
/// path is the root itself.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::azure::{AzureConfig, resource_base_url};
///
/// let config = AzureConfig::new(resource_base_url("acme"), "gpt-5")
///     .with_deployment("prod-gpt5")
///     .with_api_key("secret");
/// assert_eq!(
///     config.endpoint_url(),
///     "https://acme.openai.azure.com/openai/v1/responses?api-version=v1"
/// );
/// let request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// assert_eq!(request.header("api-key"), Some("secret"));
/// assert!(!format!("{config:?} {request:?}").contains("secret"));
/// let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
/// assert_eq!(body["model"], "prod-gpt5");
/// assert!(body.get("store").is_none());
/// ```
pub type AzureConfig = EndpointConfig<AzureOpenAiResponses>;

/// What Azure OpenAI Responses add to an [`EndpointConfig`]: the
/// deployment the body names, the `api-version`, the reasoning summary
/// and the `api-key` header. Its body is OpenAI Responses' (see
/// [`responses::request`](crate::responses::request)) without `store`,
/// with the session id as the cache key whatever the retention, and the
/// encrypted reasoning included only with a reasoning setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AzureOpenAiResponses {
    /// The deployment the body's `model` names; `None`: the model id.
    pub deployment: Option<String>,
    /// The `api-version` query; `None`: [`AZURE_API_VERSION`].
    pub api_version: Option<String>,
    /// `reasoning.summary`, if any (`auto` when only an effort is set).
    pub reasoning_summary: Option<ReasoningSummary>,
}

impl AzureConfig {
    /// A configuration for `model` at `base_url` (such as
    /// `https://RESOURCE.openai.azure.com/openai/v1`), without API key or
    /// timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::with_protocol(base_url, model, AzureOpenAiResponses::default())
    }

    /// Sets the deployment the body names.
    pub fn with_deployment(mut self, deployment: impl Into<String>) -> Self {
        self.protocol.deployment = Some(deployment.into());
        self
    }

    /// Sets the `api-version` query.
    pub fn with_api_version(mut self, version: impl Into<String>) -> Self {
        self.protocol.api_version = Some(version.into());
        self
    }

    /// Sets the reasoning summary.
    pub fn with_reasoning_summary(mut self, summary: ReasoningSummary) -> Self {
        self.protocol.reasoning_summary = Some(summary);
        self
    }
}

/// The base URL of the Azure resource `name`, as pi-ai builds it from
/// `AZURE_OPENAI_RESOURCE_NAME`: `https://{name}.openai.azure.com/openai/v1`.
pub fn resource_base_url(name: &str) -> String {
    format!("https://{name}.openai.azure.com{AZURE_ROOT}")
}

/// The deployment of `model_id` in `map`, a value of
/// `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` read as pi-ai reads it: entries
/// `model=deployment` separated by `,`, each side trimmed, an entry
/// without `=` or with an empty side skipped, the last entry for a model
/// winning; a deployment is cut at its first further `=`.
///
/// ```
/// use agentstream_wire::azure::deployment_name;
/// let map = " gpt-5 = prod ,bad, o3=x=y, gpt-5=prod2";
/// assert_eq!(deployment_name(map, "gpt-5"), Some("prod2"));
/// assert_eq!(deployment_name(map, "o3"), Some("x"));
/// assert_eq!(deployment_name(map, "gpt-4o"), None);
/// ```
pub fn deployment_name<'a>(map: &'a str, model_id: &str) -> Option<&'a str> {
    map.split(',')
        .filter_map(|entry| {
            let mut sides = entry.trim().split('=');
            let model = sides.next()?.trim();
            let deployment = sides.next()?.trim();
            (!model.is_empty() && !deployment.is_empty()).then_some((model, deployment))
        })
        .rev()
        .find(|(model, _)| *model == model_id)
        .map(|(_, deployment)| deployment)
}

impl Protocol for AzureOpenAiResponses {
    type Projector = AzureResponsesProjector;
    const PROVIDER: &'static str = PROVIDER;
    const ENDPOINT: &'static str = "/responses";
    const BASE_PATH: BasePath = BasePath::Root;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        let dialect = Dialect {
            api: AZURE_OPENAI_RESPONSES_API,
            store: None,
            reasoning_summary: self.reasoning_summary,
            paired_id_providers: &PAIRED_ID_PROVIDERS,
            cache_by_retention: false,
        };
        let mut body = write_body(context, &dialect, call)?;
        if let Some(deployment) = &self.deployment {
            body["model"] = Value::String(deployment.clone());
        }
        Ok(body)
    }

    /// `{base}/responses?api-version=…`, the base's root `/openai/v1` when
    /// its path is empty or `/openai`.
    fn endpoint_url(&self, base_url: &str, _model: &str) -> String {
        let (path, query) = base_url.split_once('?').unwrap_or((base_url, ""));
        let trimmed = path.trim_end_matches('/');
        let base = match trimmed.strip_suffix("/openai") {
            Some(host) if !host.ends_with('/') && host.contains("://") => host,
            _ => trimmed,
        };
        let version = self.api_version.as_deref().unwrap_or(AZURE_API_VERSION);
        let base = match query {
            "" => String::from(base),
            query => format!("{base}?{query}"),
        };
        let version = format!("api-version={version}");
        api_url_at(&base, BasePath::Root, AZURE_ROOT, Self::ENDPOINT, &version)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(key) = api_key {
            headers.push(("api-key", key.into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::message::user;
    use agentstream::model::{CacheRetention, StreamOptions};

    #[test]
    fn base_url_forms_give_the_azure_endpoint() {
        let want = "https://r.openai.azure.com/openai/v1/responses?api-version=v1";
        for base in [
            "https://r.openai.azure.com",
            "https://r.openai.azure.com/",
            "https://r.openai.azure.com/openai",
            "https://r.openai.azure.com/openai/",
            "https://r.openai.azure.com/openai/v1",
            "https://r.openai.azure.com/openai/v1/",
        ] {
            assert_eq!(AzureConfig::new(base, "m").endpoint_url(), want, "{base}");
        }
        let local =
            AzureConfig::new("http://127.0.0.1:8080", "m").with_api_version("2025-04-01-preview");
        assert_eq!(
            local.endpoint_url(),
            "http://127.0.0.1:8080/openai/v1/responses?api-version=2025-04-01-preview"
        );
        let proxy = AzureConfig::new("https://gw/azure/x?k=1", "m");
        assert_eq!(
            proxy.endpoint_url(),
            "https://gw/azure/x/responses?api-version=v1&k=1"
        );
    }

    #[test]
    fn the_body_has_no_store_and_the_session_is_the_cache_key() {
        let options = StreamOptions::default()
            .with_session_id("s-1")
            .with_cache_retention(CacheRetention::None);
        let config = AzureConfig::new("http://h", "gpt-5");
        let request = config
            .prepare_call(&Context::from_messages([user("hi").into()]), &options)
            .unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(body["model"], "gpt-5");
        assert_eq!(body["prompt_cache_key"], "s-1");
        for absent in ["store", "include", "prompt_cache_retention"] {
            assert!(body.get(absent).is_none(), "{absent}: {body}");
        }
        assert!(request.header("session_id").is_none());
    }
}
