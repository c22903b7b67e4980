//! Errors the server answers with, in a provider-neutral form that each
//! protocol module renders as its provider's error body.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{json, Value};

pub(crate) use crate::Api;

/// An HTTP error answer: a status and what the provider's error body says.
///
/// [`ApiError::body`] renders it the way the provider does:
///
/// - OpenAI: `{"error": {"message", "type", "param", "code"}}`;
/// - Anthropic: `{"type": "error", "error": {"type", "message"}}`;
/// - OpenAI Responses: as OpenAI;
/// - Google: `{"error": {"code", "message", "status"}}`, the status the
///   gRPC name of the HTTP status (see [`ApiError::gemini_status_for`]);
///   with a [`retry_after`](Self::retry_after) of whole seconds, also
///   `"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
///   "retryDelay": "Ns"}]`, where Google says how long to wait.
///
/// - Amazon Bedrock: `{"message"}`, the type (`ValidationException`,
///   `ThrottlingException`, …) in the `x-amzn-errortype` header (see
///   [`ApiError::headers_for`]).
///
/// Without an explicit `error_type`, the type follows the status (see
/// [`ApiError::error_type_for`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The error's message.
    pub message: String,
    /// The error's `type`; `None` picks the provider's usual type for the
    /// status.
    pub error_type: Option<String>,
    /// OpenAI's `param`: the request field at fault.
    pub param: Option<String>,
    /// OpenAI's `code`.
    pub code: Option<String>,
    /// A `Retry-After` header value.
    pub retry_after: Option<String>,
    /// A body sent verbatim instead of the rendered one.
    pub body: Option<Value>,
    /// Response headers set on this error, sent after (and over) the
    /// server's own; names in lower case. The server checks them (see
    /// [`with_header`](Self::with_header)).
    pub headers: Vec<(String, String)>,
}

