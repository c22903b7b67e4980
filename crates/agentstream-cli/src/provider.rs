//! The providers `chat` and `agent` call and `decode` reads: `--api`, and
//! the model it builds on the tokio host, every protocol through the wire
//! crate's one [`EndpointConfig`] path.

use std::time::Duration;

use agentstream::model::Model;
use agentstream_tokio::{ClientError, EndpointModel};
use agentstream_wire::anthropic::{AnthropicConfig, ANTHROPIC_BASE_URL};
use agentstream_wire::config::{EndpointConfig, Protocol};
use agentstream_wire::google::GoogleConfig;
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::responses::ResponsesConfig;
use agentstream_wire::tap::{BodySink, TapEndpoint};

/// OpenAI's API root, the default base of `--api responses`.
const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The wire protocol of a recording or an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// OpenAI-compatible Chat Completions (`{URL}/chat/completions`).
    Openai,
    /// Anthropic Messages (`{URL}/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`{URL}/responses`).
    Responses,
    /// Google Gemini (`{URL}/models/{model}:streamGenerateContent?alt=sse`).
    Google,
}

impl Api {
    /// The environment variable holding the key unless one is named.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Self::Openai | Self::Responses => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::Google => "GEMINI_API_KEY",
        }
    }
}

/// What a call to an endpoint is given on the command line.
#[derive(Default)]
pub struct Settings {
    /// `--base-url`: required for `--api openai`; the others have a default.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: String,
    /// The API key read from the environment.
    pub key: Option<String>,
    /// The connect timeout.
    pub connect_timeout: Option<Duration>,
    /// The idle timeout.
    pub idle_timeout: Option<Duration>,
    /// The default output token limit.
    pub max_tokens: Option<u64>,
    /// With `--record-raw`: where the response body goes as it arrives.
    pub raw: Option<BodySink>,
}

/// The model of `api` for `settings`, or the message of a usage error.
pub fn model(api: Api, settings: Settings) -> Result<Box<dyn Model>, String> {
    let model = settings.model.as_str();
    let built = match api {
        Api::Openai => {
            let Some(base) = &settings.base_url else {
                return Err("--base-url is required with --api openai".into());
            };
            build(OpenAiConfig::new(base, model), settings)
        }
        Api::Anthropic => build(
            AnthropicConfig::new(model).with_base_url(ANTHROPIC_BASE_URL),
            settings,
        ),
        Api::Responses => build(ResponsesConfig::new(OPENAI_BASE_URL, model), settings),
        Api::Google => build(GoogleConfig::new(model), settings),
    };
    built.map_err(|e| agentstream_wire::http::error_report(&e))
}

/// `config` with the settings laid over it, as a model on reqwest
/// (tapped into the raw sink with `--record-raw`).
fn build<P>(
    mut config: EndpointConfig<P>,
    settings: Settings,
) -> Result<Box<dyn Model>, ClientError>
where
    P: Protocol + Send + Sync + 'static,
{
    if let Some(base) = settings.base_url {
        config = config.with_base_url(base);
    }
    if let Some(key) = settings.key {
        config = config.with_api_key(key);
    }
    if let Some(timeout) = settings.connect_timeout {
        config = config.with_connect_timeout(timeout);
    }
    if let Some(timeout) = settings.idle_timeout {
        config = config.with_idle_timeout(timeout);
    }
    if let Some(max) = settings.max_tokens {
        config = config.with_max_tokens(max);
    }
    Ok(match settings.raw {
        Some(sink) => Box::new(EndpointModel::new(TapEndpoint::new(config, sink))?),
        None => Box::new(EndpointModel::new(config)?),
    })
}
