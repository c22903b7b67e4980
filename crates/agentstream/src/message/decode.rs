//! Decoding helpers: turning a `serde_json` object into typed fields with
//! errors that name the JSON path of the offending value.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::ser::SerializeMap;
use serde_json::{Map, Value};

/// An error from decoding a message, block or other IR value from JSON.
///
/// It names the JSON path of the offending value relative to the value being
/// decoded (`$` is that value itself) and gives a reason.
///
/// The wording is stable: `Display` prints `<path>: <reason>`, for example
/// `$.content[1]: missing field `id`` or
/// `$.usage.input: expected a non-negative integer, found a string`.
///
/// ```
/// use agentstream::message::Message;
/// use serde_json::json;
///
/// let err = Message::from_value(json!({"role": "user", "content": 5, "timestamp": 1}))
///     .unwrap_err();
/// assert_eq!(err.path(), "$.content");
/// assert_eq!(err.to_string(), "$.content: expected a string or an array, found a number");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The path below `$`, for example `.content[1].id`.
    path: String,
    reason: String,
}

impl DecodeError {
    /// Creates an error about the value at `$` itself.
    pub fn new(reason: impl Into<String>) -> Self {
        DecodeError {
            path: String::new(),
            reason: reason.into(),
        }
    }

    /// The JSON path of the offending value, starting with `$`.
    pub fn path(&self) -> String {
        format!("${}", self.path)
    }

    /// The reason, without the path.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Moves the error one level down: the decoded value was found under
    /// `key` of an enclosing object.
    #[must_use]
    pub fn within_key(mut self, key: &str) -> Self {
        self.path.insert_str(0, &key_segment(key));
        self
    }

    /// Moves the error one level down: the decoded value was element `index`
    /// of an enclosing array.
    #[must_use]
    pub fn within_index(mut self, index: usize) -> Self {
        self.path.insert_str(0, &format!("[{index}]"));
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}: {}", self.path, self.reason)
    }
}

impl core::error::Error for DecodeError {}

/// Formats one object-key step of a JSON path: `.name` for identifier-like
/// keys, `["odd key"]` otherwise.
pub(crate) fn key_segment(key: &str) -> String {
    let mut chars = key.chars();
    let simple = match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        }
        _ => false,
    };
    if simple {
        format!(".{key}")
    } else {
        // A JSON string literal is a valid bracket key in JSONPath.
        format!("[{}]", Value::String(key.to_string()))
    }
}

/// Names a JSON value's kind for error messages, with an article:
/// `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`
/// (as in "expected a string, found a number").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expected(what: &str, value: &Value) -> DecodeError {
    DecodeError::new(format!("expected {what}, found {}", json_kind(value)))
}

/// Requires an object.
pub(crate) fn object(value: Value) -> Result<Map<String, Value>, DecodeError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(expected("an object", &other)),
    }
}

/// Requires a string.
pub(crate) fn string(value: Value) -> Result<String, DecodeError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(expected("a string", &other)),
    }
}

/// Requires a boolean.
pub(crate) fn boolean(value: Value) -> Result<bool, DecodeError> {
    match value {
        Value::Bool(b) => Ok(b),
        other => Err(expected("a boolean", &other)),
    }
}

/// Requires a non-negative integer that fits in `u64`.
///
/// A float with an integral value (`3.0`) is accepted, as JavaScript does not
/// distinguish it from `3`.
pub(crate) fn unsigned(value: Value) -> Result<u64, DecodeError> {
    if let Value::Number(n) = &value {
        if let Some(u) = n.as_u64() {
            return Ok(u);
        }
        if let Some(f) = n.as_f64() {
            // `u64::MAX as f64` is 2^64, which is itself out of range.
            if (0.0..18_446_744_073_709_551_616.0).contains(&f) && f == (f as u64) as f64 {
                return Ok(f as u64);
            }
        }
    }
    Err(expected("a non-negative integer", &value))
}

/// Requires a number, read as `f64`.
pub(crate) fn float(value: Value) -> Result<f64, DecodeError> {
    match &value {
        Value::Number(n) => n.as_f64().ok_or_else(|| expected("a number", &value)),
        _ => Err(expected("a number", &value)),
    }
}

/// Requires an array and decodes every element, adding the index to errors.
pub(crate) fn array<T>(
    value: Value,
    mut element: impl FnMut(Value) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| element(item).map_err(|e| e.within_index(i)))
            .collect(),
        other => Err(expected("an array", &other)),
    }
}

/// Decodes a required field that was collected while scanning an object.
pub(crate) fn required<T>(
    key: &str,
    value: Option<Value>,
    decode: impl FnOnce(Value) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match value {
        Some(v) => decode(v).map_err(|e| e.within_key(key)),
        None => Err(DecodeError::new(format!("missing field `{key}`"))),
    }
}

