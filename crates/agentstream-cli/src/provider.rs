//! The providers `chat` and `agent` call and `decode` reads: `--api`, and
//! the model it builds on the tokio host, every protocol through the wire
//! crate's one [`EndpointConfig`] path.

use std::time::Duration;

use agentstream::model::Model;
use agentstream_tokio::{ClientError, EndpointModel};
use agentstream_wire::config::{EndpointConfig, Protocol};
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
}

/// The model of `api` for `settings`, or the message of a usage error.
pub fn model(api: Api, mut settings: Settings) -> Result<Box<dyn Model>, String> {
    let Some(base_url) = settings
        .base_url
        .take()
        .or_else(|| api.default_base_url().map(Into::into))
    else {
        return Err(format!("--base-url is required with --api {api}"));
    };
    api.visit(Build { base_url, settings })
        .map_err(|e| agentstream_wire::http::error_report(&e))
}

/// The model of a protocol at `base_url` for `settings`.
struct Build {
    base_url: String,
    settings: Settings,
}

impl ProtocolVisitor for Build {
    type Output = Result<Box<dyn Model>, ClientError>;

    fn visit<P: Protocol + Send + Sync + 'static>(self, protocol: P) -> Self::Output {
        let model = self.settings.model.clone();
        build(
            EndpointConfig::with_protocol(self.base_url, model, protocol),
            self.settings,
        )
    }
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
    Ok(match settings.raw {
        Some(sink) => Box::new(EndpointModel::new(RecordingEndpoint::new(config, sink))?),
        None => Box::new(EndpointModel::new(config)?),
    })
}
