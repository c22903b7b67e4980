//! Secrets never written to a cassette.

use serde_json::{Map, Value};

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
