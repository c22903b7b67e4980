//! Argument validation: the subset of JSON Schema that tool schemas use,
//! worded as Pi words its failures (see [`validate_arguments`]).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write};

use serde_json::{Map, Number, Value};

/// Checks `value` against `schema`, coercing scalars in place, and returns
/// one line per failure, in Pi's wording.
///
/// Supported keywords: `type` (one name or a list), `properties`,
/// `required`, `enum`, `const`, `items` (one schema), `minItems`/`maxItems`,
/// `additionalProperties` (a boolean or a schema), `minimum`/`maximum`,
/// `exclusiveMinimum`/`exclusiveMaximum` (numbers), `minLength`/`maxLength`
/// (counted in Unicode scalar values). Any other keyword is ignored, so a
/// schema using more is validated only as far as this subset goes.
///
/// Failures are worded as Pi 0.73.1 words them (its validator is TypeBox's,
/// formatted by pi-ai): one line per failure, `path: message`, the path
/// dot-separated (`items.0.name`, `root` for the value itself), and for a
/// missing property the path of the first missing one with every missing
/// name in the message (`path: must have required properties path, limit`).
/// The messages are TypeBox's: `must be string`, `must be either string or
/// null`, `must be >= 1`, `must not have fewer than 3 characters`, `must be
/// equal to one of the allowed values`, and for a property that
/// `additionalProperties: false` refuses, `name: schema is false` followed
/// by `root: must not have additional properties`. Within an object the
/// order is TypeBox's: `required`, then the extra properties, then each
/// declared property in the schema's order (serde_json's map order:
/// alphabetical unless its `preserve_order` feature is on).
///
/// Before a value is checked against `type`, scalar mismatches are coerced
/// as pi-ai does for JSON schemas: a number or boolean where a string is
/// wanted becomes its JSON text; where a number is wanted, a string
/// holding one becomes that number and a boolean becomes `1` or `0`;
/// `"true"`/`"false"` and `1`/`0` where a boolean is wanted become the
/// boolean; `null` becomes `""`, `0` or `false`, and `""`, `0` or `false`
/// where `null` is wanted become `null`.
///
/// ```
/// use agentstream::agent::validate_arguments;
/// use serde_json::json;
/// let schema = json!({"type": "object", "required": ["path"],
///     "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}});
/// let mut args = json!({"path": 7, "limit": "0"});
/// let errors = validate_arguments(&schema, &mut args);
/// assert_eq!(args, json!({"path": "7", "limit": 0})); // coerced
/// assert_eq!(errors, ["limit: must be >= 1"]);
/// assert_eq!(validate_arguments(&schema, &mut json!({})), ["path: must have required properties path"]);
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
/// assert_eq!(validate_arguments_strict(&schema, &mut args), ["path: must be string"]);
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

/// `path` extended by one segment (`a` + `b` = `a.b`).
fn joined(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_string()
    } else {
        format!("{path}.{segment}")
    }
}

