//! Amazon Bedrock authentication: which credentials a request carries,
//! resolved from the environment as pi-ai 0.73.1's `amazon-bedrock`
//! provider resolves them, and the AWS Signature Version 4 signer.
//!
//! A server that knows the key checks a request with [`verify()`].
//!
//! Sans IO and no clock: [`BedrockAuth::headers`] takes the signing time
//! as UNIX seconds; resolution ([`resolve_auth`], [`resolve_region`]) is
//! a pure function over a `Fn(&str) -> Option<String>` lookup, so it
//! runs (and is tested) without a process environment; with the `std`
//! feature, `resolve_auth_from_env` and `resolve_region_from_env`
//! read `std::env`.
//!
//! # Supported
//! - **Bedrock API keys**: `Authorization: Bearer <token>` from the
//!   call's bearer token or `AWS_BEARER_TOKEN_BEDROCK` (first, as pi-ai
//!   takes it).
//! - **Static keys**: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`,
//!   with `AWS_SESSION_TOKEN` for temporary credentials, signed with
//!   SigV4 (signing name `bedrock`, [`SIGNING_NAME`]).
//! - **`AWS_BEDROCK_SKIP_AUTH=1`** for proxies and local servers that do
//!   not check: pi-ai then signs with the dummy keys
//!   `dummy-access-key` / `dummy-secret-key`, and so does
//!   [`resolve_auth`]; [`BedrockAuth::None`] sends no auth header at all,
//!   for callers that choose it.
//! - **Region**: the call's region, `AWS_REGION`, `AWS_DEFAULT_REGION`,
//!   the region of a standard `bedrock-runtime.<region>.amazonaws.com`
//!   base URL, then `us-east-1`, in pi-ai's order ([`resolve_region`]).
//!
//! # Not supported
//! The rest of the AWS credential chain stays outside the no_std crates:
//! named profiles (`AWS_PROFILE`, `~/.aws/config` and `credentials`,
//! including a profile's region), SSO and `aws login`, `credential_process`,
//! web identity (`AWS_WEB_IDENTITY_TOKEN_FILE`), the ECS/EKS container
//! endpoint and EC2 instance metadata, and refreshing expiring
//! credentials. Where pi-ai would hand these to the AWS SDK,
//! [`resolve_auth`] returns an [`AuthError`] naming what is missing; a
//! host that has such credentials passes them in as
//! [`BedrockAuth::SigV4`].
//!
//! # Secrets
//! `Debug` never prints a secret key, session token or bearer token; the
//! headers they travel in (`authorization`, `x-amz-security-token`) are in
//! [`SECRET_HEADERS`](crate::options::SECRET_HEADERS).

mod canonical;
mod date;
mod resolve;
pub mod sigv4;
mod verify;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

pub use canonical::{split_url, UrlParts};
pub use date::{AmzDate, DateStamp, MAX_SIGNING_TIME};
pub use resolve::{
    regional_endpoint, resolve_auth, resolve_region, AuthError, AuthOptions, RegionResolution,
    DEFAULT_REGION, SKIP_AUTH_ACCESS_KEY_ID, SKIP_AUTH_SECRET_ACCESS_KEY,
};
#[cfg(feature = "std")]
pub use resolve::{resolve_auth_from_env, resolve_region_from_env};
pub use verify::{verify, VerifyError};

use crate::options::Redacted;
use sigv4::{sign, Credentials, SignableRequest, SigningError, SigningParams};

/// Bedrock Runtime's SigV4 signing name.
pub const SIGNING_NAME: &str = "bedrock";

/// How a Bedrock request authenticates.
#[derive(Clone, PartialEq, Eq)]
pub enum BedrockAuth {
    /// `Authorization: Bearer <token>`: a Bedrock API key.
    Bearer(String),
    /// SigV4 with static credentials.
    SigV4(Credentials),
    /// No authentication header, for a local server or a proxy that adds
    /// its own.
    None,
}

impl fmt::Debug for BedrockAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bearer(_) => f.debug_tuple("Bearer").field(&Redacted).finish(),
            Self::SigV4(credentials) => f.debug_tuple("SigV4").field(credentials).finish(),
            Self::None => f.write_str("None"),
        }
    }
}

impl BedrockAuth {
    /// The headers that authenticate `request` (names in lower case):
    /// `authorization` for a bearer token; `x-amz-date`,
    /// `x-amz-security-token` when there is a session token, and
    /// `authorization` for SigV4 in `region` at `time` (UNIX seconds);
    /// none for [`BedrockAuth::None`]. `request.headers` must hold
    /// `host` for SigV4.
    ///
    /// # Errors
    /// [`SigningError`] when SigV4 cannot sign the request.
    pub fn headers(
        &self,
        region: &str,
        time: u64,
        request: &SignableRequest<'_>,
    ) -> Result<Vec<(&'static str, String)>, SigningError> {
        match self {
            Self::Bearer(token) => Ok(alloc::vec![("authorization", format!("Bearer {token}"))]),
            Self::SigV4(credentials) => {
                let params = SigningParams::new(credentials, region, SIGNING_NAME, time);
                Ok(sign(&params, request)?.into_headers())
            }
            Self::None => Ok(Vec::new()),
        }
    }
}
