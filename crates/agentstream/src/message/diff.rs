//! Comparing JSON values under JavaScript semantics.

use alloc::format;
use alloc::string::String;

use serde_json::Value;

use super::decode::key_segment;

/// Compares two JSON values the way JavaScript would see them after
/// `JSON.parse`, and returns the JSON path of the first difference, or `None`
/// when they are equal.
///
/// - Numbers compare as `f64`, so `1` equals `1.0`, and `1e2` equals `100`.
/// - Object key order is ignored. Keys are visited in `a`'s order, then keys
///   only present in `b`; a key missing on either side is a difference at
///   that key's path.
/// - Arrays must have the same length and equal elements in order. A length
///   difference is reported at the first index present on one side only.
/// - `null` equals only `null`; an absent key differs from a `null` one.
///
/// Paths look like `$.content[1].arguments.path`; keys that are not plain
/// identifiers are written in brackets as JSON strings: `$["a b"]`.
///
/// ```
/// use agentstream::message::json_diff;
/// use serde_json::json;
///
/// assert_eq!(json_diff(&json!({"a": 1, "b": [2.0]}), &json!({"b": [2], "a": 1.0})), None);
/// assert_eq!(
///     json_diff(&json!({"content": [{}, {"arguments": {"path": "a"}}]}),
///               &json!({"content": [{}, {"arguments": {"path": "b"}}]})),
///     Some("$.content[1].arguments.path".to_string())
/// );
/// ```
pub fn json_diff(a: &Value, b: &Value) -> Option<String> {
    let mut path = String::from("$");
    if diff_at(a, b, &mut path) {
        Some(path)
    } else {
        None
    }
}

/// Returns `true` if a difference was found; `path` then names it.
fn diff_at(a: &Value, b: &Value, path: &mut String) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => false,
        (Value::Bool(x), Value::Bool(y)) => x != y,
        (Value::String(x), Value::String(y)) => x != y,
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            // `as_f64` is always `Some` without arbitrary_precision; be safe.
            (Some(x), Some(y)) => x != y,
            _ => x != y,
        },
        (Value::Array(xs), Value::Array(ys)) => {
            let len = path.len();
            for i in 0..xs.len().max(ys.len()) {
                path.push_str(&format!("[{i}]"));
                let differs = match (xs.get(i), ys.get(i)) {
                    (Some(x), Some(y)) => diff_at(x, y, path),
                    _ => true,
                };
                if differs {
                    return true;
                }
                path.truncate(len);
            }
            false
        }
        (Value::Object(xs), Value::Object(ys)) => {
            let len = path.len();
            for (key, x) in xs {
                path.push_str(&key_segment(key));
                let differs = match ys.get(key) {
                    Some(y) => diff_at(x, y, path),
                    None => true,
                };
                if differs {
                    return true;
                }
                path.truncate(len);
            }
            if let Some(key) = ys.keys().find(|k| !xs.contains_key(*k)) {
                path.push_str(&key_segment(key));
                return true;
            }
            false
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(a: Value, b: Value) -> Option<String> {
        json_diff(&a, &b)
    }

    #[test]
    fn js_number_semantics() {
        assert_eq!(d(json!(1), json!(1.0)), None);
        assert_eq!(d(json!(0), json!(-0.0)), None);
        assert_eq!(d(json!(0.1), json!(0.10000000000000002)), Some("$".into()));
        assert_eq!(d(json!(1), json!("1")), Some("$".into()));
    }

    #[test]
    fn key_order_is_ignored_but_absence_is_not() {
        assert_eq!(d(json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1})), None);
        assert_eq!(d(json!({"a": null}), json!({})), Some("$.a".into()));
        assert_eq!(d(json!({}), json!({"x y": 1})), Some("$[\"x y\"]".into()));
    }

    #[test]
    fn arrays_report_the_first_differing_index() {
        assert_eq!(d(json!([1, 2]), json!([1, 2, 3])), Some("$[2]".into()));
        assert_eq!(
            d(json!([1, [2, 3]]), json!([1, [2, 4]])),
            Some("$[1][1]".into())
        );
        assert_eq!(
            d(
                json!({"content": [{"a": 1}]}),
                json!({"content": [{"a": 2}]})
            ),
            Some("$.content[0].a".into())
        );
    }
}
