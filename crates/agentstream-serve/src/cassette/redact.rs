//! Secrets never written to a cassette.

use std::borrow::Cow;

use regex::bytes::{Regex, RegexBuilder};
use serde_json::{Map, Value};

/// A `--redact` pattern compiled within the size limits.
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .size_limit(crate::MAX_REGEX_BYTES)
        .dfa_size_limit(crate::MAX_REGEX_BYTES)
        .build()
}

/// What a match of a [`Redactor`]'s pattern is replaced with.
pub const REDACTED_BODY: &str = "[REDACTED]";

/// The longest `--redact` pattern accepted, in bytes.
const MAX_PATTERN_LEN: usize = 4 << 10;

/// The longest match a [`Redactor`] looks for across a response body's
/// pieces when a pattern's matches have no bound (`sk-[a-z]+`): 64 KiB.
/// A longer match of such a pattern may be missed where it crosses the
/// edge of the bytes held back.
pub const MAX_MATCH_WINDOW: usize = 64 << 10;

/// Patterns whose matches never reach a cassette or the request log
/// (`serve --record --redact REGEX`): each match in a request or response
/// body, and in every string of a cassette's `request.json`, is replaced
/// with [`REDACTED_BODY`] before anything is written. The patterns are
/// searched as one alternation, leftmost match first. A response body is
/// redacted as one text while its pieces arrive (the client gets them
/// unchanged): a match split across network pieces is redacted too, and
/// the cassette keeps the pieces' count and times. A boundary inside a
/// match moves to the match's start (the replacement goes with the piece
/// that completed it); the recorder holds back at most 8 KiB or twice
/// the longest match (at most [`MAX_MATCH_WINDOW`]), whichever is more,
/// and the latest piece, and
/// searches each byte a bounded number of times. The patterns see the
/// body's bytes: a secret streamed over two SSE events (two deltas, JSON
/// between them) is not one text there.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Every pattern as one alternation; `None` without a pattern.
    combined: Option<Regex>,
    /// The longest match of any pattern, at most [`MAX_MATCH_WINDOW`].
    window: usize,
}

impl Redactor {
    /// The redactor of `patterns` (regular expressions of the `regex`
    /// crate, matched on bytes), each compiled within
    /// [`MAX_REGEX_BYTES`](crate::MAX_REGEX_BYTES), as is their
    /// alternation.
    ///
    /// # Errors
    /// A pattern that is empty, longer than 4 KiB, not a regular
    /// expression, able to match no text at all (`a*`: it would match
    /// between every two bytes) or too large once compiled, named in the
    /// message; patterns too large together.
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let mut alternation = Vec::new();
        let mut window = 0usize;
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if pattern.is_empty() || pattern.len() > MAX_PATTERN_LEN {
                return Err(format!(
                    "--redact {pattern:?}: a pattern is 1 to {MAX_PATTERN_LEN} bytes"
                ));
            }
            compile(pattern).map_err(|e| format!("--redact {pattern:?}: {e}"))?;
            // As `regex::bytes` reads it: Unicode on, any byte allowed.
            let hir = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(pattern)
                .map_err(|e| format!("--redact {pattern:?}: {e}"))?;
            let properties = hir.properties();
            if properties.minimum_len() == Some(0) {
                return Err(format!(
                    "--redact {pattern:?}: the pattern matches empty text"
                ));
            }
            let longest = properties.maximum_len().unwrap_or(MAX_MATCH_WINDOW);
            window = window.max(longest.min(MAX_MATCH_WINDOW));
            alternation.push(format!("(?:{pattern})"));
        }
        if alternation.is_empty() {
            return Ok(Self::default());
        }
        let combined =
            compile(&alternation.join("|")).map_err(|e| format!("--redact, all patterns: {e}"))?;
        Ok(Self {
            combined: Some(combined),
            window,
        })
    }

    /// Whether there is no pattern (nothing is redacted).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The patterns' alternation, if any.
    pub(crate) fn combined(&self) -> Option<&Regex> {
        self.combined.as_ref()
    }

    /// The longest match looked for across a body's pieces.
    pub(crate) fn window(&self) -> usize {
        self.window
    }

    /// `bytes` with every match replaced by [`REDACTED_BODY`].
    #[must_use]
    pub fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.combined {
            Some(regex) => regex.replace_all(bytes, REDACTED_BODY.as_bytes()),
            None => Cow::Borrowed(bytes),
        }
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
        assert!(Redactor::new(["a*"]).unwrap_err().contains("empty text"));
        assert_eq!(Redactor::new(["hunter[0-9]", "ab"]).unwrap().window(), 7);
        assert_eq!(
            Redactor::new(["sk-[a-z]+"]).unwrap().window(),
            super::MAX_MATCH_WINDOW
        );
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
