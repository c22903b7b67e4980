//! Argument validation: the subset of JSON Schema that tool schemas use.
//!
//! Supported keywords: `type` (one name or a list), `properties`,
//! `required`, `enum`, `items` (one schema), `additionalProperties` (a
//! boolean or a schema), `minimum`/`maximum`, `minLength`/`maxLength`
//! (counted in Unicode scalar values). Any other keyword is ignored, so a
//! schema using more is validated only as far as this subset goes.
//!
//! Before a value is checked against `type`, unambiguous scalar mismatches
//! are coerced, as Pi does (its validator runs with type coercion): a
//! number or boolean where a string is wanted becomes its JSON text, a
//! string holding a number where a number is wanted becomes that number,
//! `"true"`/`"false"` where a boolean is wanted become the boolean.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

/// Checks `value` against `schema`, coercing scalars in place, and returns
/// one line per failure, each naming its JSON path (`/path/0`; the root is
/// `root`).
///
/// ```
/// use agentstream::agent::validate_arguments;
/// use serde_json::json;
/// let schema = json!({"type": "object", "required": ["path"],
///     "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}});
/// let mut args = json!({"path": 7, "limit": "0"});
/// let errors = validate_arguments(&schema, &mut args);
/// assert_eq!(args, json!({"path": "7", "limit": 0})); // coerced
/// assert_eq!(errors, ["/limit: must be >= 1"]);
/// ```
pub fn validate_arguments(schema: &Value, value: &mut Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, value, &mut String::new(), &mut errors, true);
    errors
}

/// Like [`validate_arguments`] without coercion: plain JSON Schema
/// semantics for the same subset (the JSON-Schema-Test-Suite runs against
/// this), and usable as an [`ArgumentValidator`](super::ArgumentValidator)
/// for tools that want no coercion.
///
/// ```
/// use agentstream::agent::validate_arguments_strict;
/// use serde_json::json;
/// let mut args = json!({"path": 7});
/// let schema = json!({"properties": {"path": {"type": "string"}}});
/// assert_eq!(validate_arguments_strict(&schema, &mut args), ["/path: must be string, got number"]);
/// assert_eq!(args, json!({"path": 7})); // unchanged
/// ```
pub fn validate_arguments_strict(schema: &Value, value: &mut Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, value, &mut String::new(), &mut errors, false);
    errors
}

fn at(path: &str) -> &str {
    if path.is_empty() {
        "root"
    } else {
        path
    }
}

fn check(
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    errors: &mut Vec<String>,
    coercing: bool,
) {
    let Some(schema) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{}: no value is allowed", at(path)));
        }
        return;
    };
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(name) => alloc::vec![name.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| has_type(value, name)) {
            let coerced = if coercing {
                names.iter().find_map(|name| coerce(value, name))
            } else {
                None
            };
            match coerced {
                Some(coerced) => *value = coerced,
                None => {
                    errors.push(format!(
                        "{}: must be {}, got {}",
                        at(path),
                        names.join(" or "),
                        type_of(value)
                    ));
                    return;
                }
            }
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.iter().any(|a| json_equal(a, value)) {
            errors.push(format!(
                "{}: must be one of {}",
                at(path),
                Value::Array(allowed.clone())
            ));
        }
    }
    match value {
        Value::Number(n) => check_number(schema, n, path, errors),
        Value::String(s) => check_length(schema, s, path, errors),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("/{index}"));
                    check(item_schema, item, path, errors, coercing);
                    path.truncate(len);
                }
            }
        }
        Value::Object(map) => check_object(schema, map, path, errors, coercing),
        _ => {}
    }
}

fn check_object(
    schema: &Map<String, Value>,
    map: &mut Map<String, Value>,
    path: &mut String,
    errors: &mut Vec<String>,
    coercing: bool,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                errors.push(format!("{}: missing required property '{name}'", at(path)));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    for (name, item) in map.iter_mut() {
        let len = path.len();
        path.push('/');
        path.push_str(name);
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check(property, item, path, errors, coercing),
            None => match additional {
                Some(Value::Bool(false)) => {
                    errors.push(format!("{}: property is not allowed", path));
                }
                Some(extra @ Value::Object(_)) => check(extra, item, path, errors, coercing),
                _ => {}
            },
        }
        path.truncate(len);
    }
}

fn check_number(schema: &Map<String, Value>, n: &Number, path: &str, errors: &mut Vec<String>) {
    let Some(x) = n.as_f64() else { return };
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        if x < min {
            errors.push(format!("{}: must be >= {}", at(path), schema["minimum"]));
        }
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        if x > max {
            errors.push(format!("{}: must be <= {}", at(path), schema["maximum"]));
        }
    }
}

fn check_length(schema: &Map<String, Value>, s: &str, path: &str, errors: &mut Vec<String>) {
    let len = s.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(as_count) {
        if len < min {
            errors.push(format!("{}: must be at least {min} characters", at(path)));
        }
    }
    if let Some(max) = schema.get("maxLength").and_then(as_count) {
        if len > max {
            errors.push(format!("{}: must be at most {max} characters", at(path)));
        }
    }
}

/// A non-negative integer keyword value; `2.0` counts as `2`.
fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && *f < u64::MAX as f64 && is_whole(*f))
            .map(|f| f as u64)
    })
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(is_whole)
}

/// Whether `f` has no fractional part, without `f64::fract` (std only):
/// every float of magnitude 2^53 or more is whole, and below that the
/// round trip through `i64` is exact.
fn is_whole(f: f64) -> bool {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !f.is_finite() {
        return false;
    }
    if f >= EXACT || f <= -EXACT {
        return true;
    }
    (f as i64) as f64 == f
}

fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => is_integer(n),
        _ => false,
    }
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The unambiguous scalar coercion of `value` to type `name`, if any.
fn coerce(value: &Value, name: &str) -> Option<Value> {
    match (name, value) {
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("number", Value::String(s)) => parse_number(s),
        ("integer", Value::String(s)) => {
            parse_number(s).filter(|v| v.as_number().is_some_and(is_integer))
        }
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    }
}

fn parse_number(s: &str) -> Option<Value> {
    let trimmed = s.trim();
    if trimmed.is_empty() || trimmed != s {
        return None;
    }
    serde_json::from_str::<Number>(s).ok().map(Value::Number)
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}
