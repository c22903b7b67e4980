//! Prompt caching on Chat Completions, as pi-ai does it: which cache key
//! and retention a call sends, and the Anthropic-style markers some
//! endpoints (OpenRouter's `anthropic/*` models) take.

use alloc::vec::Vec;

use agentstream::model::{CacheRetention, StreamOptions};
use serde_json::{json, Value};

use super::request::Compat;
use crate::request::caching;

/// The session id sent as `prompt_cache_key`, and the retention sent as
/// `prompt_cache_retention`, under pi-ai's conditions.
pub(super) fn prompt_cache(
    compat: Compat,
    options: &StreamOptions,
) -> (Option<&str>, Option<&'static str>) {
    let retention = options.cache_retention_or_default();
    let long = retention == CacheRetention::Long && compat.long_cache_retention;
    let key = if (compat.prompt_cache_key && caching(retention)) || long {
        options.session_id.as_deref()
    } else {
        None
    };
    (key, long.then_some("24h"))
}

/// pi-ai's Anthropic-style markers on a Chat Completions body: the system
/// (or developer) message's last text, the last tool, and the last text of
/// the last user or assistant message that has text.
pub(super) fn mark_cache_prefix(
    messages: &mut [Value],
    tools: Option<&mut Vec<Value>>,
    marker: &Value,
) {
    if let Some(system) = messages.iter_mut().find(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("system" | "developer")
        )
    }) {
        mark_text(system, marker);
    }
    if let Some(Value::Object(tool)) = tools.and_then(|t| t.last_mut()) {
        tool.insert("cache_control".into(), marker.clone());
    }
    for message in messages.iter_mut().rev() {
        let role = message.get("role").and_then(Value::as_str);
        if matches!(role, Some("user" | "assistant")) && mark_text(message, marker) {
            return;
        }
    }
}

/// Marks the last text of `message`'s content (a non-empty string becomes
/// one text part); `false` when it has none.
fn mark_text(message: &mut Value, marker: &Value) -> bool {
    let Some(content) = message.get_mut("content") else {
        return false;
    };
    match content {
        Value::String(text) if !text.is_empty() => {
            let text = core::mem::take(text);
            *content = json!([{"type": "text", "text": text, "cache_control": marker}]);
            true
        }
        Value::Array(parts) => match parts
            .iter_mut()
            .rev()
            .find(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        {
            Some(Value::Object(part)) => {
                part.insert("cache_control".into(), marker.clone());
                true
            }
            _ => false,
        },
        _ => false,
    }
}
