//! [`BedrockConfig`]: the [`EndpointConfig`] of an Amazon Bedrock
//! `ConverseStream` endpoint, and [`Bedrock`], what the protocol adds.
//!
//! The URL names the model: `{base}/model/{modelId}/converse-stream`, the
//! id one percent-encoded path segment (an inference-profile ARN keeps
//! its `:` and `/` encoded). The default base is the region's
//! `https://bedrock-runtime.{region}.amazonaws.com`; pi-ai takes the
//! region from its options, then `AWS_REGION`, then `AWS_DEFAULT_REGION`,
//! then the region of a standard Bedrock base URL, then `us-east-1`
//! ([`auth::resolve_region`] is that order, over an environment the
//! caller reads, as this crate is `no_std`; [`auth::regional_endpoint`]
//! is a region's base URL).
//!
//! Auth, in pi-ai's order: a configured key (a Bedrock API key, pi-ai's
//! `AWS_BEARER_TOKEN_BEDROCK`) is sent as `Authorization: Bearer <key>`
//! ([`auth_headers`]); else, with [credentials](BedrockConfig::with_credentials),
//! the finished request is signed with SigV4 (service `bedrock`, the
//! [region](Bedrock::region), the host's clock) by
//! [`Protocol::sign`]; else nothing is sent. [`BedrockConfig::from_lookup`]
//! resolves all of it from an environment as pi-ai does.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::auth::sigv4::{sign, Credentials, SignableRequest, SigningError, SigningParams};
use super::auth::{self, split_url, AuthError, AuthOptions, BedrockAuth, SIGNING_NAME};
use super::projector::BedrockProjector;
use super::request::build_request;
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::endpoint::{api_url_at, push_path_segment, PreparedRequest};
use crate::request::RequestError;

/// The region pi-ai falls back to.
pub const DEFAULT_REGION: &str = "us-east-1";

/// The credential headers of a call: `Authorization: Bearer <key>` when
/// a key (a Bedrock API key) is configured, none otherwise (a request
/// with credentials and no key is signed once complete, see
/// [`Bedrock`]'s [`Protocol::sign`]).
pub fn auth_headers(api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
    if let Some(key) = api_key {
        headers.push(("authorization", format!("Bearer {key}")));
    }
}

/// A Bedrock `ConverseStream` endpoint: its [`EndpointConfig`] over
/// [`Bedrock`].
pub type BedrockConfig = EndpointConfig<Bedrock>;

/// What the `ConverseStream` protocol adds to an [`EndpointConfig`]: the
/// SigV4 signing region and the credentials it signs with.
///
/// `Debug` shows the access key id only (see [`Credentials`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bedrock {
    /// The region the signature is scoped to ([`DEFAULT_REGION`] unless
    /// set; [`BedrockConfig::new`] sets the region of its URL).
    pub region: String,
    /// The static credentials requests are signed with when no key is
    /// configured; `None`: requests are not signed.
    pub credentials: Option<Credentials>,
}

impl Default for Bedrock {
    fn default() -> Self {
        Self {
            region: String::from(DEFAULT_REGION),
            credentials: None,
        }
    }
}

impl BedrockConfig {
    /// `model` in `region` (see [`auth::resolve_region`]), provider
    /// `amazon-bedrock`, no key, no credentials.
    pub fn new(model: impl Into<String>, region: &str) -> Self {
        let protocol = Bedrock {
            region: String::from(region),
            credentials: None,
        };
        Self::with_protocol(auth::regional_endpoint(region), model, protocol)
    }

    /// Signs every request with SigV4 and `credentials` (static keys and,
    /// for temporary credentials, the session token, sent as
    /// `x-amz-security-token`). A configured key
    /// ([`with_api_key`](Self::with_api_key)) still wins, as pi-ai's
    /// bearer token does.
    ///
    /// ```
    /// use agentstream::message::{user, Context};
    /// use agentstream_wire::bedrock::auth::sigv4::Credentials;
    /// use agentstream_wire::bedrock::BedrockConfig;
    /// use agentstream_wire::endpoint::Endpoint;
    ///
    /// let credentials = Credentials {
    ///     access_key_id: "AKIDEXAMPLE".into(),
    ///     secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
    ///     session_token: None,
    /// };
    /// let config = BedrockConfig::new("amazon.nova-lite-v1:0", "eu-west-1").with_credentials(credentials);
    /// let mut request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
    /// config.sign(&mut request, 1_700_000_000_000).unwrap();
    /// assert_eq!(request.header("x-amz-date"), Some("20231114T221320Z"));
    /// let authorization = request.header("authorization").unwrap();
    /// assert!(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/eu-west-1/bedrock/aws4_request"));
    /// ```
    pub fn with_credentials(mut self, credentials: Credentials) -> Self {
        self.protocol.credentials = Some(credentials);
        self
    }

