//! How the wire protocols fill in a call's typed
//! [`ErrorCause`]: the provider's error code in an HTTP error body, the
//! cause of a failure found while decoding a stream, and [`limit_of`] to
//! read back which [`Limit`] a call exceeded.
//!
//! Every terminal `error` the wire crate produces carries its cause (see
//! [`ModelEvent::error_cause`](agentstream::model::ModelEvent::error_cause)):
//! a projector attaches the cause of a failure it finds in the response,
//! the HTTP [`exchange`](crate::http::exchange) the cause of the others, so
//! a program reads it from
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
//! | a [`Limits`](crate::limits::Limits) cap | [`LimitExceeded`](ErrorCause::LimitExceeded), the [`LimitExceeded`] as source |

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;

use agentstream::model::{ErrorCause, ProviderFailure};
use serde_json::Value;

#[cfg(test)]
use crate::limits::Limits;
use crate::limits::{Limit, LimitExceeded};

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

/// A failure a projector found in a response: the `errorMessage` of its
/// terminal `error` and the typed cause that event carries, travelling
/// together from where the failure is known (nothing is read back from
/// the text).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) cause: ErrorCause,
}

impl Failure {
    /// The provider reported an error, or ended the response with a stop
    /// reason the protocol treats as one (`code`, when it named one).
    pub(crate) fn provider(message: String, code: Option<String>) -> Self {
        Self {
            message,
            cause: ErrorCause::Provider(ProviderFailure::new(code)),
        }
    }

    /// The provider ended the response with `value` in its stop-reason
    /// `field` (`finish_reason`, `stop_reason`, `status`, …), a value the
    /// protocol treats as a failure; `value` is the cause's code.
    pub(crate) fn stop(field: &str, value: &str) -> Self {
        let message = format!("the provider ended the response with {field} \"{value}\"");
        Self::provider(message, Some(value.into()))
    }

    /// The provider's error value `error` (the `error` member of a
    /// payload, with the payload's top-level `code` beside it): its code
    /// as [`error_code`] reads one.
    pub(crate) fn reported(message: String, error: Option<&Value>, code: Option<&Value>) -> Self {
        let code = error
            .and_then(|error| {
                ["code", "type"]
                    .iter()
                    .filter_map(|key| error.get(key))
                    .find_map(code_text)
            })
            .or_else(|| code.and_then(code_text));
        Self::provider(message, code)
    }

    /// A failure reported by the payload `value` (an `event: error`'s
    /// data): the provider's error when it has a non-null `error` member
    /// or `"type": "error"` (its code as [`error_code`] reads one), else a
    /// protocol violation.
    pub(crate) fn in_payload(message: String, value: Option<&Value>) -> Self {
        let reported = value.filter(|value| {
            value.get("error").is_some_and(|e| !e.is_null())
                || value.get("type").and_then(Value::as_str) == Some("error")
        });
        match reported {
            Some(value) => Self::provider(message, code_in(value)),
            None => message.into(),
        }
    }
}

impl From<String> for Failure {
    /// A protocol violation: data that is not JSON, an event out of
    /// order, a truncated stream, arguments that are not an object.
    fn from(message: String) -> Self {
        Self {
            message,
            cause: ErrorCause::Protocol,
        }
    }
}

impl From<&str> for Failure {
    /// A protocol violation (see [`From<String>`](#impl-From<String>-for-Failure)).
    fn from(message: &str) -> Self {
        String::from(message).into()
    }
}

impl From<LimitExceeded> for Failure {
    fn from(exceeded: LimitExceeded) -> Self {
        Self {
            message: exceeded.to_string(),
            cause: limit_cause(exceeded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_carry_their_causes() {
        let exceeded = LimitExceeded::new(Limit::ToolCalls, &Limits::DEFAULT);
        let failure = Failure::from(exceeded);
        assert_eq!(failure.message, exceeded.to_string());
        assert_eq!(limit_of(&failure.cause), Some(Limit::ToolCalls));
        let error: Value =
            serde_json::from_str(r#"{"type":"overloaded_error","message":"x"}"#).unwrap();
        match Failure::reported("x".into(), Some(&error), None).cause {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("overloaded_error")),
            other => panic!("{other:?}"),
        }
        let error: Value = serde_json::from_str(r#"{"message":"quota","code":429}"#).unwrap();
        match Failure::reported("quota".into(), Some(&error), None).cause {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("429")),
            other => panic!("{other:?}"),
        }
        let top = Value::from("busy");
        match Failure::reported("busy".into(), Some(&Value::Null), Some(&top)).cause {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("busy")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Failure::from(String::from("not JSON")).cause,
            ErrorCause::Protocol
        ));
        let stop = Failure::stop("stop_reason", "refusal");
        assert_eq!(
            stop.message,
            "the provider ended the response with stop_reason \"refusal\""
        );
        match stop.cause {
            ErrorCause::Provider(p) => assert_eq!(p.code.as_deref(), Some("refusal")),
            other => panic!("{other:?}"),
        }
    }
}
