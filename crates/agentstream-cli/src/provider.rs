//! The providers `chat` and `agent` call and `decode` reads: `--api`, and
//! the model it builds on the tokio host, every protocol through the wire
//! crate's one [`EndpointConfig`] path.

use std::time::Duration;

use agentstream::message::Context;
use agentstream::model::{CacheRetention, Model, StreamOptions, ThinkingLevel};
use agentstream_models::Model as CatalogueModel;
use agentstream_tokio::{ClientError, EndpointModel};
use agentstream_wire::azure::AzureOpenAiResponses;
use agentstream_wire::bedrock::auth::AuthError;
use agentstream_wire::bedrock::{Bedrock, BedrockConfig, DEFAULT_REGION};
use agentstream_wire::catalogue::{self, CatalogueConfig};
use agentstream_wire::config::{EndpointConfig, Protocol};
use agentstream_wire::endpoint::{Endpoint, PreparedRequest};
use agentstream_wire::env;
use agentstream_wire::recording::{BodySink, RecordingEndpoint};
pub use agentstream_wire::Api;
use agentstream_wire::ProtocolVisitor;

/// The protocols `--api` takes, by their short names (`openai`,
/// `anthropic`, `responses`, `google`; listed in `--help`).
pub fn api_parser() -> ApiParser {
    ApiParser
}

/// `--api`'s parser: the wire crate's [`Api`] names.
#[derive(Clone, Copy, Debug)]
pub struct ApiParser;

impl clap::builder::TypedValueParser for ApiParser {
    type Value = Api;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Api, clap::Error> {
        let names = clap::builder::PossibleValuesParser::new(Api::ALL.map(Api::name));
        let name = names.parse_ref(cmd, arg, value)?;
        // The names parser accepts only the names `from_name` knows.
        Api::from_name(&name).ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            Api::ALL
                .into_iter()
                .map(|api| clap::builder::PossibleValue::new(api.name())),
        ))
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
    /// `--cache-retention`.
    pub cache_retention: Option<CacheRetention>,
    /// `--session-id`.
    pub session_id: Option<String>,
    /// `--thinking`.
    pub thinking: Option<ThinkingLevel>,
}

/// Where the calls go: a protocol given with `--api` (and `--base-url`),
/// or a model of pi-ai's catalogue, which names both.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// `--api`.
    Api(Api),
    /// `--model PROVIDER/ID` found in the catalogue.
    Catalogue(&'static CatalogueModel),
}

/// The model of `target` for `settings`, or the message of a usage error.
pub fn model(
    target: impl Into<Target>,
    settings: Settings,
) -> Result<Box<dyn Model + Send + Sync>, String> {
    let target = target.into();
    let base_url = base_url(target, settings.base_url.clone())?;
    let model = settings.model.clone();
    visit(target, base_url, model, Build { settings })?
        .map_err(|e| agentstream_wire::http::error_report(&e))
}

/// The request a call with `context` and `options` would send, without
/// sending it (`chat --dry-run`).
pub fn prepare(
    target: Target,
    settings: Settings,
    context: &Context,
    options: &StreamOptions,
) -> Result<PreparedRequest, String> {
    let base_url = base_url(target, settings.base_url.clone())?;
    let model = settings.model.clone();
    let prepare = Prepare {
        settings,
        context,
        options,
    };
    visit(target, base_url, model, prepare)?
}

impl From<Api> for Target {
    fn from(api: Api) -> Self {
        Self::Api(api)
    }
}

/// The base URL of `target`: `given` (`--base-url`), else Azure's from
/// the environment, else the api's default or the catalogue model's.
fn base_url(target: Target, given: Option<String>) -> Result<String, String> {
    let azure = match target {
        Target::Api(api) => api == Api::Azure,
        Target::Catalogue(m) => m.api == Api::Azure.pi_api(),
    };
    let bedrock = match target {
        Target::Api(api) => api == Api::Bedrock,
        Target::Catalogue(m) => m.api == Api::Bedrock.pi_api(),
    };
    let base_url = given
        .or_else(|| azure.then(azure_base_url).flatten())
        .or_else(|| bedrock.then(bedrock_base_url));
    match target {
        Target::Api(api) => base_url
            .or_else(|| api.default_base_url().map(Into::into))
            .ok_or_else(|| format!("--base-url is required with --api {api}")),
        Target::Catalogue(m) => {
            let base_url = base_url.unwrap_or_else(|| m.base_url.to_owned());
            if base_url.is_empty() {
                return Err(format!(
                    "{}/{}: no base URL; give --base-url{}",
                    m.provider,
                    m.id,
                    if azure {
                        ", AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"
                    } else {
                        ""
                    }
                ));
            }
            Ok(base_url)
        }
    }
}

/// Bedrock's protocol with the credentials and region pi-ai 0.73.1 reads
/// from the environment (`AWS_BEDROCK_SKIP_AUTH`, then
/// `AWS_BEARER_TOKEN_BEDROCK`, then `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` with `AWS_SESSION_TOKEN`; the region from
/// `AWS_REGION` or `AWS_DEFAULT_REGION`): requests are signed with SigV4
/// when keys are there, carry the Bedrock API key as a bearer token when
/// that is there, and go unsigned when there is nothing (a local server,
/// a proxy that signs). A profile (`AWS_PROFILE`) is refused: this tool
/// does not read AWS's shared files.
fn bedrock_protocol() -> Result<Bedrock, String> {
    match BedrockConfig::from_lookup("", |name| std::env::var(name).ok()) {
        Ok(config) => Ok(config.protocol),
        Err(AuthError::NoCredentials) => Ok(Bedrock::default()),
        Err(error) => Err(error.to_string()),
    }
}

