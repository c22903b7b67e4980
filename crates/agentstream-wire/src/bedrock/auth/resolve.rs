//! Credential and region resolution from the environment, in pi-ai
//! 0.73.1's order (its `amazon-bedrock` provider and the AWS SDK defaults
//! it relies on), as pure functions over a lookup.

use alloc::format;
use alloc::string::String;
use core::fmt;

use super::sigv4::Credentials;
use super::BedrockAuth;

/// The region when nothing names one (pi-ai's fallback).
pub const DEFAULT_REGION: &str = "us-east-1";

/// The access key id pi-ai signs with under `AWS_BEDROCK_SKIP_AUTH=1`.
pub const SKIP_AUTH_ACCESS_KEY_ID: &str = "dummy-access-key";

/// The secret key pi-ai signs with under `AWS_BEDROCK_SKIP_AUTH=1`.
pub const SKIP_AUTH_SECRET_ACCESS_KEY: &str = "dummy-secret-key";

/// What the call itself says (pi-ai's `BedrockOptions`), before the
/// environment.
#[derive(Clone, Copy, Default)]
pub struct AuthOptions<'a> {
    /// The call's region (pi-ai's `region` option).
    pub region: Option<&'a str>,
    /// The call's profile (pi-ai's `profile` option): not supported, see
    /// [`AuthError::ProfileUnsupported`].
    pub profile: Option<&'a str>,
    /// The call's Bedrock API key (pi-ai's `bearerToken` option).
    pub bearer_token: Option<&'a str>,
}

impl fmt::Debug for AuthOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthOptions")
            .field("region", &self.region)
            .field("profile", &self.profile)
            .field(
                "bearer_token",
                &self.bearer_token.map(|_| crate::options::Redacted),
            )
            .finish()
    }
}

/// Why no credentials were resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// A profile is named (`AWS_PROFILE` or the call's profile): the AWS
    /// SDK would read `~/.aws/config`, which this crate does not (the
    /// profile's name).
    ProfileUnsupported(String),
    /// Neither a bearer token nor `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY`: the AWS SDK would go on to SSO, web
    /// identity, container and instance credentials, which this crate
    /// does not.
    NoCredentials,
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ProfileUnsupported(profile) => write!(
                f,
                "Bedrock: AWS profile {profile:?} is set, and profiles are not supported; \
                 set AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
                 (and AWS_SESSION_TOKEN) without AWS_PROFILE"
            ),
            Self::NoCredentials => f.write_str(
                "Bedrock: no credentials; set AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); profiles, SSO, container and \
                 instance credentials are not supported",
            ),
        }
    }
}

impl core::error::Error for AuthError {}

/// `name`'s value when set and not empty (JavaScript's truthiness, as
/// pi-ai and the AWS SDK test it).
fn non_empty(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|value| !value.is_empty())
}

/// The credentials pi-ai 0.73.1 would use, from the call's options and
/// `lookup` (an environment):
///
/// 1. A bearer token (the call's, else `AWS_BEARER_TOKEN_BEDROCK`),
///    unless `AWS_BEDROCK_SKIP_AUTH` is `1`.
/// 2. Under `AWS_BEDROCK_SKIP_AUTH=1`: `AWS_BEARER_TOKEN_BEDROCK` still
///    wins if set (the AWS SDK prefers bearer auth whenever that variable
///    is set), else SigV4 with pi-ai's dummy keys.
/// 3. A profile (the call's or `AWS_PROFILE`): the SDK skips the
///    environment keys and reads the profile: [`AuthError::ProfileUnsupported`].
/// 4. `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, with
///    `AWS_SESSION_TOKEN` when set: SigV4.
/// 5. Otherwise [`AuthError::NoCredentials`].
///
/// An empty variable counts as unset.
///
/// # Errors
/// [`AuthError`] where the AWS SDK would go on to sources this crate
/// does not read.
pub fn resolve_auth(
    options: &AuthOptions<'_>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<BedrockAuth, AuthError> {
    let skip_auth = lookup("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1");
    let env_bearer = non_empty(&lookup, "AWS_BEARER_TOKEN_BEDROCK");
    if skip_auth {
        return Ok(match env_bearer {
            Some(token) => BedrockAuth::Bearer(token),
            None => BedrockAuth::SigV4(Credentials {
                access_key_id: String::from(SKIP_AUTH_ACCESS_KEY_ID),
                secret_access_key: String::from(SKIP_AUTH_SECRET_ACCESS_KEY),
                session_token: None,
            }),
        });
    }
    let option_bearer = options
        .bearer_token
        .filter(|token| !token.is_empty())
        .map(String::from);
    if let Some(token) = option_bearer.or(env_bearer) {
        return Ok(BedrockAuth::Bearer(token));
    }
    let profile = options
        .profile
        .filter(|profile| !profile.is_empty())
        .map(String::from)
        .or_else(|| non_empty(&lookup, "AWS_PROFILE"));
    if let Some(profile) = profile {
        return Err(AuthError::ProfileUnsupported(profile));
    }
    match (
        non_empty(&lookup, "AWS_ACCESS_KEY_ID"),
        non_empty(&lookup, "AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(access_key_id), Some(secret_access_key)) => Ok(BedrockAuth::SigV4(Credentials {
            access_key_id,
            secret_access_key,
            session_token: non_empty(&lookup, "AWS_SESSION_TOKEN"),
        })),
        _ => Err(AuthError::NoCredentials),
    }
}