impl ApiError {
    /// An error with `status` and `message`, everything else defaulted.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            error_type: None,
            param: None,
            code: None,
            retry_after: None,
            body: None,
            headers: Vec::new(),
        }
    }

    /// The HTTP 500 for a failed model call: its `errorMessage`, or "the
    /// model failed" when it has none.
    pub fn model_failure(message: &agentstream::message::AssistantMessage) -> Self {
        let text = message
            .error_message
            .clone()
            .unwrap_or_else(|| "the model failed".into());
        Self::new(500, text)
    }

    /// Sets the error's `type`.
    #[must_use]
    pub fn with_type(mut self, error_type: impl Into<String>) -> Self {
        self.error_type = Some(error_type.into());
        self
    }

    /// Sets OpenAI's `param`.
    #[must_use]
    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Sets OpenAI's `code`.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Sets the `Retry-After` header.
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: impl Into<String>) -> Self {
        self.retry_after = Some(retry_after.into());
        self
    }

    /// Adds a response header sent with the error (over the server's
    /// own of the same name). Whoever builds the error checks that the
    /// name and value are valid HTTP; the server drops one that is not.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The provider's usual error `type` for `status`:
    ///
    /// | status | OpenAI | Anthropic |
    /// |---|---|---|
    /// | 400, 404, 405, 413, 422 | `invalid_request_error` | `invalid_request_error`, `not_found_error` (404), `request_too_large` (413) |
    /// | 401 | `invalid_request_error` | `authentication_error` |
    /// | 403 | `invalid_request_error` | `permission_error` |
    /// | 429 | `requests` | `rate_limit_error` |
    /// | 529 | `server_error` | `overloaded_error` |
    /// | other 5xx | `server_error` | `api_error` |
    ///
    /// ```
    /// use agentstream_wire::{server::ApiError, Api};
    /// assert_eq!(ApiError::error_type_for(Api::Anthropic, 429), "rate_limit_error");
    /// assert_eq!(ApiError::error_type_for(Api::OpenAi, 500), "server_error");
    /// ```
    pub fn error_type_for(api: Api, status: u16) -> &'static str {
        match (api, status) {
            (Api::Gemini, _) => Self::gemini_status_for(status),
            (Api::Bedrock, 401) => "UnrecognizedClientException",
            (Api::Bedrock, 403) => "AccessDeniedException",
            (Api::Bedrock, 404 | 405) => "ResourceNotFoundException",
            (Api::Bedrock, 408) => "ModelTimeoutException",
            (Api::Bedrock, 424) => "ModelErrorException",
            (Api::Bedrock, 429) => "ThrottlingException",
            (Api::Bedrock, 503 | 529) => "ServiceUnavailableException",
            (Api::Bedrock, 500..) => "InternalServerException",
            (Api::Bedrock, _) => "ValidationException",
            (Api::Anthropic, 401) => "authentication_error",
            (Api::Anthropic, 403) => "permission_error",
            (Api::Anthropic, 404) => "not_found_error",
            (Api::Anthropic, 413) => "request_too_large",
            (Api::Anthropic, 429) => "rate_limit_error",
            (Api::Anthropic, 529) => "overloaded_error",
            (Api::Anthropic, 500..) => "api_error",
            (Api::Anthropic, _) => "invalid_request_error",
            // OpenAI's types: Chat Completions and Responses.
            (_, 429) => "requests",
            (_, 500..) => "server_error",
            (_, _) => "invalid_request_error",
        }
    }

    /// The old name of [`gemini_status_for`](Self::gemini_status_for).
    #[deprecated(note = "renamed to `gemini_status_for`")]
    pub fn google_status_for(status: u16) -> &'static str {
        Self::gemini_status_for(status)
    }

    /// Google's `status` for an HTTP status, as the Gemini API names it:
    ///
    /// | HTTP | status |
    /// |---|---|
    /// | 400, 413 | `INVALID_ARGUMENT` |
    /// | 401 | `UNAUTHENTICATED` |
    /// | 403 | `PERMISSION_DENIED` |
    /// | 404, 405 | `NOT_FOUND` |
    /// | 408, 504 | `DEADLINE_EXCEEDED` |
    /// | 409 | `ABORTED` |
    /// | 429 | `RESOURCE_EXHAUSTED` |
    /// | 501 | `UNIMPLEMENTED` |
    /// | 502, 503, 529 | `UNAVAILABLE` |
    /// | other 5xx | `INTERNAL` |
    /// | other | `FAILED_PRECONDITION` |
    ///
    /// ```
    /// use agentstream_wire::server::ApiError;
    /// assert_eq!(ApiError::gemini_status_for(429), "RESOURCE_EXHAUSTED");
    /// ```
    pub fn gemini_status_for(status: u16) -> &'static str {
        match status {
            400 | 413 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 | 405 => "NOT_FOUND",
            408 | 504 => "DEADLINE_EXCEEDED",
            409 => "ABORTED",
            429 => "RESOURCE_EXHAUSTED",
            501 => "UNIMPLEMENTED",
            502 | 503 | 529 => "UNAVAILABLE",
            500.. => "INTERNAL",
            _ => "FAILED_PRECONDITION",
        }
    }

    /// The response headers `api` sends with this error besides the
    /// server's own: Bedrock's `x-amzn-errortype` (the error's type, as
    /// the AWS SDKs read it); none for the others.
    ///
    /// ```
    /// use agentstream_wire::{server::ApiError, Api};
    /// let error = ApiError::new(429, "Too many requests");
    /// assert_eq!(error.headers_for(Api::Bedrock), [("x-amzn-errortype", "ThrottlingException")]);
    /// assert!(error.headers_for(Api::OpenAi).is_empty());
    /// ```
    pub fn headers_for(&self, api: Api) -> Vec<(&'static str, &str)> {
        match api {
            Api::Bedrock => alloc::vec![("x-amzn-errortype", self.type_for(api))],
            _ => Vec::new(),
        }
    }

    /// The error's `type` for `api` (Google: its `status`).
    pub fn type_for(&self, api: Api) -> &str {
        self.error_type
            .as_deref()
            .unwrap_or_else(|| Self::error_type_for(api, self.status))
    }

    /// The object inside the body (`error`), also sent as a mid-stream
    /// error event.
    pub fn error_object(&self, api: Api) -> Value {
        match api {
            Api::Anthropic => json!({
                "type": self.type_for(api),
                "message": self.message,
            }),
            Api::Bedrock => json!({ "message": self.message }),
            Api::Gemini => {
                let mut object = json!({
                    "code": self.status,
                    "message": self.message,
                    "status": self.type_for(api),
                });
                let seconds = self
                    .retry_after
                    .as_deref()
                    .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
                if let Some(seconds) = seconds {
                    object["details"] = json!([{
                        "@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": alloc::format!("{seconds}s"),
                    }]);
                }
                object
            }
            // OpenAI's shape: Chat Completions and Responses.
            _ => json!({
                "message": self.message,
                "type": self.type_for(api),
                "param": self.param,
                "code": self.code,
            }),
        }
    }

    /// The whole error body as `api` sends it.
    ///
    /// ```
    /// use agentstream_wire::{server::ApiError, Api};
    /// use serde_json::json;
    ///
    /// let error = ApiError::new(400, "missing messages").with_param("messages");
    /// assert_eq!(
    ///     error.body(Api::OpenAi),
    ///     json!({"error": {"message": "missing messages", "type": "invalid_request_error",
    ///                      "param": "messages", "code": null}})
    /// );
    /// assert_eq!(
    ///     error.body(Api::Anthropic),
    ///     json!({"type": "error", "error": {"type": "invalid_request_error",
    ///                                       "message": "missing messages"}})
    /// );
    /// ```
    pub fn body(&self, api: Api) -> Value {
        if let Some(body) = &self.body {
            return body.clone();
        }
        match api {
            Api::Anthropic => json!({ "type": "error", "error": self.error_object(api) }),
            Api::Bedrock => self.error_object(api),
            _ => json!({ "error": self.error_object(api) }),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}: {}", self.status, self.message)
    }
}

impl core::error::Error for ApiError {}