/// Bedrock's runtime endpoint in the region pi-ai resolves from the
/// environment (`AWS_REGION`, `AWS_DEFAULT_REGION`, else `us-east-1`).
fn bedrock_base_url() -> String {
    use agentstream_wire::bedrock::auth;
    let env = |name: &str| std::env::var(name).ok();
    let resolution = auth::resolve_region(&auth::AuthOptions::default(), "", env);
    let region = resolution.region.as_deref().unwrap_or(DEFAULT_REGION);
    auth::regional_endpoint(region)
}

/// Azure's base URL from pi-ai's environment (see
/// [`env::azure_base_url`]).
fn azure_base_url() -> Option<String> {
    env::azure_base_url(&|name| std::env::var(name).ok())
}

/// Azure's protocol for `model_id` from pi-ai's environment (see
/// [`env::azure_protocol`]).
fn azure_protocol(model_id: &str) -> AzureOpenAiResponses {
    env::azure_protocol(model_id, &|name| std::env::var(name).ok())
}

/// What is done with the endpoint configuration of a target: a model is
/// built ([`Build`]) or a request prepared ([`Prepare`]).
trait ConfigVisitor {
    type Output;
    fn visit<P: Protocol + Send + Sync + 'static>(self, config: EndpointConfig<P>) -> Self::Output;
}

/// A protocol of `--api` as a configuration at `base_url` for `model`.
struct FromProtocol<V> {
    base_url: String,
    model: String,
    visitor: V,
}

impl<V: ConfigVisitor> ProtocolVisitor for FromProtocol<V> {
    type Output = V::Output;

    fn visit<P: Protocol + Send + Sync + 'static>(self, protocol: P) -> V::Output {
        let config = EndpointConfig::with_protocol(self.base_url, self.model, protocol);
        self.visitor.visit(config)
    }
}

/// Runs `visitor` with the configuration of `target` at `base_url`:
/// `--api`'s protocol, or the catalogue model as the wire crate's
/// catalogue configures it (its api's protocol, Chat Completions with its
/// compat flags, its headers, provider, reasoning facts and pi-ai's
/// default output limit), with Azure's deployment map and api version
/// and Bedrock's credentials and region read from the environment.
/// `model` is `--model`, for an `--api` target.
fn visit<V: ConfigVisitor>(
    target: Target,
    base_url: String,
    model: String,
    visitor: V,
) -> Result<V::Output, String> {
    let m = match target {
        Target::Api(api) => {
            let from = FromProtocol {
                base_url,
                model,
                visitor,
            };
            return Ok(match api {
                Api::Azure => ProtocolVisitor::visit(from, azure_protocol("")),
                Api::Bedrock => ProtocolVisitor::visit(from, bedrock_protocol()?),
                api => api.visit(from),
            });
        }
        Target::Catalogue(m) => m,
    };
    let config = catalogue::config_from_catalogue(m, None)
        .map_err(|e| e.to_string())?
        .with_base_url(base_url);
    Ok(match config {
        CatalogueConfig::OpenAi(c) => visitor.visit(c),
        CatalogueConfig::Anthropic(c) => visitor.visit(c),
        CatalogueConfig::Responses(c) => visitor.visit(c),
        CatalogueConfig::Gemini(c) => visitor.visit(c),
        CatalogueConfig::Mistral(c) => visitor.visit(c),
        // The deployment map, api version and credentials of the
        // environment, as pi-ai reads them.
        CatalogueConfig::Azure(mut c) => {
            c.protocol = azure_protocol(m.id);
            visitor.visit(c)
        }
        CatalogueConfig::Bedrock(mut c) => {
            c.protocol = bedrock_protocol()?;
            visitor.visit(c)
        }
        other => return Err(format!("{other:?}: not a protocol this tool speaks")),
    })
}

/// Builds the model of a configuration.
struct Build {
    settings: Settings,
}

impl ConfigVisitor for Build {
    type Output = Result<Box<dyn Model + Send + Sync>, ClientError>;

    fn visit<P: Protocol + Send + Sync + 'static>(self, config: EndpointConfig<P>) -> Self::Output {
        let (config, raw) = configure(config, self.settings).map_err(ClientError::new)?;
        Ok(match raw {
            Some(sink) => Box::new(EndpointModel::new(RecordingEndpoint::new(config, sink))?),
            None => Box::new(EndpointModel::new(config)?),
        })
    }
}

/// The request of one call, prepared but not sent.
struct Prepare<'a> {
    settings: Settings,
    context: &'a Context,
    options: &'a StreamOptions,
}

impl ConfigVisitor for Prepare<'_> {
    type Output = Result<PreparedRequest, String>;

    fn visit<P: Protocol + Send + Sync + 'static>(self, config: EndpointConfig<P>) -> Self::Output {
        let (config, _) = configure(config, self.settings)?;
        let mut request = config
            .prepare_call(self.context, self.options)
            .map_err(|e| e.to_string())?;
        // Signed as the call would be, at this moment (Bedrock's SigV4).
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        Endpoint::sign(&config, &mut request, now_ms).map_err(|e| e.to_string())?;
        Ok(request)
    }
}

/// `config` with the settings laid over it, and the `--record-raw` sink.
fn configure<P: Protocol>(
    mut config: EndpointConfig<P>,
    settings: Settings,
) -> Result<(EndpointConfig<P>, Option<BodySink>), String> {
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
        config.defaults.max_tokens = Some(max);
    }
    config.defaults.cache_retention = settings.cache_retention;
    config.defaults.session_id = settings.session_id;
    config.defaults.thinking = settings.thinking;
    Ok((config, settings.raw))
}
