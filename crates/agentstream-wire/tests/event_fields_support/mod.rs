//! What the tests comparing our events with pi-ai's golden streams share
//! (`pi_streams.rs`, `bedrock_projector.rs`): an event seen as the goldens
//! hold it.

use serde_json::{Map, Value};

/// An event's value fields, as `compare.mjs` projects it and the goldens
/// hold it: Pi's JSON of the event without the partial message.
pub fn event_fields(event: &Value) -> Value {
    let mut out = Map::new();
    for key in [
        "type",
        "contentIndex",
        "delta",
        "content",
        "toolCall",
        "reason",
    ] {
        if let Some(value) = event.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    Value::Object(out)
}
