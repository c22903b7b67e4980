//! A model of pi-ai's catalogue ([`agentstream_models`]) as a configured
//! endpoint, in one call: [`config_from_catalogue`] picks the protocol by
//! the model's api and carries over its base URL, id, provider, headers,
//! prices, Chat Completions compat flags, what it says about reasoning
//! ([`ThinkingModel`](agentstream::model::ThinkingModel)) and pi-ai's
//! default output limit. Each host crate turns the result into its model
//! (`agentstream_tokio::model_from_catalogue`, …). Behind the `catalogue`
//! feature.
//!
//! ```
//! use agentstream_wire::catalogue::{config_from_catalogue, CatalogueConfig};
//!
//! let model = agentstream_models::get_model("anthropic", "claude-sonnet-4-5").unwrap();
//! let CatalogueConfig::Anthropic(config) = config_from_catalogue(model, Some("sk-ant"))? else {
//!     panic!("an Anthropic model")
//! };
//! assert_eq!(config.endpoint_url(), "https://api.anthropic.com/v1/messages");
//! assert_eq!(config.defaults.max_tokens, Some(32000));
//! assert!(config.defaults.thinking_model.is_some());
//! # Ok::<(), agentstream_wire::catalogue::CatalogueError>(())
//! ```

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use agentstream_models::Model;

use crate::anthropic::AnthropicConfig;
use crate::azure::{AzureConfig, AzureOpenAiResponses};
use crate::bedrock::auth::{self, AuthOptions};
use crate::bedrock::{Bedrock, BedrockConfig, DEFAULT_REGION};
use crate::config::{EndpointConfig, Protocol};
use crate::gemini::GeminiConfig;
use crate::host::{ClientError, Host};
use crate::mistral::{Mistral, MistralConfig};
use crate::model::EndpointModel;
use crate::openai::{Compat, OpenAiChat, OpenAiConfig, ThinkingFormat};
use crate::options::HeaderError;
use crate::pricing::Pricing;
use crate::responses::ResponsesConfig;

/// pi-ai's cap on the default output limit (`streamSimple`'s
/// `min(model.maxTokens, 32000)`).
pub const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;

/// A catalogue model configured for the protocol its api names.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CatalogueConfig {
    /// `openai-completions`.
    OpenAi(OpenAiConfig),
    /// `anthropic-messages`.
    Anthropic(AnthropicConfig),
    /// `openai-responses`.
    Responses(ResponsesConfig),
    /// `google-generative-ai`.
    Gemini(GeminiConfig),
    /// `azure-openai-responses`: the deployment is the model's id and the
    /// catalogue has no base URL for it (each resource has its own): set
    /// one with [`with_base_url`](Self::with_base_url).
    Azure(AzureConfig),
    /// `mistral-conversations`.
    Mistral(MistralConfig),
    /// `bedrock-converse-stream`: the API key is sent as Bedrock's bearer
    /// token; for SigV4, set credentials
    /// ([`BedrockConfig::with_credentials`]). The signing region is the
    /// one of the catalogue's base URL.
    Bedrock(BedrockConfig),
}

impl CatalogueConfig {
    /// The same configuration sending to `base_url` instead of the
    /// catalogue's (a proxy, a local mock).
    pub fn with_base_url(self, base_url: impl Into<String>) -> Self {
        match self {
            Self::OpenAi(c) => Self::OpenAi(c.with_base_url(base_url)),
            Self::Anthropic(c) => Self::Anthropic(c.with_base_url(base_url)),
            Self::Responses(c) => Self::Responses(c.with_base_url(base_url)),
            Self::Gemini(c) => Self::Gemini(c.with_base_url(base_url)),
            Self::Azure(c) => Self::Azure(c.with_base_url(base_url)),
            Self::Mistral(c) => Self::Mistral(c.with_base_url(base_url)),
            Self::Bedrock(c) => Self::Bedrock(c.with_base_url(base_url)),
        }
    }
}

