//! JSON text helpers the providers share: JSON's own whitespace, tool-call
//! argument parsing, and quoting a bounded piece of what a server sent.

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
