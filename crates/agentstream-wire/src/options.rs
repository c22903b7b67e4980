//! The escape hatches of every HTTP configuration
//! ([`OpenAiConfig`](crate::openai::OpenAiConfig),
//! [`AnthropicConfig`](crate::anthropic::AnthropicConfig)): extra headers
//! and extra JSON merged into the request body, for what the typed options
//! do not cover (OpenRouter's `provider` routing, Azure's `api-key`, a
//! beta header, a field a provider added last week).
//!
//! ```
//! use agentstream::message::{user, Context};
//! use agentstream_wire::openai::OpenAiConfig;
//! use serde_json::json;
//!
//! let config = OpenAiConfig::new("https://openrouter.ai/api/v1", "openai/gpt-4o")
//!     .with_extra_body(json!({"response_format": {"type": "json_object"}}))
//!     .with_header("http-referer", "https://example.com")?;
//! # let request = config.prepare(&Context::from_messages([user("hi").into()])).unwrap();
//! # let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
//! # assert_eq!(body["response_format"]["type"], "json_object");
//! # assert_eq!(request.header("http-referer"), Some("https://example.com"));
//! # Ok::<(), agentstream_wire::options::HeaderError>(())
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::Value;

/// Header names whose values are secrets: [`PreparedRequest`](crate::endpoint::PreparedRequest)'s
/// [`Debug`](fmt::Debug) prints `<redacted>` for them.
pub const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "x-amz-security-token",
];

/// Prints `<redacted>` in place of a secret.
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The longest extra header value accepted, in bytes.
pub const MAX_HEADER_VALUE_LEN: usize = 8 * 1024;

/// How many extra headers one configuration may hold.
pub const MAX_EXTRA_HEADERS: usize = 64;

/// An extra header was refused. [`Display`](fmt::Display) names the header
/// and the rule it broke; the value itself is never printed (it may be a
/// key).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderError {
    /// The header name as given (clipped to 64 bytes).
    pub name: String,
    /// What is wrong with it.
    pub kind: HeaderErrorKind,
}

/// What is wrong with an extra header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderErrorKind {
    /// The name is empty or has a character outside RFC 9110's `token`.
    InvalidName,
    /// The value has a control character (CR, LF, NUL, …) or a non-ASCII
    /// byte, or is longer than [`MAX_HEADER_VALUE_LEN`].
    InvalidValue,
    /// The name is one the HTTP client sets itself (`host`,
    /// `content-length`, `transfer-encoding`, `connection`).
    Reserved,
    /// More than [`MAX_EXTRA_HEADERS`] headers.
    TooMany,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.name;
        match self.kind {
            HeaderErrorKind::InvalidName => write!(
                f,
                "invalid extra header name `{name}`: it must be a non-empty HTTP token"
            ),
            HeaderErrorKind::InvalidValue => write!(
                f,
                "invalid value for extra header `{name}`: it must be printable ASCII (tabs allowed) of at most {MAX_HEADER_VALUE_LEN} bytes"
            ),
            HeaderErrorKind::Reserved => write!(
                f,
                "extra header `{name}` is set by the HTTP client and cannot be replaced"
            ),
            HeaderErrorKind::TooMany => write!(
                f,
                "too many extra headers: at most {MAX_EXTRA_HEADERS} (adding `{name}`)"
            ),
        }
    }
}

/// A header finding has no underlying cause.
impl core::error::Error for HeaderError {}

/// Headers the HTTP clients set themselves.
const RESERVED: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether the header `name` (lower case) holds a secret that
/// [`Debug`](fmt::Debug) output redacts: the
/// [`SECRET_HEADERS`], and any name containing `key`, `token`, `secret`,
/// `auth`, `password`, `passwd`, `signature` or `credential`.
pub fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.contains(&name)
        || [
            "key",
            "token",
            "secret",
            "auth",
            "password",
            "passwd",
            "signature",
            "credential",
        ]
        .iter()
        .any(|word| name.contains(word))
}

/// Validated extra headers: names in lower case, in insertion order, a
/// repeated name replacing the earlier value. [`Debug`](fmt::Debug)
/// redacts the values of [secret-looking](is_secret_header) names.
///
/// ```
/// use agentstream_wire::options::{ExtraHeaders, HeaderErrorKind};
///
/// let mut headers = ExtraHeaders::default();
/// headers.insert("X-Title", "my app").unwrap();
/// assert_eq!(headers.get("x-title"), Some("my app"));
/// let error = headers.insert("x-bad", "line\r\nbreak").unwrap_err();
/// assert_eq!(error.kind, HeaderErrorKind::InvalidValue);
/// assert!(!error.to_string().contains("break"));
/// assert_eq!(headers.insert("bad name", "v").unwrap_err().kind, HeaderErrorKind::InvalidName);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ExtraHeaders {
    entries: Vec<(String, String)>,
}

