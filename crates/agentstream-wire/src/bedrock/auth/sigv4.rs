//! AWS Signature Version 4 for a request's headers: the canonical
//! request, the string to sign, the signing key, the signature and the
//! headers that carry them (`authorization`, `x-amz-date`, and
//! `x-amz-security-token` / `x-amz-content-sha256` when they apply).
//!
//! Sans IO and no clock: the caller passes the time as UNIX seconds.
//! Checked against every header-signing vector of the AWS SigV4 test
//! suite (`tests/sigv4_suite.rs`) and against botocore on a Bedrock
//! request (`tests/sigv4_botocore.rs`). Query-string (presigned-URL)
//! signing is not here: Bedrock does not use it.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::canonical::{canonical_headers, canonical_query, canonical_uri};
use super::date::AmzDate;
use crate::options::Redacted;

/// The algorithm name at the head of the string to sign.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The signer's own headers: any copy in the request is left out of the
/// signature and replaced by the signer's.
const OWN_HEADERS: [&str; 4] = [
    "authorization",
    "x-amz-date",
    "x-amz-security-token",
    "x-amz-content-sha256",
];

/// Static AWS credentials: an access key pair and, for temporary
/// credentials, the session token. `Debug` shows the access key id only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The access key id (`AKIA…` or `ASIA…`); not a secret, it names the
    /// key in the signature's scope.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token of temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &Redacted)
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| Redacted),
            )
            .finish()
    }
}

/// Where the session token goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SessionTokenPlacement {
    /// `x-amz-security-token` is added before signing and signed, as the
    /// AWS SDKs do.
    #[default]
    Signed,
    /// `x-amz-security-token` is added after signing, outside the
    /// signature (a few services want this; the suite's
    /// `post-sts-header-after`).
    AppendedAfter,
}

/// How the request is canonicalised; the default is what Bedrock (and
/// every service but S3) expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigningSettings {
    /// Remove `.`, `..` and empty segments from the path before signing.
    pub normalize_path: bool,
    /// Percent-encode the path (as it goes on the wire) once more for the
    /// canonical URI. Every service but S3 wants this.
    pub encode_path: bool,
    /// Send and sign `x-amz-content-sha256` with the payload hash.
    pub content_sha256_header: bool,
    /// Where the session token goes, when there is one.
    pub session_token: SessionTokenPlacement,
}

impl Default for SigningSettings {
    fn default() -> Self {
        Self {
            normalize_path: true,
            encode_path: true,
            content_sha256_header: false,
            session_token: SessionTokenPlacement::Signed,
        }
    }
}

/// Everything about a signature but the request. `Debug` redacts the
/// secret key and the session token.
#[derive(Clone, Copy)]
pub struct SigningParams<'a> {
    /// The access key id.
    pub access_key_id: &'a str,
    /// The secret access key.
    pub secret_access_key: &'a str,
    /// The session token, for temporary credentials.
    pub session_token: Option<&'a str>,
    /// The region, such as `us-east-1`.
    pub region: &'a str,
    /// The signing name of the service: `bedrock` for Bedrock Runtime.
    pub service: &'a str,
    /// The signing time, UNIX seconds (UTC).
    pub time: u64,
    /// How the request is canonicalised.
    pub settings: SigningSettings,
}

impl<'a> SigningParams<'a> {
    /// Parameters over `credentials`, with the default settings.
    pub fn new(credentials: &'a Credentials, region: &'a str, service: &'a str, time: u64) -> Self {
        Self {
            access_key_id: &credentials.access_key_id,
            secret_access_key: &credentials.secret_access_key,
            session_token: credentials.session_token.as_deref(),
            region,
            service,
            time,
            settings: SigningSettings::default(),
        }
    }
}

impl fmt::Debug for SigningParams<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningParams")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &Redacted)
            .field("session_token", &self.session_token.map(|_| Redacted))
            .field("region", &self.region)
            .field("service", &self.service)
            .field("time", &self.time)
            .field("settings", &self.settings)
            .finish()
    }
}

/// A view of the request to sign.
#[derive(Clone, Copy, Debug)]
pub struct SignableRequest<'a> {
    /// The method, such as `POST`.
    pub method: &'a str,
    /// The path as it goes on the wire (escapes included), `/` at least.
    pub path: &'a str,
    /// The query as on the wire, without `?`; empty for none.
    pub query: &'a str,
    /// The headers as sent; they must include `host` (see
    /// [`split_url`](super::split_url)).
    pub headers: &'a [(&'a str, &'a str)],
    /// The body.
    pub body: &'a [u8],
}

/// Why a request could not be signed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningError {
    /// The signing time is past 9999-12-31T23:59:59Z (UNIX seconds).
    TimeOutOfRange(u64),
    /// A header name that is not an HTTP token, or a value holding a
    /// control character (the header's name).
    InvalidHeader(String),
    /// The method is empty or not an HTTP token.
    InvalidMethod,
    /// A URL that is not `http(s)://host[:port][/path][?query]`.
    InvalidUrl(String),
    /// The request has no `host` header.
    MissingHost,
    /// The HMAC key was refused (HMAC takes keys of any length, so this
    /// does not happen; reported rather than a panic).
    HmacKey,
}

impl fmt::Display for SigningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimeOutOfRange(secs) => {
                write!(f, "SigV4: signing time {secs} is past the year 9999")
            }
            Self::InvalidHeader(name) => write!(f, "SigV4: header {name:?} cannot be signed"),
            Self::InvalidMethod => f.write_str("SigV4: the method is not an HTTP token"),
            Self::InvalidUrl(url) => write!(f, "SigV4: {url:?} is not an http(s) URL"),
            Self::MissingHost => f.write_str("SigV4: the request has no host header"),
            Self::HmacKey => f.write_str("SigV4: HMAC-SHA256 refused its key"),
        }
    }
}