/// Why a catalogue model could not be configured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogueError {
    /// The model's api is not one this crate speaks.
    UnsupportedApi {
        /// `provider/id`.
        model: String,
        /// The api.
        api: &'static str,
    },
    /// A header of the model was refused.
    Header(HeaderError),
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedApi { model, api } => write!(
                f,
                "{model}: its api `{api}` is not one this crate speaks (openai-completions, anthropic-messages, openai-responses, google-generative-ai, azure-openai-responses, mistral-conversations, bedrock-converse-stream)"
            ),
            Self::Header(e) => write!(f, "a header of the catalogue model: {e}"),
        }
    }
}

impl core::error::Error for CatalogueError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Header(e) => Some(e),
            Self::UnsupportedApi { .. } => None,
        }
    }
}

/// `m` configured for its api, with `api_key` (see the [module
/// documentation](self)).
///
/// # Errors
/// [`CatalogueError::UnsupportedApi`] for an api this crate does not
/// speak (`google-vertex`, `openai-codex-responses`);
/// [`CatalogueError::Header`] when a header of the model is refused.
pub fn config_from_catalogue(
    m: &Model,
    api_key: Option<&str>,
) -> Result<CatalogueConfig, CatalogueError> {
    Ok(match m.api {
        "openai-completions" => CatalogueConfig::OpenAi(
            endpoint_config(m, api_key, OpenAiChat::default())?.with_compat(compat(m)),
        ),
        "anthropic-messages" => {
            CatalogueConfig::Anthropic(endpoint_config(m, api_key, Default::default())?)
        }
        "openai-responses" => {
            CatalogueConfig::Responses(endpoint_config(m, api_key, Default::default())?)
        }
        "google-generative-ai" => {
            CatalogueConfig::Gemini(endpoint_config(m, api_key, Default::default())?)
        }
        "azure-openai-responses" => CatalogueConfig::Azure(endpoint_config(
            m,
            api_key,
            AzureOpenAiResponses::default(),
        )?),
        "mistral-conversations" => CatalogueConfig::Mistral(endpoint_config(m, api_key, Mistral)?),
        "bedrock-converse-stream" => {
            // The catalogue's URL names the region (no environment here).
            let region = auth::resolve_region(&AuthOptions::default(), m.base_url, |_| None);
            let protocol = Bedrock {
                region: region.region.unwrap_or_else(|| DEFAULT_REGION.into()),
                credentials: None,
            };
            CatalogueConfig::Bedrock(endpoint_config(m, api_key, protocol)?)
        }
        api => {
            let mut model = String::from(m.provider);
            model.push('/');
            model.push_str(m.id);
            return Err(CatalogueError::UnsupportedApi { model, api });
        }
    })
}

/// `m` configured for its api as a model on the host `H` (what each host
/// crate's `model_from_catalogue` calls with its own host).
///
/// # Errors
/// A [`CatalogueModelError`]: the model could not be configured, or the
/// host could not build its client.
pub fn model_from_catalogue<H: Host>(
    m: &Model,
    api_key: Option<&str>,
) -> Result<Box<dyn agentstream::model::Model + Send + Sync>, CatalogueModelError> {
    fn boxed<E, H>(
        endpoint: E,
    ) -> Result<Box<dyn agentstream::model::Model + Send + Sync>, CatalogueModelError>
    where
        E: crate::endpoint::Endpoint + Send + Sync + 'static,
        H: Host,
    {
        let model = EndpointModel::<E, H>::new(endpoint).map_err(CatalogueModelError::Client)?;
        Ok(Box::new(model))
    }
    match config_from_catalogue(m, api_key).map_err(CatalogueModelError::Catalogue)? {
        CatalogueConfig::OpenAi(c) => boxed::<_, H>(c),
        CatalogueConfig::Anthropic(c) => boxed::<_, H>(c),
        CatalogueConfig::Responses(c) => boxed::<_, H>(c),
        CatalogueConfig::Gemini(c) => boxed::<_, H>(c),
        CatalogueConfig::Azure(c) => boxed::<_, H>(c),
        CatalogueConfig::Mistral(c) => boxed::<_, H>(c),
        CatalogueConfig::Bedrock(c) => boxed::<_, H>(c),
    }
}

