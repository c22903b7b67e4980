//! The protocol a stream is encoded in: the four stream encoders as one
//! value, for a server that picks the protocol per call, and the other
//! choices such a server makes by protocol (the answer's id, the whole
//! answer, the request decoder), so it names no protocol itself.

use alloc::string::String;

use agentstream::message::AssistantMessage;
use agentstream::model::DoneReason;
use serde_json::Value;

use crate::server::{ApiError, DecodedRequest, Events, Wire};
use crate::{anthropic, bedrock, gemini, openai, responses, Api};

/// The protocol a stream is encoded in.
#[non_exhaustive]
pub enum Encoder {
    /// OpenAI Chat Completions.
    OpenAi(openai::encode::StreamEncoder),
    /// Anthropic Messages.
    Anthropic(anthropic::encode::StreamEncoder),
    /// OpenAI Responses.
    Responses(responses::encode::StreamEncoder),
    /// Google Gemini.
    Gemini(gemini::encode::StreamEncoder),
    /// Amazon Bedrock `ConverseStream` (binary event-stream messages).
    Bedrock(bedrock::encode::StreamEncoder),
}

impl Encoder {
    /// The stream encoder of `api` for the answer `id` of `model`
    /// (`created`, in Unix seconds, is the answer's time where the
    /// protocol carries one), one SSE event per delta.
    pub fn new(api: Api, id: String, model: String, created: u64) -> Self {
        match api {
            Api::OpenAi => Self::OpenAi(openai::encode::StreamEncoder::new(id, model, created)),
            Api::Mistral => {
                Self::OpenAi(openai::encode::StreamEncoder::new(id, model, created).for_mistral())
            }
            Api::Anthropic => Self::Anthropic(anthropic::encode::StreamEncoder::new(id, model)),
            Api::Responses | Api::Azure => {
                Self::Responses(responses::encode::StreamEncoder::new(id, model, created))
            }
            Api::Gemini => Self::Gemini(gemini::encode::StreamEncoder::new(id, model)),
            Api::Bedrock => Self::Bedrock(bedrock::encode::StreamEncoder::new()),
        }
    }

    /// Splits each delta into up to `chunks` SSE events.
    #[must_use]
    pub fn with_chunks(self, chunks: usize) -> Self {
        match self {
            Self::OpenAi(e) => Self::OpenAi(e.with_chunks(chunks)),
            Self::Anthropic(e) => Self::Anthropic(e.with_chunks(chunks)),
            Self::Responses(e) => Self::Responses(e.with_chunks(chunks)),
            Self::Gemini(e) => Self::Gemini(e.with_chunks(chunks)),
            Self::Bedrock(e) => Self::Bedrock(e.with_chunks(chunks)),
        }
    }

    /// Chat Completions: ends with the usage chunk (the request's
    /// `stream_options.include_usage`). The others always send usage.
    #[must_use]
    pub fn with_usage(self, include_usage: bool) -> Self {
        match self {
            Self::OpenAi(e) => Self::OpenAi(e.with_usage(include_usage)),
            other => other,
        }
    }

    /// Anthropic Messages: sends one `ping` after `message_start`. The
    /// others have no ping.
    #[must_use]
    pub fn with_ping(self, ping: bool) -> Self {
        match self {
            Self::Anthropic(e) => Self::Anthropic(e.with_ping(ping)),
            other => other,
        }
    }

    /// Whether the stream is binary (Bedrock's event-stream messages,
    /// `application/vnd.amazon.eventstream`) rather than SSE text.
    pub fn is_binary(&self) -> bool {
        matches!(self, Self::Bedrock(_))
    }

    /// Appends the SSE events of `step` (Bedrock: its binary messages).
    pub fn encode(&mut self, step: Wire<'_>, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.encode_into(step, out),
            Encoder::Anthropic(e) => e.encode_into(step, out),
            Encoder::Responses(e) => e.encode_into(step, out),
            Encoder::Gemini(e) => e.encode_into(step, out),
            Encoder::Bedrock(e) => e.encode_into(step, out),
        }
    }

    /// Appends `error` as the protocol's mid-stream error event(s).
    pub fn error(&mut self, error: &ApiError, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.error_into(error, out),
            Encoder::Anthropic(e) => e.error_into(error, out),
            Encoder::Responses(e) => e.error_into(error, out),
            Encoder::Gemini(e) => e.error_into(error, out),
            Encoder::Bedrock(e) => e.error_into(error, out),
        }
    }
}