/// Decodes an optional field that was collected while scanning an object.
pub(crate) fn optional<T>(
    key: &str,
    value: Option<Value>,
    decode: impl FnOnce(Value) -> Result<T, DecodeError>,
) -> Result<Option<T>, DecodeError> {
    value
        .map(|v| decode(v).map_err(|e| e.within_key(key)))
        .transpose()
}

/// Stores a scanned value in `slot` for an optional known field, unless it is
/// `null`: a `null` goes to `extra`, so that it is written back as `null`.
pub(crate) fn take_non_null(
    slot: &mut Option<Value>,
    extra: &mut Map<String, Value>,
    key: String,
    value: Value,
) {
    if value.is_null() {
        extra.insert(key, value);
    } else {
        *slot = Some(value);
    }
}

/// Writes the unknown fields after the known ones, skipping any key that was
/// already written as a known field (so the output never repeats a key).
pub(crate) fn write_extra<M: SerializeMap>(
    map: &mut M,
    extra: &Map<String, Value>,
    written: &[&str],
) -> Result<(), M::Error> {
    for (key, value) in extra {
        if !written.contains(&key.as_str()) {
            map.serialize_entry(key, value)?;
        }
    }
    Ok(())
}

/// Collects the names of known keys as they are written, for [`write_extra`].
pub(crate) struct Written<'a> {
    keys: [&'a str; 12],
    len: usize,
}

impl<'a> Written<'a> {
    pub(crate) fn new() -> Self {
        Written {
            keys: [""; 12],
            len: 0,
        }
    }

    /// Writes one known entry and remembers its key.
    pub(crate) fn entry<M: SerializeMap, V: serde::Serialize + ?Sized>(
        &mut self,
        map: &mut M,
        key: &'a str,
        value: &V,
    ) -> Result<(), M::Error> {
        map.serialize_entry(key, value)?;
        if self.len < self.keys.len() {
            self.keys[self.len] = key;
            self.len += 1;
        }
        Ok(())
    }

    /// Writes an optional known entry if it is present.
    pub(crate) fn opt<M: SerializeMap, V: serde::Serialize>(
        &mut self,
        map: &mut M,
        key: &'a str,
        value: &Option<V>,
    ) -> Result<(), M::Error> {
        match value {
            Some(v) => self.entry(map, key, v),
            None => Ok(()),
        }
    }

    /// Writes the unknown fields, skipping keys written so far.
    pub(crate) fn finish<M: SerializeMap>(
        self,
        mut map: M,
        extra: &Map<String, Value>,
    ) -> Result<M::Ok, M::Error> {
        write_extra(&mut map, extra, &self.keys[..self.len])?;
        map.end()
    }
}

/// Implements `serde::Deserialize` for a type with a
/// `from_value(Value) -> Result<Self, DecodeError>` constructor.
macro_rules! deserialize_via_from_value {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                <$ty>::from_value(value).map_err(serde::de::Error::custom)
            }
        }
    )*};
}
pub(crate) use deserialize_via_from_value;

/// Checks the `type` or `role` tag found inside an object decoded as one
/// specific type. A missing tag is accepted; a different one is an error.
pub(crate) fn check_tag(key: &str, expected_tag: &str, value: Value) -> Result<(), DecodeError> {
    match value {
        Value::String(s) if s == expected_tag => Ok(()),
        Value::String(s) => Err(DecodeError::new(format!(
            "expected `{key}` to be \"{expected_tag}\", found \"{s}\""
        ))
        .within_key(key)),
        other => Err(expected("a string", &other).within_key(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use serde_json::json;

    #[test]
    fn paths_compose_outside_in() {
        let err = DecodeError::new("boom")
            .within_key("path")
            .within_key("arguments")
            .within_index(1)
            .within_key("content");
        assert_eq!(err.path(), "$.content[1].arguments.path");
        assert_eq!(err.to_string(), "$.content[1].arguments.path: boom");
    }

    #[test]
    fn odd_keys_are_bracketed() {
        let err = DecodeError::new("x").within_key("a b").within_key("1st");
        assert_eq!(err.path(), "$[\"1st\"][\"a b\"]");
    }

    #[test]
    fn unsigned_accepts_integral_floats_only() {
        assert_eq!(unsigned(json!(3)), Ok(3));
        assert_eq!(unsigned(json!(3.0)), Ok(3));
        assert!(unsigned(json!(3.5)).is_err());
        assert!(unsigned(json!(-1)).is_err());
        assert!(unsigned(json!(1e30)).is_err());
        assert_eq!(
            unsigned(json!("3")).unwrap_err().to_string(),
            "$: expected a non-negative integer, found a string"
        );
    }
}
