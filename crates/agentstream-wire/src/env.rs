//! Provider configurations from an environment, as pi-ai 0.73.1 reads
//! its `env-api-keys` and its providers' variables: [`FromLookup`], a pure
//! function over a `Fn(&str) -> Option<String>` lookup (this crate is
//! `no_std` and reads no environment), and, with the `std` feature,
//! `EndpointModel::from_env`, the hosts' env-reading constructor
//! (`agentstream_tokio::BedrockModel::from_env("amazon.nova-lite-v1:0")`).
//!
//! | Provider | Variables |
//! |---|---|
//! | Bedrock ([`BedrockConfig`]) | `AWS_BEARER_TOKEN_BEDROCK`, else `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), `AWS_BEDROCK_SKIP_AUTH`; `AWS_REGION`, `AWS_DEFAULT_REGION` (see [`BedrockConfig::from_lookup`]) |
//! | Azure OpenAI Responses ([`AzureConfig`]) | `AZURE_OPENAI_API_KEY`; `AZURE_OPENAI_BASE_URL`, else `AZURE_OPENAI_RESOURCE_NAME`; `AZURE_OPENAI_API_VERSION`; `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` |
//! | Mistral ([`MistralConfig`]) | `MISTRAL_API_KEY` (at [`MISTRAL_BASE_URL`]) |
//!
//! An empty variable counts as unset, as in pi-ai.

use alloc::string::String;
use core::fmt;

use crate::azure::{deployment_name, resource_base_url, AzureConfig, AzureOpenAiResponses};
use crate::bedrock::auth::AuthError;
use crate::bedrock::BedrockConfig;
use crate::host::ClientError;
use crate::mistral::{MistralConfig, MISTRAL_BASE_URL};

/// A provider configuration built from an environment.
pub trait FromLookup: Sized {
    /// The configuration of `model` from the variables `lookup` returns
    /// (the process environment, in a host).
    ///
    /// # Errors
    /// An [`EnvError`] naming what is missing.
    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError>;
}

/// Why a configuration could not be built from the environment.
#[derive(Debug)]
#[non_exhaustive]
pub enum EnvError {
    /// A required variable is unset or empty (what to set).
    Missing(&'static str),
    /// Bedrock's credentials could not be resolved.
    Auth(AuthError),
    /// The host's client could not be built.
    Client(ClientError),
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(what) => write!(f, "{what} is not set"),
            Self::Auth(error) => fmt::Display::fmt(error, f),
            Self::Client(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for EnvError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Missing(_) => None,
            Self::Auth(error) => Some(error),
            Self::Client(error) => Some(error),
        }
    }
}

impl From<AuthError> for EnvError {
    fn from(error: AuthError) -> Self {
        Self::Auth(error)
    }
}

/// `name`'s value when set and not empty.
fn non_empty(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|value| !value.is_empty())
}

impl FromLookup for BedrockConfig {
    /// See [`BedrockConfig::from_lookup`].
    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        Ok(BedrockConfig::from_lookup(model, lookup)?)
    }
}

impl FromLookup for AzureConfig {
    /// pi-ai's `azure-openai-responses`: the key `AZURE_OPENAI_API_KEY`;
    /// the base URL `AZURE_OPENAI_BASE_URL` (trimmed), else the resource
    /// `AZURE_OPENAI_RESOURCE_NAME`'s; the `api-version`
    /// `AZURE_OPENAI_API_VERSION`; the deployment of `model` in
    /// `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (else the model id).
    ///
    /// ```
    /// use agentstream_wire::azure::AzureConfig;
    /// use agentstream_wire::env::FromLookup;
    ///
    /// let env = |name: &str| match name {
    ///     "AZURE_OPENAI_API_KEY" => Some("k".to_string()),
    ///     "AZURE_OPENAI_RESOURCE_NAME" => Some("acme".to_string()),
    ///     "AZURE_OPENAI_DEPLOYMENT_NAME_MAP" => Some("gpt-5=prod".to_string()),
    ///     _ => None,
    /// };
    /// let config = AzureConfig::from_lookup("gpt-5", env).unwrap();
    /// assert_eq!(config.endpoint_url(), "https://acme.openai.azure.com/openai/v1/responses?api-version=v1");
    /// assert_eq!(config.protocol.deployment.as_deref(), Some("prod"));
    /// ```
    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let key = non_empty(&lookup, "AZURE_OPENAI_API_KEY")
            .ok_or(EnvError::Missing("AZURE_OPENAI_API_KEY"))?;
        let base_url = azure_base_url(&lookup).ok_or(EnvError::Missing(
            "AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME",
        ))?;
        let mut config = AzureConfig::new(base_url, model).with_api_key(key);
        config.protocol = azure_protocol(model, &lookup);
        Ok(config)
    }
}

