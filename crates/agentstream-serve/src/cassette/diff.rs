//! Where two contexts differ, by JSON path: the first difference (what
//! a replay without a matching cassette names) and every difference
//! (what `agentstream cassette diff` prints), in one place.

use serde_json::Value;

/// Where two contexts first differ.
pub(crate) struct Difference {
    pub(crate) path: String,
    /// How much of them is the same before it (the leading messages, then
    /// the leading fields), to pick the closest cassette.
    pub(crate) common: usize,
    pub(crate) recorded: Option<Value>,
    pub(crate) requested: Option<Value>,
}

pub(crate) fn first_difference(
    recorded: &Value,
    requested: &Value,
    path: String,
) -> Option<Difference> {
    if recorded == requested {
        return None;
    }
    let differ = |path: String, common| Difference {
        path,
        common,
        recorded: Some(recorded.clone()),
        requested: Some(requested.clone()),
    };
    match (recorded, requested) {
        (Value::Array(a), Value::Array(b)) => {
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            match (a.get(common), b.get(common)) {
                (Some(x), Some(y)) => {
                    first_difference(x, y, format!("{path}[{common}]")).map(|mut d| {
                        d.common += common << 16;
                        d
                    })
                }
                (x, y) => Some(Difference {
                    path: format!("{path}[{common}]"),
                    common: common << 16,
                    recorded: x.cloned(),
                    requested: y.cloned(),
                }),
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for (same, key) in keys_messages_first(a, b).into_iter().enumerate() {
                let here = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(mut d) = first_difference(x, y, here) {
                            d.common += same;
                            return Some(d);
                        }
                    }
                    (x, y) => {
                        return Some(Difference {
                            path: here,
                            common: same,
                            recorded: x.cloned(),
                            requested: y.cloned(),
                        })
                    }
                }
            }
            None
        }
        _ => Some(differ(path, 0)),
    }
}

/// A value for a message: its JSON, cut at 120 characters; `nothing` when
/// absent.
pub(crate) fn short(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "nothing".into();
    };
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Every difference between `recorded` and `requested`, by JSON path
/// (`$.messages[1].content`): where both are arrays or objects, the
/// differences of their items; an item only one has is one difference.
pub(crate) fn differences(
    recorded: &Value,
    requested: &Value,
    path: String,
    out: &mut Vec<Difference>,
) {
    if recorded == requested {
        return;
    }
    // The children of two arrays or two objects, paired by index or key.
    let children: Vec<(String, Option<&Value>, Option<&Value>)> = match (recorded, requested) {
        (Value::Array(a), Value::Array(b)) => (0..a.len().max(b.len()))
            .map(|i| (format!("{path}[{i}]"), a.get(i), b.get(i)))
            .collect(),
        (Value::Object(a), Value::Object(b)) => keys_messages_first(a, b)
            .into_iter()
            .map(|key| (format!("{path}.{key}"), a.get(key), b.get(key)))
            .collect(),
        _ => {
            out.push(Difference {
                path,
                common: 0,
                recorded: Some(recorded.clone()),
                requested: Some(requested.clone()),
            });
            return;
        }
    };
    for (here, x, y) in children {
        match (x, y) {
            (Some(x), Some(y)) => differences(x, y, here, out),
            (x, y) => out.push(Difference {
                path: here,
                common: 0,
                recorded: x.cloned(),
                requested: y.cloned(),
            }),
        }
    }
}

/// The keys of `a` and `b`, each once, in order, `messages` first: the
/// conversation is what differs most often, so it is looked at first.
fn keys_messages_first<'a>(
    a: &'a serde_json::Map<String, Value>,
    b: &'a serde_json::Map<String, Value>,
) -> Vec<&'a String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.sort_by_key(|k| *k != "messages");
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_difference_is_named() {
        let a = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "a"}]});
        let b = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "b"}]});
        let d = first_difference(&a, &b, "$".into()).unwrap();
        assert_eq!(d.path, "$.messages[1].content");
        assert_eq!(
            (d.recorded, d.requested),
            (Some(json!("a")), Some(json!("b")))
        );
        let c = json!({"messages": [{"role": "user", "content": "hi"}], "systemPrompt": "x"});
        let d = first_difference(&a, &c, "$".into()).unwrap();
        assert_eq!((d.path.as_str(), d.requested), ("$.messages[1]", None));
        assert!(first_difference(&a, &a, "$".into()).is_none());
    }

    #[test]
    fn every_difference_is_named_the_first_among_them() {
        let a = json!({"messages": [{"role": "user", "content": "a"}], "systemPrompt": "x"});
        let b = json!({"messages": [{"role": "user", "content": "b"}, {"role": "user", "content": "c"}]});
        let mut all = Vec::new();
        differences(&a, &b, "$".into(), &mut all);
        let paths: Vec<&str> = all.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            ["$.messages[0].content", "$.messages[1]", "$.systemPrompt"]
        );
        assert_eq!(first_difference(&a, &b, "$".into()).unwrap().path, paths[0]);
        differences(&a, &a, "$".into(), &mut all);
        assert_eq!(all.len(), 3, "equal values add nothing");
    }
}
