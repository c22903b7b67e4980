//! The JSON-Schema subset validator and its scalar coercion.

use agentstream::agent::validate_arguments;
use serde_json::{json, Value};

fn errors(schema: Value, mut value: Value) -> (Vec<String>, Value) {
    let e = validate_arguments(&schema, &mut value);
    (e, value)
}

#[test]
fn type_names_and_lists() {
    assert!(errors(json!({"type": "integer"}), json!(3.0)).0.is_empty());
    assert_eq!(
        errors(json!({"type": "integer"}), json!(3.5)).0,
        ["root: must be integer"]
    );
    assert!(errors(json!({"type": ["string", "null"]}), json!(null))
        .0
        .is_empty());
    assert_eq!(
        errors(json!({"type": "object"}), json!([])).0,
        ["root: must be object"]
    );
}

#[test]
fn scalar_coercion_follows_pi() {
    assert_eq!(
        errors(json!({"type": "string"}), json!(1.5)),
        (vec![], json!("1.5"))
    );
    assert_eq!(
        errors(json!({"type": "string"}), json!(true)),
        (vec![], json!("true"))
    );
    assert_eq!(
        errors(json!({"type": "number"}), json!("2.5")),
        (vec![], json!(2.5))
    );
    assert_eq!(
        errors(json!({"type": "integer"}), json!("7")),
        (vec![], json!(7))
    );
    assert_eq!(
        errors(json!({"type": "boolean"}), json!("false")),
        (vec![], json!(false))
    );
    // Ambiguous or lossy: not coerced.
    assert_eq!(errors(json!({"type": "integer"}), json!("7.5")).0.len(), 1);
    assert_eq!(errors(json!({"type": "number"}), json!("two")).0.len(), 1);
    // JavaScript's Number() allows surrounding whitespace.
    assert_eq!(errors(json!({"type": "number"}), json!(" 2")).1, json!(2));
    assert_eq!(errors(json!({"type": "boolean"}), json!("yes")).0.len(), 1);
    assert_eq!(errors(json!({"type": "string"}), json!({})).0.len(), 1);
    // pi-ai's coercions of null, booleans and 1/0.
    assert_eq!(errors(json!({"type": "string"}), json!(null)).1, json!(""));
    assert_eq!(errors(json!({"type": "integer"}), json!(true)).1, json!(1));
    assert_eq!(errors(json!({"type": "boolean"}), json!(0)).1, json!(false));
    assert_eq!(errors(json!({"type": "null"}), json!("")).1, json!(null));
    assert_eq!(
        errors(json!({"type": ["string", "integer", "null"]}), json!({})).0,
        ["root: must be either string or integer or null"]
    );
}

/// Every expectation here is what TypeBox 1.4.3 (Pi 0.73.1's validator)
/// reports for the same schema and value, formatted as pi-ai formats it.
#[test]
fn objects_report_each_failing_path() {
    let schema = json!({
        "type": "object",
        "required": ["a", "b"],
        "additionalProperties": false,
        "properties": {
            "a": {"type": "array", "items": {"type": "string", "maxLength": 2}},
            "b": {"enum": ["x", 1]}
        }
    });
    let (e, _) = errors(schema, json!({"a": ["ok", "long", {}], "c": 1}));
    assert_eq!(
        e,
        [
            "b: must have required properties b",
            "c: schema is false",
            "root: must not have additional properties",
            "a.1: must not have more than 2 characters",
            "a.2: must be string",
        ]
    );
}

#[test]
fn enum_compares_numbers_by_value_and_bounds_apply() {
    assert!(errors(json!({"enum": [1]}), json!(1.0)).0.is_empty());
    assert_eq!(
        errors(json!({"enum": ["a"]}), json!("b")).0,
        ["root: must be equal to one of the allowed values"]
    );
    let bounded = json!({"minimum": 1, "maximum": 3});
    assert!(errors(bounded.clone(), json!(3)).0.is_empty());
    assert_eq!(errors(bounded.clone(), json!(0)).0, ["root: must be >= 1"]);
    assert_eq!(errors(bounded, json!(4)).0, ["root: must be <= 3"]);
    // Lengths count characters, not bytes.
    assert!(errors(json!({"maxLength": 2}), json!("éé")).0.is_empty());
    assert_eq!(errors(json!({"minLength": 3}), json!("éé")).0.len(), 1);
}

#[test]
fn additional_properties_schema_and_false_schema() {
    let schema = json!({"additionalProperties": {"type": "number"}});
    assert_eq!(
        errors(schema, json!({"x": "n"})).0,
        [
            "x: must be number",
            "root: must not have additional properties"
        ]
    );
    assert_eq!(errors(json!(false), json!(1)).0, ["root: schema is false"]);
    assert!(errors(json!(true), json!(1)).0.is_empty());
}