/// Azure's base URL from the environment, as pi-ai reads it:
/// `AZURE_OPENAI_BASE_URL` trimmed, else the base URL of the resource
/// `AZURE_OPENAI_RESOURCE_NAME` (taken as it is, as pi-ai takes it);
/// `None` when neither is set. [`AzureConfig::from_lookup`] reads it so,
/// and so may a tool that takes its base URL from elsewhere first.
///
/// ```
/// use agentstream_wire::env::azure_base_url;
///
/// let env = |name: &str| (name == "AZURE_OPENAI_RESOURCE_NAME").then(|| "acme".to_string());
/// assert_eq!(azure_base_url(&env).as_deref(), Some("https://acme.openai.azure.com/openai/v1"));
/// assert_eq!(azure_base_url(&|_: &str| Some(" https://proxy/v1 ".to_string())).as_deref(), Some("https://proxy/v1"));
/// assert_eq!(azure_base_url(&|_: &str| None), None);
/// ```
pub fn azure_base_url(lookup: &impl Fn(&str) -> Option<String>) -> Option<String> {
    non_empty(lookup, "AZURE_OPENAI_BASE_URL")
        .map(|url| String::from(url.trim()))
        .filter(|url| !url.is_empty())
        .or_else(|| {
            non_empty(lookup, "AZURE_OPENAI_RESOURCE_NAME").map(|name| resource_base_url(&name))
        })
}

/// Azure's protocol for `model` from the environment, as pi-ai reads it:
/// the deployment of `model` in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (else
/// none: the model id is sent), the `api-version`
/// `AZURE_OPENAI_API_VERSION` (else the protocol's default).
///
/// ```
/// use agentstream_wire::env::azure_protocol;
///
/// let env = |name: &str| match name {
///     "AZURE_OPENAI_DEPLOYMENT_NAME_MAP" => Some("gpt-5=prod".to_string()),
///     "AZURE_OPENAI_API_VERSION" => Some("2025-04-01-preview".to_string()),
///     _ => None,
/// };
/// let protocol = azure_protocol("gpt-5", &env);
/// assert_eq!(protocol.deployment.as_deref(), Some("prod"));
/// assert_eq!(protocol.api_version.as_deref(), Some("2025-04-01-preview"));
/// assert_eq!(azure_protocol("o3", &env).deployment, None);
/// ```
pub fn azure_protocol(
    model: &str,
    lookup: &impl Fn(&str) -> Option<String>,
) -> AzureOpenAiResponses {
    let map = non_empty(lookup, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP").unwrap_or_default();
    AzureOpenAiResponses {
        deployment: deployment_name(&map, model).map(String::from),
        api_version: non_empty(lookup, "AZURE_OPENAI_API_VERSION"),
        ..AzureOpenAiResponses::default()
    }
}

impl FromLookup for MistralConfig {
    /// pi-ai's `mistral`: the key `MISTRAL_API_KEY`, at
    /// [`MISTRAL_BASE_URL`].
    ///
    /// ```
    /// use agentstream_wire::env::{EnvError, FromLookup};
    /// use agentstream_wire::mistral::MistralConfig;
    ///
    /// let config = MistralConfig::from_lookup("mistral-large-latest", |_| Some("k".into())).unwrap();
    /// assert_eq!(config.endpoint_url(), "https://api.mistral.ai/v1/chat/completions");
    /// let missing = MistralConfig::from_lookup("mistral-large-latest", |_| None).unwrap_err();
    /// assert_eq!(missing.to_string(), "MISTRAL_API_KEY is not set");
    /// ```
    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let key =
            non_empty(&lookup, "MISTRAL_API_KEY").ok_or(EnvError::Missing("MISTRAL_API_KEY"))?;
        Ok(MistralConfig::new(MISTRAL_BASE_URL, model).with_api_key(key))
    }
}

