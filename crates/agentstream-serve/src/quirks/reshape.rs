//! The quirks that make several events of one, or regroup several:
//! Gemini 3's streamed call (`partialArgs`) and Anthropic's interleaved
//! `tool_use` blocks (`interleavedToolBlocks`); see the
//! [catalogue](super).

use serde_json::Value;

use super::{data, with_data};

/// A Gemini payload whose only part is a whole `functionCall`, as the
/// payloads of Gemini 3's streamed call (see `partialArgs`); `None` for
/// any other payload.
pub(super) fn streamed_call(payload: &Value) -> Option<Vec<Value>> {
    let parts = payload.pointer("/candidates/0/content/parts")?.as_array()?;
    let [part] = parts.as_slice() else {
        return None;
    };
    let call = part.get("functionCall")?;
    let name = call.get("name")?;
    let args = call.get("args")?.as_object()?;
    let with_part = |part: Value| {
        let mut one = payload.clone();
        if let Some(slot) = one.pointer_mut("/candidates/0/content/parts") {
            *slot = Value::Array(vec![part]);
        }
        one
    };
    let mut first = part.clone();
    first["functionCall"] = serde_json::json!({"name": name, "willContinue": true});
    let mut payloads = vec![with_part(first)];
    for (key, value) in args {
        let path = format!("$.{key}");
        let entries = match value {
            Value::String(text) if text.chars().count() >= 2 => {
                let half = text
                    .char_indices()
                    .nth(text.chars().count() / 2)
                    .map_or(0, |(at, _)| at);
                vec![
                    serde_json::json!({"jsonPath": path, "stringValue": &text[..half], "willContinue": true}),
                    serde_json::json!({"jsonPath": path, "stringValue": &text[half..]}),
                ]
            }
            Value::String(text) => vec![serde_json::json!({"jsonPath": path, "stringValue": text})],
            Value::Number(n) => vec![serde_json::json!({"jsonPath": path, "numberValue": n})],
            Value::Bool(b) => vec![serde_json::json!({"jsonPath": path, "boolValue": b})],
            Value::Null => vec![serde_json::json!({"jsonPath": path, "nullValue": null})],
            Value::Object(_) => vec![serde_json::json!({"jsonPath": path, "structValue": value})],
            Value::Array(_) => vec![serde_json::json!({"jsonPath": path, "listValue": value})],
        };
        for entry in entries {
            payloads.push(with_part(serde_json::json!({"functionCall": {
                "partialArgs": [entry], "willContinue": true}})));
        }
    }
    payloads.push(with_part(serde_json::json!({"functionCall": {}})));
    Some(payloads)
}

/// A `tool_use` block held by `interleavedToolBlocks`: its events as the
/// encoder wrote them, its deltas in halves.
#[derive(Debug)]
pub(crate) struct HeldBlock {
    pub(super) index: u64,
    pub(super) start: String,
    pub(super) deltas: Vec<String>,
    pub(super) stop: Option<String>,
}

/// A `content_block_delta` event whose `partial_json` is split in two
/// events at the middle character (one event when it has fewer than two).
pub(super) fn halves(event: &str) -> Vec<String> {
    let Some(text) = data(event)
        .and_then(|p| p.pointer("/delta/partial_json").cloned())
        .and_then(|t| t.as_str().map(str::to_owned))
    else {
        return vec![event.to_owned()];
    };
    let Some((at, _)) = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .filter(|(at, _)| *at > 0)
    else {
        return vec![event.to_owned()];
    };
    [&text[..at], &text[at..]]
        .into_iter()
        .filter_map(|part| {
            with_data(event, |payload| {
                *payload.pointer_mut("/delta/partial_json")? = Value::from(part);
                Some(())
            })
        })
        .collect()
}

/// The held blocks written interleaved: every start, then the deltas in
/// turns (the first of each block, then the second, …), then every stop.
pub(super) fn interleave(blocks: Vec<HeldBlock>, out: &mut Vec<String>) {
    let longest = blocks.iter().map(|b| b.deltas.len()).max().unwrap_or(0);
    out.extend(blocks.iter().map(|b| b.start.clone()));
    for turn in 0..longest {
        out.extend(blocks.iter().filter_map(|b| b.deltas.get(turn).cloned()));
    }
    out.extend(blocks.into_iter().filter_map(|b| b.stop));
}