/// Checks `value` against `schema` at `path` extended by `segment`, the
/// path buffer extended in place and restored after (no allocation per
/// member once the buffer has grown).
fn check_member(
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    segment: impl fmt::Display,
    errors: &mut Vec<String>,
    coercing: bool,
) {
    let len = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    // Writing to a `String` cannot fail.
    let _ = write!(path, "{segment}");
    check(schema, value, path, errors, coercing);
    path.truncate(len);
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
            errors.push(format!("{}: schema is false", at(path)));
        }
        return;
    };
    if let Some(types) = schema.get("type") {
        // One name is a slice of the schema's string: no allocation.
        let one: [&str; 1];
        let many: Vec<&str>;
        let names: &[&str] = match types {
            Value::String(name) => {
                one = [name.as_str()];
                &one
            }
            Value::Array(list) => {
                many = list.iter().filter_map(Value::as_str).collect();
                &many
            }
            _ => &[],
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
                    let wanted = match names {
                        [one] => String::from(*one),
                        many => format!("either {}", many.join(" or ")),
                    };
                    errors.push(format!("{}: must be {wanted}", at(path)));
                    return;
                }
            }
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.iter().any(|a| json_equal(a, value)) {
            errors.push(format!(
                "{}: must be equal to one of the allowed values",
                at(path)
            ));
        }
    }
    if let Some(constant) = schema.get("const") {
        if !json_equal(constant, value) {
            errors.push(format!("{}: must be equal to constant", at(path)));
        }
    }
    match value {
        Value::Number(n) => check_number(schema, n, path, errors),
        Value::String(s) => check_length(schema, s, path, errors),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter_mut().enumerate() {
                    check_member(item_schema, item, path, index, errors, coercing);
                }
            }
            let count = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(as_count) {
                if count < min {
                    errors.push(format!(
                        "{}: must not have fewer than {min} items",
                        at(path)
                    ));
                }
            }
            if let Some(max) = schema.get("maxItems").and_then(as_count) {
                if count > max {
                    errors.push(format!("{}: must not have more than {max} items", at(path)));
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
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| !map.contains_key(*name))
            .collect();
        if let Some(first) = missing.first() {
            errors.push(format!(
                "{}: must have required properties {}",
                joined(path, first),
                missing.join(", ")
            ));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let declared = |name: &str| properties.is_some_and(|p| p.contains_key(name));
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => {
            let extra: Vec<&String> = map.keys().filter(|name| !declared(name)).collect();
            for name in &extra {
                errors.push(format!("{}: schema is false", joined(path, name)));
            }
            if !extra.is_empty() {
                errors.push(format!("{}: must not have additional properties", at(path)));
            }
        }
        Some(additional @ Value::Object(_)) => {
            let before = errors.len();
            for (name, item) in map.iter_mut().filter(|(name, _)| !declared(name)) {
                check_member(additional, item, path, name, errors, coercing);
            }
            // TypeBox adds the object's own failure after its members'.
            if errors.len() > before {
                errors.push(format!("{}: must not have additional properties", at(path)));
            }
        }
        _ => {}
    }
    for (name, property) in properties.into_iter().flatten() {
        if let Some(item) = map.get_mut(name) {
            check_member(property, item, path, name, errors, coercing);
        }
    }
}

fn check_number(schema: &Map<String, Value>, n: &Number, path: &str, errors: &mut Vec<String>) {
    let Some(x) = n.as_f64() else { return };
    type Holds = fn(f64, f64) -> bool;
    let bounds: [(&str, &str, Holds); 4] = [
        ("minimum", ">=", |x, limit| x >= limit),
        ("exclusiveMinimum", ">", |x, limit| x > limit),
        ("maximum", "<=", |x, limit| x <= limit),
        ("exclusiveMaximum", "<", |x, limit| x < limit),
    ];
    for (keyword, comparison, holds) in bounds {
        if let Some(limit) = schema.get(keyword).and_then(Value::as_f64) {
            if !holds(x, limit) {
                errors.push(format!(
                    "{}: must be {comparison} {}",
                    at(path),
                    schema[keyword]
                ));
            }
        }
    }
}

fn check_length(schema: &Map<String, Value>, s: &str, path: &str, errors: &mut Vec<String>) {
    let len = s.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(as_count) {
        if len < min {
            errors.push(format!(
                "{}: must not have fewer than {min} characters",
                at(path)
            ));
        }
    }
    if let Some(max) = schema.get("maxLength").and_then(as_count) {
        if len > max {
            errors.push(format!(
                "{}: must not have more than {max} characters",
                at(path)
            ));
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

/// The scalar coercion of `value` to type `name` pi-ai applies to JSON
/// schemas (`coercePrimitiveByType`), if any.
fn coerce(value: &Value, name: &str) -> Option<Value> {
    match (name, value) {
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        ("number", Value::String(s)) => parse_number(s),
        ("integer", Value::String(s)) => {
            parse_number(s).filter(|v| v.as_number().is_some_and(is_integer))
        }
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Number(n)) => match n.as_f64() {
            Some(1.0) => Some(Value::Bool(true)),
            Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        _ => None,
    }
}

/// A string's number as JavaScript's `Number()` reads a decimal one
/// (surrounding whitespace allowed; hexadecimal and `Infinity` are not
/// taken).
fn parse_number(s: &str) -> Option<Value> {
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return None;
    }
    serde_json::from_str::<Number>(trimmed)
        .ok()
        .map(Value::Number)
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