/// The id of call `index`'s answer in `api`'s form: `chatcmpl-agentstream-N`,
/// `msg_agentstream_0000000N`, `resp_agentstream_N`, `agentstream-N`
/// (Gemini and Bedrock, whose answers carry no id of their own).
pub fn answer_id(api: Api, index: usize) -> String {
    // Written without the formatting machinery: this runs once a call.
    let (prefix, width): (&str, usize) = match api {
        Api::OpenAi | Api::Mistral => ("chatcmpl-agentstream-", 0),
        Api::Anthropic => ("msg_agentstream_", 8),
        Api::Responses | Api::Azure => ("resp_agentstream_", 0),
        Api::Gemini | Api::Bedrock => ("agentstream-", 0),
    };
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(index);
    let zeros = width.saturating_sub(digits.len());
    let mut id = String::with_capacity(prefix.len() + zeros + digits.len());
    id.push_str(prefix);
    id.extend(core::iter::repeat('0').take(zeros));
    id.push_str(digits);
    id
}

/// The whole answer (a call that did not stream) that ended well with
/// `reason`, in `api`'s form: a completion, a message, a Response, a
/// `GenerateContentResponse`, a `Converse` answer.
pub fn whole_answer(
    api: Api,
    id: &str,
    model: &str,
    created: u64,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Value {
    match api {
        Api::OpenAi | Api::Mistral => {
            openai::encode::completion(id, model, created, reason, message)
        }
        Api::Anthropic => anthropic::encode::message(id, model, reason, message),
        Api::Responses | Api::Azure => {
            responses::encode::response(id, model, created, reason, message)
        }
        Api::Gemini => gemini::encode::generate_content_response(id, model, reason, message),
        Api::Bedrock => bedrock::encode::converse_response(reason, message),
    }
}

/// Decodes a request body in `api`'s form; Gemini's and Bedrock's model
/// and whether the call streams come from their route (`gemini`, see
/// [`gemini::decode::route`] and [`bedrock::route`]; without it a
/// Gemini body is read as Chat Completions, a Bedrock one as streaming
/// with no model).
///
/// # Errors
/// The protocol's 400 [`ApiError`] (see each `decode_body`).
pub fn decode_body(
    api: Api,
    gemini: Option<(&str, bool)>,
    body: &[u8],
) -> Result<DecodedRequest, ApiError> {
    match (api, gemini) {
        (Api::Anthropic, _) => anthropic::decode::decode_body(body),
        (Api::Responses, _) => responses::decode::decode_body(body),
        (Api::Azure, _) => crate::azure::decode::decode_body(body),
        (Api::Gemini, Some((model, stream))) => gemini::decode::decode_body(body, model, stream),
        (Api::Mistral, _) => crate::mistral::decode::decode_body(body),
        (Api::Bedrock, in_path) => {
            let (model, stream) = in_path.unwrap_or(("", true));
            bedrock::decode::decode_body(body, model, stream)
        }
        _ => openai::decode::decode_body(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn answer_ids_have_each_protocols_form() {
        let ids = |index| Api::ALL.map(|api| (api, answer_id(api, index)));
        for (api, id) in ids(7) {
            let expected = match api {
                Api::OpenAi | Api::Mistral => "chatcmpl-agentstream-7",
                Api::Anthropic => "msg_agentstream_00000007",
                Api::Responses | Api::Azure => "resp_agentstream_7",
                Api::Gemini | Api::Bedrock => "agentstream-7",
            };
            assert_eq!(id, expected, "{api:?}");
        }
        // Past eight digits, Anthropic's number is written whole.
        assert_eq!(
            answer_id(Api::Anthropic, 123_456_789),
            "msg_agentstream_123456789"
        );
        assert_eq!(answer_id(Api::Anthropic, 0), "msg_agentstream_00000000");
        assert_eq!(
            answer_id(Api::OpenAi, usize::MAX),
            format!("chatcmpl-agentstream-{}", usize::MAX)
        );
    }
}
