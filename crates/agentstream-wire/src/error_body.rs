//! What an HTTP error says, whatever the provider: the provider's message
//! in an error body or value, and the message of a call ended by an HTTP
//! error status.

use alloc::format;
use alloc::string::{String, ToString};

use serde_json::Value;

use crate::json::clip;

/// How many characters of an HTTP error body an error message quotes.
pub(crate) const BODY_QUOTE: usize = 500;

/// The provider's message in an error value: a string, `{"message": …}`
/// (with `code`/`type` appended when present), or the JSON text.
pub(crate) fn error_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(object) => {
            let Some(message) = object.get("message").and_then(Value::as_str) else {
                return value.to_string();
            };
            let code = object
                .get("code")
                .filter(|c| !c.is_null())
                .or_else(|| object.get("type").filter(|c| !c.is_null()));
            match code {
                Some(Value::String(code)) => format!("{message} (code: {code})"),
                Some(code) => format!("{message} (code: {code})"),
                None => message.into(),
            }
        }
        other => other.to_string(),
    }
}

/// `HTTP {status} {reason}: {provider message}; retry after {retry}`.
pub(crate) fn http_error_message(status: u16, body: &[u8], retry_after: Option<&str>) -> String {
    let mut message = format!("HTTP {status}");
    if let Some(reason) = status_reason(status) {
        message.push(' ');
        message.push_str(reason);
    }
    let text = body_message(body);
    if !text.is_empty() {
        message.push_str(": ");
        message.push_str(&text);
    }
    if let Some(retry) = retry_after.map(str::trim).filter(|r| !r.is_empty()) {
        message.push_str("; retry after ");
        message.push_str(retry);
    }
    message
}

/// The provider's message in an error body: `{"error": {"message", "code"
/// or "type"}}` (OpenAI and Anthropic alike), `{"message"}`, or the start
/// of the text.
pub(crate) fn body_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => match value.get("error") {
            Some(error) => error_text(error),
            None => error_text(&value),
        },
        Err(_) => clip(text.trim(), BODY_QUOTE),
    }
}

fn status_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => return None,
    })
}