/// Why [`model_from_catalogue`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CatalogueModelError {
    /// The model could not be configured.
    Catalogue(CatalogueError),
    /// The host could not build its client.
    Client(ClientError),
}

impl fmt::Display for CatalogueModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Catalogue(e) => e.fmt(f),
            Self::Client(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for CatalogueModelError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Catalogue(e) => e.source(),
            Self::Client(e) => e.source(),
        }
    }
}

/// The configuration of `m` for `protocol`, any protocol: its base URL,
/// id, provider, prices, headers, pi-ai's default output limit
/// (`min(maxTokens, 32000)`, as `streamSimple`) and reasoning facts, with
/// `api_key`. [`config_from_catalogue`] calls it with the protocol the
/// model's api names; a caller that speaks more protocols (Azure's
/// Responses, Mistral's Conversations: the CLI) picks its own.
///
/// # Errors
/// [`CatalogueError::Header`] when a header of the model is refused.
pub fn endpoint_config<P: Protocol>(
    m: &Model,
    api_key: Option<&str>,
    protocol: P,
) -> Result<EndpointConfig<P>, CatalogueError> {
    let mut config = EndpointConfig::with_protocol(m.base_url, m.id, protocol)
        .with_provider(m.provider)
        .with_pricing(Pricing {
            cache_read: m.cost.cache_read,
            cache_write: m.cost.cache_write,
            ..Pricing::new(m.cost.input, m.cost.output)
        });
    if let Some(key) = api_key {
        config = config.with_api_key(key.to_owned());
    }
    for (name, value) in m.headers.unwrap_or_default() {
        config = config
            .with_header(name, value)
            .map_err(CatalogueError::Header)?;
    }
    if m.max_tokens > 0 {
        config.defaults.max_tokens = Some(m.max_tokens.min(DEFAULT_MAX_TOKENS_CAP));
    }
    config.defaults.thinking_model = Some(m.thinking_model());
    Ok(config)
}

