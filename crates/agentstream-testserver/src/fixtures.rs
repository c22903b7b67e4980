//! The recorded OpenAI Responses and Gemini streams the mock server
//! plays: the fixtures of `agentstream-wire` (see their READMEs for the
//! sources), compiled in, as SSE bodies.

use agentstream_wire::sse::{encode_event, SseEvent};

/// The folder of the wire crate's fixtures.
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!("../../agentstream-wire/tests/fixtures/", $path))
    };
}

/// A Responses stream: reasoning with encrypted content, then the call
/// `get_weather` (`{"city":"Paris","country":"France","unit":"C"}`).
pub const RESPONSES_REASONING_TOOLS: &str =
    fixture!("openai-responses-sse/genai-reasoning-tools.sse");
/// A Responses stream: reasoning, then text in 31 deltas.
pub const RESPONSES_REASONING_TEXT: &str =
    fixture!("openai-responses-sse/genai-reasoning-text.sse");
/// A Responses stream: an `error` event (`insufficient_quota`) after
/// HTTP 200, then `response.failed` (one payload a line).
pub const RESPONSES_ERROR: &str = fixture!("openai-responses-sse/openai-error.chunks.jsonl");
/// A Responses stream whose item ids rotate (one payload a line).
pub const RESPONSES_ID_ROTATION: &str =
    fixture!("openai-responses-sse/copilot-id-rotation.chunks.jsonl");
/// A Gemini stream: thinking, text, then `get_weather` with a
/// `thoughtSignature` and the id `u959pftr`.
pub const GOOGLE_TOOL: &str = fixture!("google-sse/genai-tool.sse");
/// A Gemini stream: `thought: true` parts, then the answer.
pub const GOOGLE_THINKING: &str = fixture!("google-sse/genai-thinking.sse");
/// A Gemini stream: text in 3 payloads, with a signature on a text part
/// (one payload a line).
pub const GOOGLE_TEXT: &str = fixture!("google-sse/google-text.chunks.jsonl");
/// Gemini 3's streamed calls with `partialArgs` (one payload a line).
pub const GOOGLE_NO_ARGS_TOOL_CALL: &str =
    fixture!("google-sse/google-no-args-tool-call.chunks.jsonl");

/// The SSE body of one payload a line: `event: TYPE` (the payload's `type`)
/// with the line as `data`, as the Responses API sends them.
pub fn responses_sse(lines: &str) -> Vec<u8> {
    let mut out = String::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let kind = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["type"].as_str().map(String::from))
            .unwrap_or_else(|| "message".into());
        let event = SseEvent::message(line).with_event(kind);
        encode_event(&event, &mut out).expect("one-line payloads are valid SSE data");
    }
    out.into_bytes()
}

/// The SSE body of one payload a line, `data:` only, as Gemini sends them.
pub fn google_sse(lines: &str) -> Vec<u8> {
    let payloads: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    crate::sse_body(&payloads)
}

/// Streams one call of `model` on `context` to its end and checks the
/// events; returns them, the final message and the typed cause.
pub async fn play<M: agentstream::model::Model>(
    model: &M,
    context: &agentstream::message::Context,
) -> (
    Vec<agentstream::model::ModelEvent>,
    agentstream::message::AssistantMessage,
    Option<agentstream::model::ErrorCause>,
) {
    use futures_util::StreamExt;
    let mut stream = model.stream(context, agentstream::model::StreamOptions::default());
    let events: Vec<_> = stream.by_ref().collect().await;
    let findings = agentstream::model::validate_events(&events);
    assert!(findings.is_empty(), "protocol findings: {findings:?}");
    let message = stream.result().await;
    let last = events
        .last()
        .and_then(agentstream::model::ModelEvent::terminal_message);
    assert_eq!(
        last,
        Some(&message),
        "the result is the terminal event's message"
    );
    (events, message, stream.error_cause())
}