/// Where a Bedrock request goes and which region signs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionResolution {
    /// The signing region; `None` when `AWS_PROFILE` is set and nothing
    /// else names a region (the AWS SDK would read the profile's region,
    /// which this crate does not).
    pub region: Option<String>,
    /// Whether the model's base URL is the endpoint. When `false`, the
    /// endpoint is the region's ([`regional_endpoint`]): pi-ai leaves a
    /// standard `bedrock-runtime.<region>.amazonaws.com` base URL to the
    /// SDK once a region or profile is configured.
    pub use_base_url: bool,
}

/// The region of a standard Bedrock Runtime endpoint
/// (`bedrock-runtime[-fips].<region>.amazonaws.com[.cn]`), if `base_url`
/// is one.
fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let (_, rest) = base_url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    let host = host
        .strip_suffix(".amazonaws.com")
        .or_else(|| host.strip_suffix(".amazonaws.com.cn"))?;
    let region = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let valid = !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then(|| String::from(region))
}

/// The signing region and endpoint choice, as pi-ai 0.73.1 makes them
/// under Node: the call's region, else `AWS_REGION`, else
/// `AWS_DEFAULT_REGION`; else the region of a standard Bedrock base URL;
/// else, unless `AWS_PROFILE` is set, [`DEFAULT_REGION`].
pub fn resolve_region(
    options: &AuthOptions<'_>,
    base_url: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> RegionResolution {
    let configured = options
        .region
        .filter(|region| !region.is_empty())
        .map(String::from)
        .or_else(|| non_empty(&lookup, "AWS_REGION"))
        .or_else(|| non_empty(&lookup, "AWS_DEFAULT_REGION"));
    let has_profile = non_empty(&lookup, "AWS_PROFILE").is_some();
    let endpoint_region = standard_endpoint_region(base_url);
    let use_base_url = endpoint_region.is_none() || (configured.is_none() && !has_profile);
    let region = match (configured, endpoint_region) {
        (Some(region), _) => Some(region),
        (None, Some(region)) if use_base_url => Some(region),
        _ if !has_profile => Some(String::from(DEFAULT_REGION)),
        _ => None,
    };
    RegionResolution {
        region,
        use_base_url,
    }
}

/// The AWS SDK's Bedrock Runtime endpoint for `region`:
/// `https://bedrock-runtime.<region>.amazonaws.com` (`.amazonaws.com.cn`
/// for the `cn-` regions).
pub fn regional_endpoint(region: &str) -> String {
    let suffix = if region.starts_with("cn-") { ".cn" } else { "" };
    format!("https://bedrock-runtime.{region}.amazonaws.com{suffix}")
}

#[cfg(feature = "std")]
extern crate std;

/// [`resolve_auth`] over the process environment.
///
/// # Errors
/// As [`resolve_auth`].
#[cfg(feature = "std")]
pub fn resolve_auth_from_env(options: &AuthOptions<'_>) -> Result<BedrockAuth, AuthError> {
    resolve_auth(options, |name| std::env::var(name).ok())
}

/// [`resolve_region`] over the process environment.
#[cfg(feature = "std")]
pub fn resolve_region_from_env(options: &AuthOptions<'_>, base_url: &str) -> RegionResolution {
    resolve_region(options, base_url, |name| std::env::var(name).ok())
}
