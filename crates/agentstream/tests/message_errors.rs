//! Bad input gives a clear error with a JSON path and never panics.

use agentstream::message::{json_diff, Message};
use proptest::prelude::*;
use serde_json::{json, Value};

fn err(value: Value) -> String {
    Message::from_value(value).unwrap_err().to_string()
}

#[test]
fn errors_name_the_path_and_the_problem() {
    assert_eq!(err(json!([])), "$: expected an object, found an array");
    assert_eq!(
        err(json!({"role": 5})),
        "$.role: expected a string, found a number"
    );
    assert_eq!(
        err(json!({"role": "user", "content": "x"})),
        "$: missing field `timestamp`"
    );
    assert_eq!(
        err(json!({"role": "user", "content": [{"type": "text"}], "timestamp": 1})),
        "$.content[0]: missing field `text`"
    );
    assert_eq!(
        err(json!({"role": "user", "content": [{"text": "x"}], "timestamp": 1})),
        "$.content[0]: missing field `type`"
    );
    assert_eq!(
        err(json!({"role": "user", "content": "x", "timestamp": -1})),
        "$.timestamp: expected a non-negative integer, found a number"
    );
    assert_eq!(
        err(
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [],
                   "isError": "no", "timestamp": 1})
        ),
        "$.isError: expected a boolean, found a string"
    );
    let assistant = json!({"role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": "{}"}],
        "api": "a", "provider": "p", "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": "0"}},
        "stopReason": "stop", "timestamp": 1});
    assert_eq!(
        err(assistant.clone()),
        "$.content[0].arguments: expected an object, found a string"
    );
    let mut fixed = assistant;
    fixed["content"][0]["arguments"] = json!({});
    assert_eq!(
        err(fixed),
        "$.usage.cost.total: expected a number, found a string"
    );
}

#[test]
fn serde_errors_carry_the_same_text() {
    let e = serde_json::from_str::<Message>(r#"{"role":"user","content":7,"timestamp":1}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("$.content: expected a string or an array, found a number"),
        "{e}"
    );
    assert!(serde_json::from_str::<Message>(r#"{"role":"user","content":"x","#).is_err());
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop_oneof![
            Just("user"),
            Just("assistant"),
            Just("toolResult"),
            Just("text"),
            Just("toolCall"),
            Just("x")
        ]
        .prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("role"),
        Just("type"),
        Just("content"),
        Just("timestamp"),
        Just("text"),
        Just("id"),
        Just("name"),
        Just("arguments"),
        Just("toolCallId"),
        Just("toolName"),
        Just("isError"),
        Just("details"),
        Just("usage"),
        Just("cost"),
        Just("input"),
        Just("total"),
        Just("other")
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..6).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

#[path = "support/props.rs"]
mod props;

proptest! {
    #![proptest_config(props::config(256, 8))]

    /// Arbitrary JSON never panics; whatever parses round-trips.
    #[test]
    fn arbitrary_json_never_panics_and_parsed_values_round_trip(value in arb_json()) {
        if let Ok(msg) = Message::from_value(value.clone()) {
            let text = serde_json::to_string(&msg).unwrap();
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(json_diff(&value, &back), None);
        }
    }

    /// Cost floats survive text serialization bit for bit.
    #[test]
    fn any_finite_cost_round_trips(total in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let value = json!({"role": "assistant", "content": [], "api": "a", "provider": "p",
            "model": "m", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": total}},
            "stopReason": "stop", "timestamp": 0});
        let msg = Message::from_value(value).unwrap();
        let back: Value = serde_json::from_str(&serde_json::to_string(&msg).unwrap()).unwrap();
        prop_assert_eq!(back["usage"]["cost"]["total"].as_f64().unwrap().to_bits(), total.to_bits());
    }
}
