//! Secrets never written to a cassette.

use std::borrow::Cow;
use std::sync::Arc;

use regex::bytes::{Regex, RegexBuilder};
use serde_json::{Map, Value};

/// What a match of a [`Redactor`]'s pattern is replaced with.
pub const REDACTED_BODY: &str = "[REDACTED]";

/// The longest `--redact` pattern accepted, in bytes.
const MAX_PATTERN_LEN: usize = 4 << 10;

/// Patterns whose matches never reach a cassette or the request log
/// (`serve --record --redact REGEX`): each match in a request or response
/// body, and in every string of a cassette's `request.json`, is replaced
/// with [`REDACTED_BODY`] before anything is written. A response body is
/// redacted piece by piece as it arrives (the client gets it unchanged):
/// a match split across two network pieces is not seen.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    patterns: Arc<[Regex]>,
}

impl Redactor {
    /// The redactor of `patterns` (regular expressions of the `regex`
    /// crate, matched on bytes), each compiled within
    /// [`MAX_REGEX_BYTES`](crate::MAX_REGEX_BYTES).
    ///
    /// # Errors
    /// A pattern that is empty, longer than 4 KiB, not a regular
    /// expression or too large once compiled, named in the message.
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let mut compiled = Vec::new();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if pattern.is_empty() || pattern.len() > MAX_PATTERN_LEN {
                return Err(format!(
                    "--redact {pattern:?}: a pattern is 1 to {MAX_PATTERN_LEN} bytes"
                ));
            }
            let regex = RegexBuilder::new(pattern)
                .size_limit(crate::MAX_REGEX_BYTES)
                .dfa_size_limit(crate::MAX_REGEX_BYTES)
                .build()
                .map_err(|e| format!("--redact {pattern:?}: {e}"))?;
            compiled.push(regex);
        }
        Ok(Self {
            patterns: compiled.into(),
        })
    }

    /// Whether there is no pattern (nothing is redacted).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// `bytes` with every match replaced by [`REDACTED_BODY`].
    #[must_use]
    pub fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut out = Cow::Borrowed(bytes);
        for regex in self.patterns.iter() {
            if let Cow::Owned(replaced) = regex.replace_all(&out, REDACTED_BODY.as_bytes()) {
                out = Cow::Owned(replaced);
            }
        }
        out
    }

    /// Every string in `value` (object keys left alone) redacted.
    pub fn value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(bytes) = self.bytes(text.as_bytes()) {
                    *text = String::from_utf8_lossy(&bytes).into_owned();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            Value::Object(fields) => fields.values_mut().for_each(|item| self.value(item)),
            _ => {}
        }
    }
}

/// The header value written for a secret.
pub const REDACTED: &str = "[redacted]";

/// Whether a header's value is a secret never written to a cassette: the
/// wire crate's [secret headers](agentstream_wire::options::is_secret_header)
/// (`Authorization`, `x-api-key`, `api-key`, any name with `key`,
/// `token`, `secret` or `auth`) and cookies.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    agentstream_wire::options::is_secret_header(&name) || name.contains("cookie")
}

/// Headers as a JSON object (a repeated header's values joined by `, `),
/// secrets redacted.
pub(crate) fn headers_json<'a>(headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Value {
    let mut object = Map::new();
    for (name, value) in headers {
        let value = if is_secret_header(name) {
            REDACTED.to_owned()
        } else {
            String::from_utf8_lossy(value).into_owned()
        };
        match object.get_mut(name) {
            Some(Value::String(joined)) => {
                joined.push_str(", ");
                joined.push_str(&value);
            }
            _ => {
                object.insert(name.to_owned(), Value::String(value));
            }
        }
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_patterns_are_redacted_in_bytes_and_json_strings() {
        let redactor = Redactor::new(["sk-[a-z0-9]+", "hunter2"]).unwrap();
        assert_eq!(
            &*redactor.bytes(b"key sk-abc12 and hunter2."),
            b"key [REDACTED] and [REDACTED]."
        );
        assert!(matches!(redactor.bytes(b"clean"), Cow::Borrowed(_)));
        let mut value = json!({"messages": [{"content": "my sk-zz9"}], "hunter2": 1});
        redactor.value(&mut value);
        assert_eq!(
            value,
            json!({"messages": [{"content": "my [REDACTED]"}], "hunter2": 1})
        );
        assert!(Redactor::new(["("]).unwrap_err().contains("--redact"));
        assert!(Redactor::new([""]).is_err());
        assert!(
            Redactor::new(["a{1000}{1000}"]).is_err(),
            "past the size limit"
        );
        assert!(Redactor::new(Vec::<String>::new()).unwrap().is_empty());
    }

    #[test]
    fn secrets_are_redacted() {
        for name in [
            "Authorization",
            "x-api-key",
            "api-key",
            "X-Goog-Api-Key",
            "x-auth-token",
            "x-password",
            "x-signature",
            "x-auth",
            "apikey",
            "x-amz-security-token",
            "x-client-credential",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        assert!(!is_secret_header("content-type"));
        let headers = headers_json([("authorization", &b"Bearer sk-1"[..]), ("accept", b"*/*")]);
        assert_eq!(headers, json!({"authorization": REDACTED, "accept": "*/*"}));
    }
}