#[cfg(feature = "std")]
mod from_env {
    extern crate std;

    use super::{EnvError, FromLookup};
    use crate::endpoint::Endpoint;
    use crate::host::Host;
    use crate::model::EndpointModel;

    impl<C: FromLookup + Endpoint, H: Host> EndpointModel<C, H> {
        /// A model of `model` configured from the process environment
        /// (see [`FromLookup`] and the [module](super)), with the host's
        /// own client.
        ///
        /// # Errors
        /// An [`EnvError`] naming the variable to set, or the client's.
        pub fn from_env(model: &str) -> Result<Self, EnvError> {
            let config = C::from_lookup(model, |name| std::env::var(name).ok())?;
            Self::new(config).map_err(EnvError::Client)
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn azure_reads_pi_ais_variables_in_its_order() {
        let config = AzureConfig::from_lookup(
            "gpt-5",
            env(&[
                ("AZURE_OPENAI_API_KEY", "k"),
                (
                    "AZURE_OPENAI_BASE_URL",
                    "  https://proxy.example/openai/v1 ",
                ),
                ("AZURE_OPENAI_RESOURCE_NAME", "ignored"),
                ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
            ]),
        )
        .unwrap();
        assert_eq!(
            config.endpoint_url(),
            "https://proxy.example/openai/v1/responses?api-version=2025-04-01-preview"
        );
        assert_eq!(config.api_key.as_deref(), Some("k"));
        assert_eq!(config.protocol.deployment, None);

        let no_key = AzureConfig::from_lookup("gpt-5", env(&[("AZURE_OPENAI_RESOURCE_NAME", "a")]));
        assert_eq!(
            no_key.unwrap_err().to_string(),
            "AZURE_OPENAI_API_KEY is not set"
        );
        let no_base = AzureConfig::from_lookup(
            "gpt-5",
            env(&[
                ("AZURE_OPENAI_API_KEY", "k"),
                ("AZURE_OPENAI_BASE_URL", " "),
            ]),
        );
        assert_eq!(
            no_base.unwrap_err().to_string(),
            "AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME is not set"
        );
    }

    #[test]
    fn bedrock_signs_with_keys_and_prefers_a_bearer_token() {
        let keys = [
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("AWS_SESSION_TOKEN", "token"),
            ("AWS_DEFAULT_REGION", "ap-south-1"),
        ];
        let config = <BedrockConfig as FromLookup>::from_lookup("m", env(&keys)).unwrap();
        assert_eq!(config.protocol.region, "ap-south-1");
        assert_eq!(
            config.base_url,
            "https://bedrock-runtime.ap-south-1.amazonaws.com"
        );
        let credentials = config.protocol.credentials.unwrap();
        assert_eq!(credentials.session_token.as_deref(), Some("token"));
        assert_eq!(config.api_key, None);

        let mut with_bearer = keys.to_vec();
        with_bearer.push(("AWS_BEARER_TOKEN_BEDROCK", "abk"));
        let config = <BedrockConfig as FromLookup>::from_lookup("m", env(&with_bearer)).unwrap();
        assert_eq!(config.api_key.as_deref(), Some("abk"));
        assert_eq!(config.protocol.credentials, None);
        assert_eq!(config.protocol.region, "ap-south-1");

        let skip =
            <BedrockConfig as FromLookup>::from_lookup("m", env(&[("AWS_BEDROCK_SKIP_AUTH", "1")]))
                .unwrap();
        let dummy = skip.protocol.credentials.unwrap();
        assert_eq!(dummy.access_key_id, "dummy-access-key");

        let none = <BedrockConfig as FromLookup>::from_lookup("m", env(&[])).unwrap_err();
        assert!(
            matches!(none, EnvError::Auth(AuthError::NoCredentials)),
            "{none}"
        );
    }
}
