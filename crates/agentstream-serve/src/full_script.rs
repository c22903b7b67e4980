//! The whole serve script: the rules, tried in order before the ordered
//! turns (see [`rules`](crate::rules)), and the turns (see
//! [`script`](crate::script)). It sits above both: a rule's replies are
//! turns, and the script holds rules and turns.

use agentstream::message::DecodeError;
use serde_json::Value;

use crate::rules::Rule;
use crate::script::ServeTurn;

/// A whole serve script: the rules, tried in order before the ordered
/// turns (see [`rules`](crate::rules)), and the turns.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Script {
    /// The rules, in the order they are tried.
    pub rules: Vec<Rule>,
    /// The ordered turns: call *k* no rule answered gets element *k*.
    pub turns: Vec<ServeTurn>,
}

impl Script {
    /// Parses a script: a JSON array of elements (the list form, no
    /// rules), or an object `{"rules": [...], "turns": [...]}` (both
    /// optional).
    ///
    /// ```
    /// use agentstream_serve::Script;
    /// use serde_json::json;
    ///
    /// let script = Script::from_value(json!({"rules": [{"match": {"tool": "weather"},
    ///     "reply": "sunny"}], "turns": ["first"]})).unwrap();
    /// assert_eq!((script.rules.len(), script.turns.len()), (1, 1));
    /// let error = Script::from_value(json!({"rules": [{"reply": "x", "time": 1}]})).unwrap_err();
    /// assert_eq!(error.path(), "$.rules[0].time");
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] naming the JSON path of the bad value.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let mut object = match value {
            Value::Array(items) => {
                return Ok(Script {
                    rules: Vec::new(),
                    turns: elements(items, ServeTurn::from_value)?,
                })
            }
            Value::Object(object) => object,
            other => {
                return Err(DecodeError::new(format!(
                "expected an array of turns or an object {{\"rules\", \"turns\"}}, found {other}"
            )))
            }
        };
        let mut list = |key: &str| match object.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => {
                Err(DecodeError::new(format!("expected an array, found {other}")).within_key(key))
            }
        };
        let (rules, turns) = (list("rules")?, list("turns")?);
        if let Some(key) = object.keys().next() {
            return Err(
                DecodeError::new("unknown script key (known: rules, turns)").within_key(key)
            );
        }
        Ok(Script {
            rules: elements(rules, Rule::from_value).map_err(|e| e.within_key("rules"))?,
            turns: elements(turns, ServeTurn::from_value).map_err(|e| e.within_key("turns"))?,
        })
    }
}

/// Each of `items` decoded, an error naming its index.
fn elements<T>(
    items: Vec<Value>,
    decode: impl Fn(Value) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| decode(item).map_err(|e| e.within_index(i)))
        .collect()
}
