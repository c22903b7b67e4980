//! JSON text helpers the providers share: JSON's own whitespace, tool-call
//! argument parsing, and quoting a bounded piece of what a server sent.

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
