//! The JSON Schema subset Gemini's OpenAPI-style `Schema` object accepts,
//! for [`SchemaMode::OpenApi`](super::SchemaMode::OpenApi) (tool
//! `parameters` and `responseSchema`).
//!
//! By default the request builder sends tool schemas as
//! `parametersJsonSchema` and the response schema as `responseJsonSchema`,
//! which take JSON Schema as it is (Pi's default). The older `parameters` /
//! `responseSchema` fields refuse a request with any key outside
//! Gemini's `Schema` object, so [`to_openapi`] keeps only these keys:
//! `type`, `format`, `title`, `description`, `nullable`, `enum`,
//! `properties`, `required`, `items`, `anyOf`, `minItems`, `maxItems`,
//! `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//! `minimum`, `maximum`, `default`, `example` and `propertyOrdering`.
//!
//! Rewritten on the way: a `type` list with `"null"` (`["string",
//! "null"]`) becomes the other type plus `nullable: true`; `const` becomes
//! a one-value `enum`; `oneOf` becomes `anyOf`. Everything else is
//! dropped, recursively: `$schema`, `$id`, `$ref`, `$defs`/`definitions`,
//! `$comment`, `additionalProperties`, `patternProperties`, `allOf`,
//! `not`, `if`/`then`/`else`, `exclusiveMinimum`/`exclusiveMaximum`,
//! `multipleOf`, `uniqueItems`, `const` on a non-string, and any unknown
//! key. A `$ref` is not resolved (its property keeps no type).

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

/// The keys kept as they are (their values are not schemas).
const PLAIN_KEYS: [&str; 17] = [
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "required",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
    "example",
];

/// How deep schemas are rewritten; deeper ones are cut to `{}`.
const MAX_DEPTH: usize = 64;

/// `schema` reduced to the subset Gemini's `Schema` object accepts. See
/// the [module documentation](self).
///
/// ```
/// use agentstream_wire::gemini::schema::to_openapi;
/// use serde_json::json;
///
/// let schema = json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "additionalProperties": false,
///     "properties": {"unit": {"type": ["string", "null"], "const": "C"}},
/// });
/// assert_eq!(
///     to_openapi(&schema),
///     json!({"type": "object", "properties": {"unit": {"type": "string", "nullable": true, "enum": ["C"]}}})
/// );
/// ```
pub fn to_openapi(schema: &Value) -> Value {
    reduce(schema, 0)
}

fn reduce(schema: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    if depth >= MAX_DEPTH {
        return Value::Object(Map::new());
    }
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "type" => match value {
                Value::Array(types) => {
                    let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if named.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    if let Some(first) = named.first() {
                        out.insert("type".into(), (*first).clone());
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "properties" => {
                if let Some(properties) = value.as_object() {
                    let reduced: Map<String, Value> = properties
                        .iter()
                        .map(|(name, s)| (name.clone(), reduce(s, depth + 1)))
                        .collect();
                    out.insert("properties".into(), Value::Object(reduced));
                }
            }
            "items" => {
                out.insert("items".into(), reduce(value, depth + 1));
            }
            "anyOf" | "oneOf" => {
                if let Some(options) = value.as_array() {
                    let reduced = options.iter().map(|s| reduce(s, depth + 1)).collect();
                    out.insert("anyOf".into(), Value::Array(reduced));
                }
            }
            "const" if value.is_string() => {
                out.insert("enum".into(), Value::Array(alloc::vec![value.clone()]));
            }
            "propertyOrdering" => {
                out.insert(key.clone(), value.clone());
            }
            key if PLAIN_KEYS.contains(&key) => {
                out.insert(key.into(), value.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}
