//! JSON text helpers the providers share: JSON's own whitespace, tool-call
//! argument parsing, quoting a bounded piece of what a server sent, and
//! reading token counts that are not plain integers.
//!
//! # Numbers
//!
//! A token count is read by [`count`] whatever JSON number it is: an
//! integer as is, a negative one as 0, a fraction rounded to the nearest
//! integer (halves up), `1e19` (a float in JSON) as 10^19, and anything above `u64::MAX` (`1e20`) as
//! `u64::MAX`. A number too large for an `f64` (`1e400`) makes serde_json
//! refuse the whole payload, so a payload that fails to parse is tried
//! once more with [`saturate_numbers`], which writes each such number as
//! the largest finite `f64` of its sign: a usage field never costs the
//! answer.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;

use serde_json::{Map, Value};

/// `text` without JSON's whitespace (space, tab, LF, CR) at either end.
/// `str::trim` would also strip Unicode spaces such as U+00A0, which JSON
/// does not allow between tokens.
pub(crate) fn trim_json(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\n', '\r'])
}

/// Whether `text` is empty or JSON whitespace only.
pub(crate) fn is_json_blank(text: &str) -> bool {
    trim_json(text).is_empty()
}

/// Parses a complete tool-call argument text: blank means `{}`.
pub(crate) fn parse_arguments(text: &str) -> Result<Map<String, Value>, String> {
    if is_json_blank(text) {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("it is JSON but not an object".into()),
        Err(e) => Err(format!("{e}")),
    }
}

/// A token count read from `value`: see [Numbers](self#numbers). `None`
/// when it is not a number.
pub(crate) fn count(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    if value.as_i64().is_some() {
        // A negative integer.
        return Some(0);
    }
    let x = value.as_f64()?;
    // `as` saturates (and maps NaN to 0); adding a half first rounds.
    Some(if x > 0.0 { (x + 0.5) as u64 } else { 0 })
}

/// [`count`] as a serde field reader (`deserialize_with`): a field of a
/// typed payload that holds a token count, read whatever number it is
/// (`None` for `null` or what is not a number).
pub(crate) fn lenient_count<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    let value: Option<Value> = serde::Deserialize::deserialize(deserializer)?;
    Ok(count(value.as_ref()))
}

/// `json` with every number outside strings that overflows an `f64`
/// (`1e400`, `-1e999`) written as the largest finite `f64` of its sign, or
/// `None` when it has none. Linear in `json`.
pub(crate) fn saturate_numbers(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b != b'-' && !b.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        {
            i += 1;
        }
        let token = &json[start..i];
        if token.parse::<f64>().is_ok_and(f64::is_infinite) {
            let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied..start]);
            out.push_str(if token.starts_with('-') {
                "-1.7976931348623157e308"
            } else {
                "1.7976931348623157e308"
            });
            copied = i;
        }
    }
    let mut out = out?;
    out.push_str(&json[copied..]);
    Some(out)
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into(),
    }
}

/// Deserializes an optional JSON string borrowed from the input when it has
/// no escapes, owned otherwise. `#[serde(borrow)]` only borrows a field
/// whose type is `Cow<str>` itself: an `Option<Cow<str>>` would always be
/// copied into a `String`. Use with
/// `#[serde(default, borrow, deserialize_with = "crate::json::borrowed_str")]`.
pub(crate) fn borrowed_str<'de: 'a, 'a, D>(
    deserializer: D,
) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    /// A string, borrowed where it can be.
    struct Str<'a>(Cow<'a, str>);

    impl<'de: 'a, 'a> serde::Deserialize<'de> for Str<'a> {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Cow<'de, str>;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("a string")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                    Ok(Cow::Borrowed(v))
                }
                fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                    Ok(Cow::Owned(v.into()))
                }
                fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                    Ok(Cow::Owned(v))
                }
            }
            deserializer.deserialize_str(Visit).map(Str)
        }
    }

    <Option<Str<'a>> as serde::Deserialize>::deserialize(deserializer).map(|s| s.map(|s| s.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_saturate_and_round() {
        let read = |text: &str| count(serde_json::from_str::<Value>(text).ok().as_ref());
        assert_eq!(read("7"), Some(7));
        assert_eq!(read("-7"), Some(0));
        assert_eq!(read("1.5"), Some(2));
        assert_eq!(read("2.49"), Some(2));
        assert_eq!(read("1e19"), Some(10_000_000_000_000_000_000));
        assert_eq!(read("1e20"), Some(u64::MAX));
        assert_eq!(read("1.7976931348623157e308"), Some(u64::MAX));
        assert_eq!(read("-1e300"), Some(0));
        assert_eq!(read("\"7\""), None);
    }

    #[test]
    fn only_numbers_that_overflow_an_f64_are_rewritten() {
        assert_eq!(saturate_numbers(r#"{"a":1e30,"b":"1e400"}"#), None);
        assert_eq!(
            saturate_numbers(r#"{"a":1e400,"b":"1e400 \"","c":[-2E999]}"#).as_deref(),
            Some(r#"{"a":1.7976931348623157e308,"b":"1e400 \"","c":[-1.7976931348623157e308]}"#)
        );
    }
}