impl core::error::Error for SigningError {}

/// A signed request's headers, and the intermediate strings for
/// debugging a signature mismatch. `Debug` redacts the secrets (the
/// `authorization` and `x-amz-security-token` values and the canonical
/// request, which holds the token).
#[derive(Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    headers: Vec<(&'static str, String)>,
    canonical_request: String,
    string_to_sign: String,
    signature: String,
}

impl SignedHeaders {
    /// The headers to add to the request, names in lower case:
    /// `x-amz-date`, then `x-amz-security-token` and
    /// `x-amz-content-sha256` when they apply, then `authorization`.
    pub fn headers(&self) -> &[(&'static str, String)] {
        &self.headers
    }

    /// The headers to add, owned.
    pub fn into_headers(self) -> Vec<(&'static str, String)> {
        self.headers
    }

    /// The canonical request that was hashed.
    pub fn canonical_request(&self) -> &str {
        &self.canonical_request
    }

    /// The string to sign.
    pub fn string_to_sign(&self) -> &str {
        &self.string_to_sign
    }

    /// The signature, 64 lower-case hex digits.
    pub fn signature(&self) -> &str {
        &self.signature
    }
}

impl fmt::Debug for SignedHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted: &dyn fmt::Debug = &Redacted;
        let headers = self.headers.iter().map(|(name, value)| {
            let shown: &dyn fmt::Debug = if crate::options::is_secret_header(name) {
                redacted
            } else {
                value
            };
            (name, shown)
        });
        f.debug_struct("SignedHeaders")
            .field("headers", &DebugMap(headers))
            .field("canonical_request", &Redacted)
            .field("string_to_sign", &self.string_to_sign)
            .finish_non_exhaustive()
    }
}

/// Prints an iterator of pairs as a map, once.
struct DebugMap<I>(I);

impl<I, K, V> fmt::Debug for DebugMap<I>
where
    I: Iterator<Item = (K, V)> + Clone,
    K: fmt::Debug,
    V: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.clone()).finish()
    }
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// HMAC-SHA256 of `data` under `key`.
fn hmac_sha256(key: &[u8], data: &[u8]) -> Result<[u8; 32], SigningError> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).map_err(|_| SigningError::HmacKey)?;
    mac.update(data);
    Ok(mac.finalize().into_bytes().into())
}

/// The signing key of a secret for one day, region and service:
/// `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
/// "aws4_request")`. It can be cached for the day.
///
/// # Errors
/// Only [`SigningError::HmacKey`], which HMAC never gives.
pub fn signing_key(
    secret_access_key: &str,
    date_stamp: &str,
    region: &str,
    service: &str,
) -> Result<[u8; 32], SigningError> {
    let mut seed = Vec::with_capacity(4 + secret_access_key.len());
    seed.extend_from_slice(b"AWS4");
    seed.extend_from_slice(secret_access_key.as_bytes());
    let k_date = hmac_sha256(&seed, date_stamp.as_bytes())?;
    let k_region = hmac_sha256(&k_date, region.as_bytes())?;
    let k_service = hmac_sha256(&k_region, service.as_bytes())?;
    hmac_sha256(&k_service, b"aws4_request")
}

/// Signs `request` with `params`: the headers to add to it.
///
/// # Errors
/// [`SigningError`] for a time past the year 9999, a header that cannot
/// be signed, an invalid method or no `host` header.
pub fn sign(
    params: &SigningParams<'_>,
    request: &SignableRequest<'_>,
) -> Result<SignedHeaders, SigningError> {
    let method = request.method;
    if method.is_empty()
        || !method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    {
        return Err(SigningError::InvalidMethod);
    }
    if !request
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        return Err(SigningError::MissingHost);
    }
    let date = AmzDate::from_unix(params.time)?;
    let amz_date = format!("{date}");
    let date_stamp = format!("{}", date.date_stamp());
    let payload_hash = hex(&Sha256::digest(request.body));
    let settings = params.settings;

    let mut added: Vec<(&'static str, String)> = Vec::with_capacity(4);
    added.push(("x-amz-date", amz_date.clone()));
    if let (Some(token), SessionTokenPlacement::Signed) =
        (params.session_token, settings.session_token)
    {
        added.push(("x-amz-security-token", String::from(token)));
    }
    if settings.content_sha256_header {
        added.push(("x-amz-content-sha256", payload_hash.clone()));
    }
    let extra: Vec<(&str, &str)> = added
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let (header_block, signed_headers) = canonical_headers(request.headers, &OWN_HEADERS, &extra)?;

    let canonical_request = format!(
        "{method}\n{}\n{}\n{header_block}\n{signed_headers}\n{payload_hash}",
        canonical_uri(request.path, settings.normalize_path, settings.encode_path),
        canonical_query(request.query),
    );
    let scope = format!(
        "{date_stamp}/{}/{}/aws4_request",
        params.region, params.service
    );
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let key = signing_key(
        params.secret_access_key,
        &date_stamp,
        params.region,
        params.service,
    )?;
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes())?);

    if let (Some(token), SessionTokenPlacement::AppendedAfter) =
        (params.session_token, settings.session_token)
    {
        added.push(("x-amz-security-token", String::from(token)));
    }
    added.push((
        "authorization",
        format!(
            "{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            params.access_key_id
        ),
    ));
    Ok(SignedHeaders {
        headers: added,
        canonical_request,
        string_to_sign,
        signature,
    })
}
