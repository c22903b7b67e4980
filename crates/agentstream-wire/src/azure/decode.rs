//! The server half's request side: an Azure OpenAI Responses body (OpenAI
//! Responses' body, see [`responses::decode`](crate::responses::decode))
//! read back into a [`DecodedRequest`] whose history records Azure's api
//! id and provider.

use alloc::string::ToString;

use crate::server::error::{Api, ApiError};
use crate::server::DecodedRequest;

/// Decodes an Azure OpenAI Responses request body from its bytes.
///
/// ```
/// use agentstream_wire::azure::decode::decode_body;
///
/// let body = br#"{"model": "prod-gpt5", "stream": true, "input": [
///     {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}"#;
/// let request = decode_body(body).unwrap();
/// assert_eq!((request.model.as_str(), request.context.messages.len()), ("prod-gpt5", 1));
/// ```
///
/// # Errors
/// OpenAI Responses' 400 [`ApiError`]s.
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    crate::responses::decode::decode_body_as(body, Api::Azure, super::config::PROVIDER)
}

/// [`decode_body`] of a JSON value.
///
/// # Errors
/// As [`decode_body`].
pub fn decode_request(body: &serde_json::Value) -> Result<DecodedRequest, ApiError> {
    decode_body(body.to_string().as_bytes())
}
