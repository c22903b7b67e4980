//! How the wire protocols fill in a call's typed
//! [`ErrorCause`]: the provider's error code in an HTTP error body, the
//! cause of a failure found while decoding a stream, and [`limit_of`] to
//! read back which [`Limit`] a call exceeded.
//!
//! The HTTP [`exchange`](crate::http::exchange) records the cause of every
//! `error` it ends a call with, so a program reads it from
//! [`ModelStream::error_cause`](agentstream::model::ModelStream::error_cause):
//!
//! | failure | cause |
//! |---|---|
//! | status outside 2xx | [`Http`](ErrorCause::Http): status, provider code, `Retry-After` |
//! | `error` inside a 2xx stream, failing stop reason | [`Provider`](ErrorCause::Provider) |
//! | client error (connect, TLS, reset, cut body) | [`Transport`](ErrorCause::Transport), the [`TransportError`](crate::http::TransportError) as source |
//! | connect / idle timeout | [`Timeout`](ErrorCause::Timeout) `Connect` / `Idle` |
//! | caller's signal | [`Aborted`](ErrorCause::Aborted) |
//! | not an event stream, not JSON, truncated | [`Protocol`](ErrorCause::Protocol) |
//! | a [`Limits`] cap | [`LimitExceeded`](ErrorCause::LimitExceeded), the [`LimitExceeded`] as source |

use alloc::string::{String, ToString};
use alloc::sync::Arc;

use agentstream::model::{ErrorCause, ModelEvent, ProviderFailure};
use serde_json::Value;

use crate::limits::{Limit, LimitExceeded, Limits};

/// The provider's error code in an error body: `error.code` when it is a
/// string or number, else `error.type` (OpenAI's `{"error": {"code",
/// "type"}}`, Anthropic's `{"type": "error", "error": {"type"}}`), else a
/// top-level `code`. `None` for a body that is not such JSON.
///
/// ```
/// use agentstream_wire::cause::error_code;
///
/// let anthropic = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
/// assert_eq!(error_code(anthropic).as_deref(), Some("overloaded_error"));
/// let openai = br#"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#;
/// assert_eq!(error_code(openai).as_deref(), Some("rate_limit_exceeded"));
/// assert_eq!(error_code(b"<html>busy</html>"), None);
/// ```
pub fn error_code(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    code_in(&value)
}

/// The code of a JSON error value (see [`error_code`]).
fn code_in(value: &Value) -> Option<String> {
    let error = value.get("error").unwrap_or(value);
    ["code", "type"]
        .iter()
        .filter_map(|key| error.get(key))
        .find_map(code_text)
        .or_else(|| value.get("code").and_then(code_text))
}

fn code_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// Which limit a [`LimitExceeded`](ErrorCause::LimitExceeded) cause names.
///
/// ```
/// use std::sync::Arc;
/// use agentstream::model::ErrorCause;
/// use agentstream_wire::cause::limit_of;
/// use agentstream_wire::limits::{Limit, LimitExceeded, Limits};
///
/// let cause = ErrorCause::LimitExceeded(Arc::new(LimitExceeded::new(Limit::ToolCalls, &Limits::DEFAULT)));
/// assert_eq!(limit_of(&cause), Some(Limit::ToolCalls));
/// assert_eq!(limit_of(&ErrorCause::Aborted), None);
/// ```
pub fn limit_of(cause: &ErrorCause) -> Option<Limit> {
    match cause {
        ErrorCause::LimitExceeded(source) => source
            .downcast_ref::<LimitExceeded>()
            .map(|exceeded| exceeded.limit),
        _ => None,
    }
}

/// A [`LimitExceeded`](ErrorCause::LimitExceeded) cause for `exceeded`.
pub(crate) fn limit_cause(exceeded: LimitExceeded) -> ErrorCause {
    ErrorCause::LimitExceeded(Arc::new(exceeded))
}

/// The limits a projector checks itself, whose messages it reports.
const PROJECTOR_LIMITS: [Limit; 3] = [
    Limit::ContentBlocks,
    Limit::ToolCalls,
    Limit::ToolArgumentBytes,
];

/// The prefix of the message a projector fails with on a stop reason the
/// protocol treats as a failure.
const STOP_PREFIX: &str = "the provider ended the response with ";

/// The cause of the terminal `error` a projector produced, from its
/// `errorMessage` and the `data` of the SSE event that caused it (`None`
/// when the body ended).
pub(crate) fn projector_cause(message: &str, data: Option<&str>, limits: &Limits) -> ErrorCause {
    if let Some(rest) = message.strip_prefix(STOP_PREFIX) {
        let code = rest.split('"').nth(1).map(String::from);
        return ErrorCause::Provider(ProviderFailure::new(code));
    }
    for limit in PROJECTOR_LIMITS {
        let exceeded = LimitExceeded::new(limit, limits);
        if message == exceeded.to_string() {
            return limit_cause(exceeded);
        }
    }
    let reported = data
        .and_then(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|value| {
            value.get("error").is_some_and(|e| !e.is_null())
                || value.get("type").and_then(Value::as_str) == Some("error")
        });
    match reported {
        Some(value) => ErrorCause::Provider(ProviderFailure::new(code_in(&value))),
        None => ErrorCause::Protocol,
    }
}

/// The `errorMessage` of `event` when it is a terminal `error`.
pub(crate) fn error_message_of(event: &ModelEvent) -> Option<&str> {
    match event {
        ModelEvent::Error { error, .. } => Some(error.error_message.as_deref().unwrap_or("")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projector_failures_are_classified() {
        let limits = Limits::DEFAULT;
        let stop = "the provider ended the response with stop_reason \"refusal\"";
        match projector_cause(stop, None, &limits) {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("refusal")),
            other => panic!("{other:?}"),
        }
        let message = LimitExceeded::new(Limit::ToolCalls, &limits).to_string();
        let cause = projector_cause(&message, Some("{}"), &limits);
        assert_eq!(limit_of(&cause), Some(Limit::ToolCalls));
        let data = r#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#;
        match projector_cause("overloaded_error: x", Some(data), &limits) {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("overloaded_error")),
            other => panic!("{other:?}"),
        }
        let data = r#"{"error":{"message":"quota","code":429}}"#;
        match projector_cause("quota (code: 429)", Some(data), &limits) {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("429")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            projector_cause("not JSON", Some("{oops"), &limits),
            ErrorCause::Protocol
        ));
    }
}
