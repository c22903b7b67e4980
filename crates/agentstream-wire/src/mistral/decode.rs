//! The server half's request side: a Mistral chat-completions body (what
//! [`request`](super::request) writes) read back into a
//! [`DecodedRequest`]: Chat Completions' reader with Mistral's
//! differences (an image URL given as a string, an assistant's
//! `thinking` items, a `[tool error] ` result as an error result).

use alloc::string::ToString;

use crate::openai::decode::{decode_body_in, ChatDialect};
use crate::server::error::{Api, ApiError};
use crate::server::DecodedRequest;

const MISTRAL: ChatDialect = ChatDialect {
    api: Api::Mistral,
    provider: "mistral",
    mistral: true,
};

/// Decodes a Mistral request body from its bytes.
///
/// ```
/// use agentstream_wire::mistral::decode::decode_body;
///
/// let body = br#"{"model": "magistral-medium-latest", "stream": true, "messages": [
///     {"role": "user", "content": "2+2?"},
///     {"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Sum."}]},
///         {"type": "text", "text": "4"}], "prefix": false},
///     {"role": "user", "content": "Sure?"}]}"#;
/// let request = decode_body(body).unwrap();
/// assert_eq!(request.context.messages.len(), 3);
/// ```
///
/// # Errors
/// Chat Completions' 400 [`ApiError`]s (see
/// [`openai::decode::decode_body`](crate::openai::decode::decode_body)).
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    decode_body_in(body, &MISTRAL)
}

/// [`decode_body`] of a JSON value.
///
/// # Errors
/// As [`decode_body`].
pub fn decode_request(body: &serde_json::Value) -> Result<DecodedRequest, ApiError> {
    decode_body(body.to_string().as_bytes())
}
