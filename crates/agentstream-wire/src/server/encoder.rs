//! The protocol a stream is encoded in: the four stream encoders as one
//! value, for a server that picks the protocol per call.

use crate::server::{ApiError, Events, Wire};
use crate::{anthropic, google, openai, responses};

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
    Google(google::encode::StreamEncoder),
}

impl Encoder {
    /// Appends the SSE events of `step`.
    pub fn encode(&mut self, step: Wire<'_>, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.encode_into(step, out),
            Encoder::Anthropic(e) => e.encode_into(step, out),
            Encoder::Responses(e) => e.encode_into(step, out),
            Encoder::Google(e) => e.encode_into(step, out),
        }
    }

    /// Appends `error` as the protocol's mid-stream error event(s).
    pub fn error(&mut self, error: &ApiError, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.error_into(error, out),
            Encoder::Anthropic(e) => e.error_into(error, out),
            Encoder::Responses(e) => e.error_into(error, out),
            Encoder::Google(e) => e.error_into(error, out),
        }
    }
}
