//! The server's side of SigV4: [`verify`] checks a received request as
//! AWS checks it, for a mock or local server that knows the key it
//! expects (the tests' servers; a `serve` that wants signed requests).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use agentstream::civil::days_from_civil;

use super::sigv4::{sign, Credentials, SignableRequest, SigningParams, SigningSettings};
use super::SIGNING_NAME;

/// Why a request did not verify (what AWS would answer 403 for).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// No `authorization` header, or not a SigV4 one.
    NotSigned,
    /// The credential scope names another key, region or service, or
    /// another day than `x-amz-date` (the scope sent).
    Scope(String),
    /// `x-amz-date` is missing, malformed, or further from the server's
    /// clock than the allowed skew (its value).
    Date(String),
    /// The session token sent is not the key's.
    SessionToken,
    /// A header `SignedHeaders` names did not arrive (its name).
    MissingHeader(String),
    /// `x-amz-content-sha256` is not the hash of the body received.
    PayloadHash,
    /// The signature recomputed from the request differs.
    Signature,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSigned => f.write_str("SigV4: the request is not signed"),
            Self::Scope(scope) => write!(f, "SigV4: unexpected credential scope {scope:?}"),
            Self::Date(date) => write!(f, "SigV4: x-amz-date {date:?} is missing or out of range"),
            Self::SessionToken => f.write_str("SigV4: the session token is not the key's"),
            Self::MissingHeader(name) => write!(f, "SigV4: signed header {name:?} did not arrive"),
            Self::PayloadHash => f.write_str("SigV4: x-amz-content-sha256 is not the body's hash"),
            Self::Signature => f.write_str("SigV4: the signature does not match"),
        }
    }
}

impl core::error::Error for VerifyError {}

/// `YYYYMMDDTHHMMSSZ` as UNIX seconds.
fn parse_amz_date(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    if bytes.len() != 16 || bytes[8] != b'T' || bytes[15] != b'Z' {
        return None;
    }
    let number = |range: core::ops::Range<usize>| -> Option<u32> {
        let digits = text.get(range)?;
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let (year, month, day) = (number(0..4)?, number(4..6)?, number(6..8)?);
    let (hour, minute, second) = (number(9..11)?, number(11..13)?, number(13..15)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = u64::try_from(days_from_civil(i64::from(year), month, day)).ok()?;
    Some(days * 86_400 + u64::from(hour * 3600 + minute * 60 + second))
}

/// Equal without an early exit on the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Checks `request` as received (its headers as they arrived, `host`
/// included) against the key `credentials` in `region` for Bedrock
/// (service `bedrock`), at the server's time `now` (UNIX seconds) with
/// `max_skew` seconds of clock difference allowed (AWS allows 300): the
/// credential scope, `x-amz-date`, the session token, the payload hash
/// in `x-amz-content-sha256` when sent, and the signature recomputed over
/// the headers `SignedHeaders` names.
///
/// ```
/// use agentstream::message::{user, Context};
/// use agentstream_wire::bedrock::auth::sigv4::{Credentials, SignableRequest};
/// use agentstream_wire::bedrock::auth::{split_url, verify};
/// use agentstream_wire::bedrock::BedrockConfig;
/// use agentstream_wire::endpoint::Endpoint;
///
/// let key = Credentials { access_key_id: "AKID".into(), secret_access_key: "s".into(), session_token: None };
/// let config = BedrockConfig::new("m", "us-east-1").with_credentials(key.clone());
/// let mut request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
/// config.sign(&mut request, 1_700_000_000_000).unwrap();
/// // What the server receives: the headers sent and the Host written.
/// let parts = split_url(&request.url).unwrap();
/// let mut headers: Vec<(&str, &str)> = request.headers_in_order().collect();
/// headers.push(("host", parts.host));
/// let received = SignableRequest { method: "POST", path: parts.path, query: parts.query, headers: &headers, body: &request.body };
/// assert_eq!(verify(&key, "us-east-1", &received, 1_700_000_100, 300), Ok(()));
/// assert!(verify(&key, "us-west-2", &received, 1_700_000_100, 300).is_err());
/// assert!(verify(&key, "us-east-1", &received, 1_700_000_400, 300).is_err());
/// ```
///
/// # Errors
/// A [`VerifyError`] saying what does not verify.
pub fn verify(
    credentials: &Credentials,
    region: &str,
    request: &SignableRequest<'_>,
    now: u64,
    max_skew: u64,
) -> Result<(), VerifyError> {
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    };
    let authorization = header("authorization").ok_or(VerifyError::NotSigned)?;
    let rest = authorization
        .strip_prefix("AWS4-HMAC-SHA256 Credential=")
        .ok_or(VerifyError::NotSigned)?;
    let (scope, rest) = rest
        .split_once(", SignedHeaders=")
        .ok_or(VerifyError::NotSigned)?;
    let (signed_names, signature) = rest
        .split_once(", Signature=")
        .ok_or(VerifyError::NotSigned)?;
    let amz_date = header("x-amz-date").unwrap_or_default();
    let time = parse_amz_date(amz_date)
        .filter(|time| time.abs_diff(now) <= max_skew)
        .ok_or_else(|| VerifyError::Date(String::from(amz_date)))?;
    let expected_scope = format!(
        "{}/{}/{region}/{SIGNING_NAME}/aws4_request",
        credentials.access_key_id,
        &amz_date[..8]
    );
    if scope != expected_scope {
        return Err(VerifyError::Scope(String::from(scope)));
    }
    if header("x-amz-security-token") != credentials.session_token.as_deref() {
        return Err(VerifyError::SessionToken);
    }
    let mut signed = Vec::new();
    for name in signed_names.split(';') {
        let value = header(name).ok_or_else(|| VerifyError::MissingHeader(String::from(name)))?;
        // The signer writes its own `x-amz-*` headers from the parameters.
        if !name.starts_with("x-amz-") {
            signed.push((name, value));
        }
    }
    let sent_hash = header("x-amz-content-sha256");
    let mut params = SigningParams::new(credentials, region, SIGNING_NAME, time);
    params.settings = SigningSettings {
        content_sha256_header: sent_hash.is_some(),
        ..SigningSettings::default()
    };
    let received = SignableRequest {
        headers: &signed,
        ..*request
    };
    let expected = sign(&params, &received).map_err(|_| VerifyError::Signature)?;
    if let Some(sent_hash) = sent_hash {
        let hash = expected
            .headers()
            .iter()
            .find(|(name, _)| *name == "x-amz-content-sha256")
            .map(|(_, value)| value.as_str());
        if hash != Some(sent_hash) {
            return Err(VerifyError::PayloadHash);
        }
    }
    if !same(expected.signature(), signature) {
        return Err(VerifyError::Signature);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_amz_date;

    #[test]
    fn amz_dates_parse_to_unix_seconds() {
        assert_eq!(parse_amz_date("19700101T000000Z"), Some(0));
        assert_eq!(parse_amz_date("20231114T221320Z"), Some(1_700_000_000));
        for bad in [
            "",
            "20231114T221320",
            "2023-11-14T22:13Z",
            "20231314T221320Z",
            "20231114T241320Z",
            "2023111éT22132Z",
            "+0231114T221320Z",
        ] {
            assert_eq!(parse_amz_date(bad), None, "{bad:?}");
        }
    }
}
