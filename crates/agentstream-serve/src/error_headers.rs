//! The headers a provider sends with an error answer: its request id,
//! its rate-limit state, and `retry-after` where it says to wait.
//!
//! | API | header | sent | source |
//! |---|---|---|---|
//! | all | `retry-after` (seconds) | the error's `retryAfter`; by default on Anthropic's 429 (`1`) | Anthropic, "Rate limits" (<https://docs.anthropic.com/en/api/rate-limits>): a 429 carries `retry-after`, the seconds to wait; OpenAI's and Google's pages promise none |
//! | OpenAI, Responses | `x-request-id` | every error | OpenAI API reference, "Debugging requests" (<https://platform.openai.com/docs/api-reference/debugging-requests>) |
//! | OpenAI, Responses | `x-ratelimit-limit-requests`, `x-ratelimit-limit-tokens` | every error: [`OPENAI_REQUESTS`], [`OPENAI_TOKENS`] | OpenAI, "Rate limits", "Rate limits in headers" (<https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers>) |
//! | OpenAI, Responses | `x-ratelimit-remaining-requests`, `x-ratelimit-remaining-tokens` | every error: `0` on 429, else the limit less one request (and [`USED_TOKENS`]) | the same page |
//! | OpenAI, Responses | `x-ratelimit-reset-requests`, `x-ratelimit-reset-tokens` (a duration, `1s`, `6m0s`) | every error: the `retryAfter` seconds, else `1s` | the same page |
//! | Anthropic | `request-id` | every error | Anthropic, "Errors", "Request id" (<https://docs.anthropic.com/en/api/errors>) |
//! | Anthropic | `anthropic-ratelimit-requests-limit`, `-remaining`, `-reset` (RFC 3339); `anthropic-ratelimit-tokens-limit`, `-remaining`, `-reset` | every error: [`ANTHROPIC_REQUESTS`], [`ANTHROPIC_TOKENS`], remaining `0` on 429, reset now plus `retryAfter` (else 1 s) | Anthropic, "Rate limits", "Response headers" |
//! | Bedrock | `x-amzn-errortype` (the error's type: `ValidationException`, `ThrottlingException`, …), `x-amzn-requestid` | every error | AWS, Bedrock API reference, "Common errors", and the AWS SDKs' restJson1 error parsing (the type from `x-amzn-errortype`) |
//! | Gemini | none; a 429's wait is the body's `google.rpc.RetryInfo` `retryDelay` (see [`ApiError::body`]) | with `retryAfter` | Google, Gemini API "Troubleshooting" (<https://ai.google.dev/gemini-api/docs/troubleshooting>): the `status` per HTTP code; Google's `google.rpc.RetryInfo` (AIP-193, <https://google.aip.dev/193>) |
//!
//! The error body's `type` (Anthropic), `status` (Gemini) and `type`
//! (OpenAI) follow the HTTP status as [`ApiError::error_type_for`] says.
//! A script's `httpError` may set any other header (or replace these) with
//! `"headers": {...}`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::session::iso_time;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};

use agentstream_wire::server::ApiError;
use agentstream_wire::Api;

/// OpenAI's `x-ratelimit-limit-requests` in an error answer.
pub const OPENAI_REQUESTS: u64 = 500;
/// OpenAI's `x-ratelimit-limit-tokens` in an error answer.
pub const OPENAI_TOKENS: u64 = 30_000;
/// Anthropic's `anthropic-ratelimit-requests-limit` in an error answer.
pub const ANTHROPIC_REQUESTS: u64 = 50;
/// Anthropic's `anthropic-ratelimit-tokens-limit` in an error answer.
pub const ANTHROPIC_TOKENS: u64 = 30_000;
/// The tokens a call that is not rate limited counts as used.
pub const USED_TOKENS: u64 = 1_000;

/// Numbers the request ids of error answers.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The headers a script may not set on an error: the body's framing and
/// the connection are the server's.
pub(crate) fn reserved(name: &str) -> bool {
    matches!(
        name,
        "content-length"
            | "transfer-encoding"
            | "connection"
            | "keep-alive"
            | "upgrade"
            | "te"
            | "trailer"
            | "proxy-connection"
    )
}

/// Adds `api`'s error headers for `error` to `headers`, then the error's
/// own (which replace the server's of the same name).
pub(crate) fn add(api: Api, error: &ApiError, headers: &mut HeaderMap) {
    let limited = error.status == 429;
    let wait: u64 = error
        .retry_after
        .as_deref()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut put = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    let left = |limit: u64, used: u64| if limited { 0 } else { limit - used };
    match api {
        Api::Anthropic => {
            put("request-id", format!("req_agentstream{id:016x}"));
            // RFC 3339, as JavaScript's toISOString writes it.
            let reset = iso_time(now_secs().saturating_add(wait).saturating_mul(1_000));
            put(
                "anthropic-ratelimit-requests-limit",
                ANTHROPIC_REQUESTS.to_string(),
            );
            put(
                "anthropic-ratelimit-requests-remaining",
                left(ANTHROPIC_REQUESTS, 1).to_string(),
            );
            put("anthropic-ratelimit-requests-reset", reset.clone());
            put(
                "anthropic-ratelimit-tokens-limit",
                ANTHROPIC_TOKENS.to_string(),
            );
            put(
                "anthropic-ratelimit-tokens-remaining",
                left(ANTHROPIC_TOKENS, USED_TOKENS).to_string(),
            );
            put("anthropic-ratelimit-tokens-reset", reset);
        }
        Api::Gemini => {}
        Api::Bedrock => {
            put("x-amzn-requestid", format!("agentstream-{id:016x}"));
            for (name, value) in error.headers_for(api) {
                put(name, value.to_owned());
            }
        }
        // OpenAI's: Chat Completions and Responses.
        _ => {
            put("x-request-id", format!("req_agentstream{id:016x}"));
            put("x-ratelimit-limit-requests", OPENAI_REQUESTS.to_string());
            put("x-ratelimit-limit-tokens", OPENAI_TOKENS.to_string());
            put(
                "x-ratelimit-remaining-requests",
                left(OPENAI_REQUESTS, 1).to_string(),
            );
            put(
                "x-ratelimit-remaining-tokens",
                left(OPENAI_TOKENS, USED_TOKENS).to_string(),
            );
            put("x-ratelimit-reset-requests", format!("{wait}s"));
            put("x-ratelimit-reset-tokens", format!("{wait}s"));
        }
    }
    let retry_after = match (&error.retry_after, api, error.status) {
        (Some(value), _, _) => Some(value.clone()),
        (None, Api::Anthropic, 429) => Some("1".to_owned()),
        _ => None,
    };
    if let Some(value) = retry_after.and_then(|v| HeaderValue::from_str(&v).ok()) {
        headers.insert(RETRY_AFTER, value);
    }
    for (name, value) in &error.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            if !reserved(name.as_str()) {
                headers.insert(name, value);
            }
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
