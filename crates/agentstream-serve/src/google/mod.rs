//! Google Gemini (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`
//! and `:generateContent`, also under `/v1/`), sans IO: a request body to
//! a Pi [`Context`](agentstream::message::Context) and options, and model
//! events to the SSE chunks (or the one response) Gemini sends.
//!
//! # Requests
//!
//! `contents` is required (a list); the model is the URL's. Fields are
//! read in their camelCase names and, as protobuf JSON allows, their
//! snake_case ones. A `user` content's `text` and `inlineData` parts
//! become a user message; its `functionResponse` parts become tool
//! results (before that message), each paired with the call of the
//! preceding `model` content that has the same `id`, else with the first
//! unanswered call of the same name (Gemini pairs by name and position).
//! The result's text is `response.output` (or `response.error`, an error
//! result; another response is its JSON text), its images the response's
//! `parts`. A `model` content becomes an assistant turn: `text` parts text
//! blocks, `thought: true` parts thinking blocks, `functionCall` parts tool
//! calls with their `args`; a part's `thoughtSignature` is the block's
//! `textSignature`, `thinkingSignature` or the call's `thoughtSignature`.
//! A call's id is its `functionCall.id`, else `NAME_TURN_N` (TURN the
//! content's index, N counting the turn's calls from 1), so a recording
//! is deterministic. `systemInstruction` is the system prompt (its parts'
//! texts joined by a line break); `tools[].functionDeclarations` become Pi
//! tools (the schema `parametersJsonSchema`, else `parameters`); other
//! tools (`googleSearch`, `codeExecution`) are dropped. Options:
//! `generationConfig` and `toolConfig` (see
//! [`options_json`](crate::options_json)).
//!
//! # Streams
//!
//! One `data: {GenerateContentResponse}` per piece: `candidates[0]` with
//! `content: {"role": "model", "parts": [...]}` and `index: 0`, the
//! `modelVersion` and `responseId`. A text or thinking delta is a `text`
//! part (`thought: true` for thinking); a block that ends with a
//! signature sends it on an empty part of its kind; a tool call is one
//! `functionCall` part with its whole `args` (and its `thoughtSignature`)
//! when it ends. The last chunk has no parts, the `finishReason` (`STOP`,
//! also for tool calls, as Gemini sends it; `MAX_TOKENS` for a `length`
//! turn) and `usageMetadata` (see [`usage_json`]). A model error after
//! HTTP 200 is a chunk `{"error": {"code", "message", "status"}}`.

mod decode;
mod stream;

pub use decode::{decode_body, decode_request};
pub use stream::{generate_content_response, usage_json, StreamEncoder};

/// The model and whether it streams, of a Gemini route:
/// `/v1beta/models/{model}:streamGenerateContent` (streaming) or
/// `:generateContent`, under `/v1beta` or `/v1`; `None` for another path.
///
/// ```
/// use agentstream_serve::google::route;
/// assert_eq!(
///     route("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
///     Some(("gemini-2.5-flash", true))
/// );
/// assert_eq!(route("/v1/models/g:generateContent"), Some(("g", false)));
/// assert_eq!(route("/v1/models"), None);
/// ```
pub fn route(path: &str) -> Option<(&str, bool)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, method) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    match method {
        "streamGenerateContent" => Some((model, true)),
        "generateContent" => Some((model, false)),
        _ => None,
    }
}
