//! What a call's route says (the protocol, the upstream path, Gemini's
//! model and streaming in the URL), and the request decoding it picks.

use std::borrow::Cow;

use crate::error::{Api, ApiError};
use crate::request::DecodedRequest;
use crate::{anthropic, google, openai, responses};

/// What a call's route says: the protocol, the path the proxy sends it
/// on, and for Gemini the model and whether it streams (both are in the
/// URL, not the body).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) api: Api,
    /// The path and query sent upstream (`/v1/chat/completions`, …).
    pub(crate) upstream: Cow<'static, str>,
    /// Gemini: the model and whether it streams.
    pub(crate) google: Option<(String, bool)>,
}

impl Target {
    pub(crate) fn new(api: Api, upstream: &'static str) -> Self {
        Self {
            api,
            upstream: Cow::Borrowed(upstream),
            google: None,
        }
    }

    /// The target of a Gemini route (see [`google::route`]), with its
    /// query sent upstream as it came.
    pub(crate) fn google(path: &str, query: Option<&str>) -> Option<Self> {
        let (model, stream) = google::route(path)?;
        let query = query.map(|q| format!("?{q}")).unwrap_or_default();
        Some(Self {
            api: Api::Google,
            upstream: Cow::Owned(format!("{path}{query}")),
            google: Some((model.to_owned(), stream)),
        })
    }
}

/// Decodes a request body in the protocol of `target`.
pub(crate) fn decode(target: &Target, body: &[u8]) -> Result<DecodedRequest, ApiError> {
    match (target.api, &target.google) {
        (Api::Anthropic, _) => anthropic::decode_body(body),
        (Api::Responses, _) => responses::decode_body(body),
        (Api::Google, Some((model, stream))) => google::decode_body(body, model, *stream),
        _ => openai::decode_body(body),
    }
}