/// The compat flags pi-ai's Chat Completions provider uses for `m`: the
/// catalogue's own flags over what pi-ai detects from the provider and
/// the base URL (the detected values for the flags `Compat` has).
pub fn compat(m: &Model) -> Compat {
    let flags = m.compat.unwrap_or_default();
    let url = m.base_url;
    let moonshot = m.provider.starts_with("moonshotai") || url.contains("api.moonshot.");
    let gateway =
        m.provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let non_standard = [
        "cerebras",
        "xai",
        "opencode",
        "zai",
        "cloudflare-workers-ai",
    ]
    .contains(&m.provider)
        || moonshot
        || gateway
        || [
            "cerebras.ai",
            "api.x.ai",
            "chutes.ai",
            "deepseek.com",
            "api.z.ai",
            "opencode.ai",
            "api.cloudflare.com",
        ]
        .iter()
        .any(|host| url.contains(host));
    let detected_field = if url.contains("chutes.ai") || moonshot || gateway {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    let developer = flags.supports_developer_role.unwrap_or(!non_standard);
    let mut compat = Compat::default()
        .with_max_completion_tokens(
            flags.max_tokens_field.unwrap_or(detected_field) != "max_tokens",
        )
        .with_developer_role(m.reasoning && developer)
        .with_stream_options(flags.supports_usage_in_streaming != Some(false))
        .with_detected_caching(m.provider, url, m.id);
    let deepseek = m.provider == "deepseek" || url.contains("deepseek.com");
    compat.session_affinity_headers = flags.send_session_affinity_headers.unwrap_or(false);
    compat.store = flags.supports_store.unwrap_or(!non_standard);
    compat.strict_tools = flags.supports_strict_mode.unwrap_or(!moonshot && !gateway);
    compat.tool_result_name = flags.requires_tool_result_name.unwrap_or(false);
    compat.reasoning_content_on_assistant = m.reasoning
        && flags
            .requires_reasoning_content_on_assistant_messages
            .unwrap_or(deepseek);
    let zai = m.provider == "zai" || url.contains("api.z.ai");
    let grok = m.provider == "xai" || url.contains("api.x.ai");
    compat.thinking_format = flags
        .thinking_format
        .and_then(ThinkingFormat::parse)
        .unwrap_or_else(|| ThinkingFormat::detect(m.provider, url));
    compat.reasoning_effort = flags
        .supports_reasoning_effort
        .unwrap_or(!grok && !zai && !moonshot && !gateway);
    compat
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream_models::get_model;
    use alloc::string::ToString;

    #[test]
    fn each_api_gets_its_protocol_and_the_model_s_facts() {
        let groq = get_model("groq", "llama-3.3-70b-versatile").unwrap();
        let CatalogueConfig::OpenAi(config) = config_from_catalogue(groq, None).unwrap() else {
            panic!("chat completions")
        };
        assert_eq!(config.provider, "groq");
        assert!(config.protocol.compat.max_completion_tokens);
        assert_eq!(config.pricing.unwrap().input, groq.cost.input);
        let gpt5 = get_model("openai", "gpt-5").unwrap();
        assert!(matches!(
            config_from_catalogue(gpt5, None),
            Ok(CatalogueConfig::Responses(_))
        ));
        let gemini = get_model("google", "gemini-2.5-flash").unwrap();
        assert!(matches!(
            config_from_catalogue(gemini, None),
            Ok(CatalogueConfig::Gemini(_))
        ));
        let deepseek = get_model("deepseek", "deepseek-v4-flash").unwrap();
        assert_eq!(compat(deepseek).thinking_format, ThinkingFormat::DeepSeek);
        let vertex = agentstream_models::all_models()
            .find(|m| m.api == "google-vertex")
            .unwrap();
        let err = config_from_catalogue(vertex, None).unwrap_err();
        assert!(err.to_string().contains("google-vertex"), "{err}");
    }

    #[test]
    fn azure_mistral_and_bedrock_models_are_configured_too() {
        let mistral = agentstream_models::all_models()
            .find(|m| m.api == "mistral-conversations")
            .unwrap();
        let Ok(CatalogueConfig::Mistral(config)) = config_from_catalogue(mistral, Some("k")) else {
            panic!("mistral")
        };
        assert_eq!(
            config.endpoint_url(),
            "https://api.mistral.ai/v1/chat/completions"
        );
        assert_eq!(config.provider, mistral.provider);
        assert_eq!(config.model, mistral.id);

        let azure = agentstream_models::all_models()
            .find(|m| m.api == "azure-openai-responses")
            .unwrap();
        let config = config_from_catalogue(azure, Some("k"))
            .unwrap()
            .with_base_url("https://r.openai.azure.com/openai/v1");
        let CatalogueConfig::Azure(config) = config else {
            panic!("azure")
        };
        assert!(
            config
                .endpoint_url()
                .starts_with("https://r.openai.azure.com/openai/v1/responses"),
            "{}",
            config.endpoint_url()
        );

        let frankfurt = agentstream_models::all_models()
            .find(|m| m.api == "bedrock-converse-stream" && m.base_url.contains("eu-central-1"))
            .unwrap();
        let Ok(CatalogueConfig::Bedrock(config)) = config_from_catalogue(frankfurt, None) else {
            panic!("bedrock")
        };
        assert_eq!(config.protocol.region, "eu-central-1");
        assert!(
            config
                .endpoint_url()
                .starts_with("https://bedrock-runtime.eu-central-1.amazonaws.com/model/"),
            "{}",
            config.endpoint_url()
        );
    }
}
