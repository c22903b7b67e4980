//! Gemini 3's streamed call arguments: the `jsonPath` of a `partialArgs`
//! entry (`$`, `$.a.b`, `$['a']`, `$.a[0]`) and the slot it names in the
//! arguments assembled so far, how deep a value nests, and its lone
//! surrogates replaced.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::surrogates::unmarked;

/// The most segments a `jsonPath` may have.
const MAX_PATH_SEGMENTS: usize = 64;

/// One step of a `jsonPath`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// Reads `$`, `$.a.b`, `$['a']`, `$.a[0]`; `None` for anything else.
pub(super) fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if steps.len() >= MAX_PATH_SEGMENTS {
            return None;
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(after[..end].into()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            if let Some(quote) = after.chars().next().filter(|c| *c == '\'' || *c == '"') {
                let inner = &after[1..];
                let end = inner.find(quote)?;
                steps.push(Step::Key(inner[..end].into()));
                rest = inner[end + 1..].strip_prefix(']')?;
            } else {
                let end = after.find(']')?;
                steps.push(Step::Index(after[..end].parse().ok()?));
                rest = &after[end + 1..];
            }
        } else {
            return None;
        }
    }
    Some(steps)
}

/// The value at `path` in `root`, created (as `null`) with the objects and
/// arrays that lead to it. `None` when the path crosses a value of another
/// shape, or an array index past its end (Gemini fills arrays in order).
pub(super) fn slot_at<'a>(
    root: &'a mut Map<String, Value>,
    path: &[Step],
) -> Option<&'a mut Value> {
    let (first, rest) = path.split_first()?;
    let Step::Key(key) = first else {
        return None;
    };
    let mut slot = root.entry(key.clone()).or_insert(Value::Null);
    for step in rest {
        slot = match step {
            Step::Key(key) => {
                if slot.is_null() {
                    *slot = Value::Object(Map::new());
                }
                slot.as_object_mut()?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Step::Index(index) => {
                if slot.is_null() {
                    *slot = Value::Array(Vec::new());
                }
                let array = slot.as_array_mut()?;
                if *index == array.len() {
                    array.push(Value::Null);
                }
                array.get_mut(*index)?
            }
        };
    }
    Some(slot)
}

/// How many levels of arrays and objects `value` nests (`0` for a
/// scalar; its depth is the parser's, so the recursion is bounded).
pub(super) fn nesting(value: &Value) -> usize {
    let deepest = |items: &mut dyn Iterator<Item = &Value>| items.map(nesting).max().unwrap_or(0);
    match value {
        Value::Array(items) => 1 + deepest(&mut items.iter()),
        Value::Object(map) => 1 + deepest(&mut map.values()),
        _ => 0,
    }
}

/// `value` with the markers in its strings and keys replaced by U+FFFD
/// (its depth is the parser's, so the recursion is bounded).
pub(super) fn unmark_value(value: Value) -> Value {
    let unmark = |text: String| unmarked(text, true);
    match value {
        Value::String(text) => Value::String(unmark(text)),
        Value::Array(items) => Value::Array(items.into_iter().map(unmark_value).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (unmark(key), unmark_value(value)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_are_read() {
        assert_eq!(parse_path("$.a"), Some(alloc::vec![Step::Key("a".into())]));
        assert_eq!(
            parse_path("$.a[0]['b c']"),
            Some(alloc::vec![
                Step::Key("a".into()),
                Step::Index(0),
                Step::Key("b c".into())
            ])
        );
        for bad in ["a", "$..a", "$[x]", "$['a", "$.a[1"] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn slots_are_created_in_order_only() {
        let mut root = Map::new();
        *slot_at(&mut root, &parse_path("$.a[0].b").unwrap()).unwrap() = Value::from(1);
        assert_eq!(
            Value::Object(root.clone()),
            serde_json::json!({"a": [{"b": 1}]})
        );
        assert!(slot_at(&mut root, &parse_path("$.a[5]").unwrap()).is_none());
        assert!(slot_at(&mut root, &parse_path("$.a.b").unwrap()).is_none());
        assert!(slot_at(&mut root, &parse_path("$").unwrap()).is_none());
    }
}