impl ExtraHeaders {
    /// Adds the header `name: value` (replacing an earlier one of the same
    /// name, compared case-insensitively).
    ///
    /// # Errors
    /// A [`HeaderError`] when the name is not an HTTP token, the value has
    /// control or non-ASCII characters or is too long, the name is one the
    /// client sets itself, or there are too many headers.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<(), HeaderError> {
        let error = |kind| HeaderError {
            name: clip(name),
            kind,
        };
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(error(HeaderErrorKind::InvalidName));
        }
        let valid_value = value.len() <= MAX_HEADER_VALUE_LEN
            && value
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
        if !valid_value {
            return Err(error(HeaderErrorKind::InvalidValue));
        }
        let name = name.to_ascii_lowercase();
        if RESERVED.contains(&name.as_str()) {
            return Err(error(HeaderErrorKind::Reserved));
        }
        let value = value.trim_matches([' ', '\t']).to_owned();
        if let Some(slot) = self.entries.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
            return Ok(());
        }
        if self.entries.len() >= MAX_EXTRA_HEADERS {
            return Err(error(HeaderErrorKind::TooMany));
        }
        self.entries.push((name, value));
        Ok(())
    }

    /// The value of `name` (lower case), if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The headers, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Whether no header is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds these headers to `headers` of a prepared request: a default
    /// header with the same name is removed first, so the extra one
    /// replaces it.
    pub(crate) fn apply(
        &self,
        headers: &mut Vec<(&'static str, String)>,
        extra: &mut Vec<(String, String)>,
    ) {
        headers.retain(|(name, _)| self.get(name).is_none());
        extra.extend(self.entries.iter().cloned());
    }
}

impl fmt::Debug for ExtraHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (name, value) in &self.entries {
            if is_secret_header(name) {
                map.entry(name, &Redacted);
            } else {
                map.entry(name, value);
            }
        }
        map.finish()
    }
}

fn clip(name: &str) -> String {
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].into()
}

/// Merges `extra` into the request `body`, as the configurations'
/// `extra_body` is: for each key of `extra`, an object merges into an
/// object of the body recursively, and anything else (a string, a number,
/// an array, `null`) replaces the body's value. **The extra JSON wins**:
/// it can change any field the builder wrote, `model` and `messages`
/// included, so keep to fields the builder does not own. A `null` is sent
/// as `null` (it does not delete the key). An `extra` that is not an
/// object is ignored.
///
/// ```
/// use agentstream_wire::options::merge_body;
/// use serde_json::json;
///
/// let mut body = json!({"model": "m", "stream_options": {"include_usage": true}});
/// merge_body(&mut body, &json!({"stream_options": {"extra": 1}, "seed": 7}));
/// assert_eq!(body, json!({"model": "m", "stream_options": {"include_usage": true, "extra": 1}, "seed": 7}));
/// ```
pub fn merge_body(body: &mut Value, extra: &Value) {
    let (Value::Object(body), Value::Object(extra)) = (body, extra) else {
        return;
    };
    for (key, value) in extra {
        match (body.get_mut(key), value) {
            (Some(existing @ Value::Object(_)), Value::Object(_)) => merge_body(existing, value),
            _ => {
                body.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use serde_json::json;

    #[test]
    fn names_are_tokens_and_values_printable_ascii() {
        let mut h = ExtraHeaders::default();
        for bad in ["", "a b", "a:b", "é", "a\nb", "(x)"] {
            assert_eq!(
                h.insert(bad, "v").unwrap_err().kind,
                HeaderErrorKind::InvalidName,
                "{bad:?}"
            );
        }
        for bad in ["a\rb", "a\nb", "\0", "é", "\x7f"] {
            assert_eq!(
                h.insert("x", bad).unwrap_err().kind,
                HeaderErrorKind::InvalidValue,
                "{bad:?}"
            );
        }
        let long = "v".repeat(MAX_HEADER_VALUE_LEN + 1);
        assert_eq!(
            h.insert("x", &long).unwrap_err().kind,
            HeaderErrorKind::InvalidValue
        );
        assert_eq!(
            h.insert("Host", "evil").unwrap_err().kind,
            HeaderErrorKind::Reserved
        );
        h.insert("X-A", " spaced\tvalue ").unwrap();
        assert_eq!(h.get("x-a"), Some("spaced\tvalue"));
        h.insert("x-a", "again").unwrap();
        assert_eq!(h.iter().count(), 1);
        assert_eq!(h.get("x-a"), Some("again"));
    }

    #[test]
    fn the_number_of_headers_is_capped() {
        let mut h = ExtraHeaders::default();
        for i in 0..MAX_EXTRA_HEADERS {
            h.insert(&alloc::format!("x-{i}"), "v").unwrap();
        }
        let error = h.insert("x-last", "v").unwrap_err();
        assert_eq!(error.kind, HeaderErrorKind::TooMany);
        assert_eq!(
            error.to_string(),
            "too many extra headers: at most 64 (adding `x-last`)"
        );
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let mut h = ExtraHeaders::default();
        h.insert("api-key", "sk-123").unwrap();
        h.insert("x-custom-token", "tok-9").unwrap();
        h.insert("x-title", "app").unwrap();
        let printed = alloc::format!("{h:?}");
        assert!(
            !printed.contains("sk-123") && !printed.contains("tok-9"),
            "{printed}"
        );
        assert!(printed.contains("app"));
    }

    #[test]
    fn the_merge_is_recursive_for_objects_and_extra_wins_otherwise() {
        let mut body = json!({"a": {"b": 1, "c": [1]}, "d": "x", "e": {"f": 1}});
        merge_body(
            &mut body,
            &json!({"a": {"c": [2], "g": null}, "d": {"new": true}, "e": 5}),
        );
        assert_eq!(
            body,
            json!({"a": {"b": 1, "c": [2], "g": null}, "d": {"new": true}, "e": 5})
        );
        let before = body.clone();
        merge_body(&mut body, &json!([1, 2]));
        assert_eq!(body, before);
    }
}