    /// Authenticates as `auth` says: a bearer token becomes the key,
    /// SigV4 credentials [sign](Self::with_credentials), and
    /// [`BedrockAuth::None`] clears both.
    pub fn with_auth(mut self, auth: BedrockAuth) -> Self {
        match auth {
            BedrockAuth::Bearer(token) => {
                self.api_key = Some(token);
                self.protocol.credentials = None;
            }
            BedrockAuth::SigV4(credentials) => {
                self.api_key = None;
                self.protocol.credentials = Some(credentials);
            }
            BedrockAuth::None => {
                self.api_key = None;
                self.protocol.credentials = None;
            }
        }
        self
    }

    /// Sets the region the signature is scoped to, leaving the base URL
    /// as it is (a proxy's or a VPC endpoint's).
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.protocol.region = region.into();
        self
    }

    /// `model` configured from an environment read through `lookup`, as
    /// pi-ai 0.73.1 configures it: the credentials of
    /// [`resolve_auth`](auth::resolve_auth) (`AWS_BEARER_TOKEN_BEDROCK`,
    /// then `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
    /// `AWS_SESSION_TOKEN`; `AWS_BEDROCK_SKIP_AUTH=1` signs with pi-ai's
    /// dummy keys) and the region of
    /// [`resolve_region`](auth::resolve_region) (`AWS_REGION`,
    /// `AWS_DEFAULT_REGION`, then [`DEFAULT_REGION`]), whose regional
    /// endpoint is the base URL. A host reads the process environment
    /// with it; this crate reads none.
    ///
    /// ```
    /// use agentstream_wire::bedrock::BedrockConfig;
    ///
    /// let env = |name: &str| match name {
    ///     "AWS_ACCESS_KEY_ID" => Some("AKID".to_string()),
    ///     "AWS_SECRET_ACCESS_KEY" => Some("secret".to_string()),
    ///     "AWS_REGION" => Some("eu-central-1".to_string()),
    ///     _ => None,
    /// };
    /// let config = BedrockConfig::from_lookup("amazon.nova-lite-v1:0", env).unwrap();
    /// assert_eq!(config.base_url, "https://bedrock-runtime.eu-central-1.amazonaws.com");
    /// assert_eq!(config.protocol.region, "eu-central-1");
    /// assert!(config.protocol.credentials.is_some() && config.api_key.is_none());
    /// ```
    ///
    /// # Errors
    /// An [`AuthError`] when the environment names no credentials this
    /// crate can use (none, or a profile).
    pub fn from_lookup(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, AuthError> {
        let options = AuthOptions::default();
        let auth = auth::resolve_auth(&options, &lookup)?;
        let resolution = auth::resolve_region(&options, "", &lookup);
        let region = resolution.region.as_deref().unwrap_or(DEFAULT_REGION);
        let base_url = auth::regional_endpoint(region);
        Ok(Self::new(model, region)
            .with_base_url(base_url)
            .with_auth(auth))
    }
}

/// The SigV4 headers of `request` signed with `credentials` in `region`
/// at `now_ms`: `x-amz-date`, `x-amz-security-token` with a session
/// token, `x-amz-content-sha256` (the AWS SDK for JavaScript that pi-ai
/// runs on sends it) and `authorization`, over every header the request
/// sends and the `host` its URL names.
fn sigv4_headers(
    credentials: &Credentials,
    region: &str,
    request: &PreparedRequest,
    now_ms: u64,
) -> Result<Vec<(&'static str, String)>, SigningError> {
    let parts = split_url(&request.url)?;
    let mut headers: Vec<(&str, &str)> = request.headers_in_order().collect();
    headers.push(("host", parts.host));
    let mut params = SigningParams::new(credentials, region, SIGNING_NAME, now_ms / 1000);
    params.settings.content_sha256_header = true;
    let signable = SignableRequest {
        method: request.method,
        path: parts.path,
        query: parts.query,
        headers: &headers,
        body: &request.body,
    };
    Ok(sign(&params, &signable)?.into_headers())
}

impl Protocol for Bedrock {
    type Projector = BedrockProjector;
    const PROVIDER: &'static str = "amazon-bedrock";
    const ENDPOINT: &'static str = "/converse-stream";
    const BASE_PATH: BasePath = BasePath::Root;

    fn endpoint_url(&self, base_url: &str, model: &str) -> String {
        let mut endpoint = String::from("/model/");
        push_path_segment(&mut endpoint, model);
        endpoint.push_str(Self::ENDPOINT);
        api_url_at(base_url, Self::BASE_PATH, "", &endpoint, "")
    }

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        auth_headers(api_key, headers);
    }

    /// SigV4 with the [credentials](Bedrock::credentials) when there are
    /// some and no key (a key is sent as a bearer token instead).
    fn sign(
        &self,
        api_key: Option<&str>,
        request: &mut PreparedRequest,
        now_ms: u64,
    ) -> Result<(), SigningError> {
        let Some(credentials) = self.credentials.as_ref().filter(|_| api_key.is_none()) else {
            return Ok(());
        };
        for (name, value) in sigv4_headers(credentials, &self.region, request, now_ms)? {
            request.set_header(name, value);
        }
        Ok(())
    }
}
