//! What a call's route says (the protocol, the upstream path, Gemini's
//! model and streaming in the URL), and the request decoding it picks.

use std::borrow::Cow;
use std::sync::Arc;

use crate::google;
use agentstream_wire::server::{self, ApiError, DecodedRequest};
use agentstream_wire::Api;

/// What a call's route says: the protocol, the path the proxy sends it
/// on, and for Gemini the model and whether it streams (both are in the
/// URL, not the body).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) api: Api,
    /// The path and query sent upstream (`/v1/chat/completions`, …).
    pub(crate) upstream: Cow<'static, str>,
    /// Gemini: the model and whether it streams.
    pub(crate) google: Option<(Arc<str>, bool)>,
}

/// What decoding a request's body needs of its route: the protocol, and
/// for Gemini the model and whether it streams. Cheap to clone: the
/// request log keeps one with each body.
#[derive(Debug, Clone)]
pub(crate) struct Decoding {
    pub(crate) api: Api,
    google: Option<(Arc<str>, bool)>,
}

impl Decoding {
    /// Decodes `body` as a request of this route.
    pub(crate) fn decode(&self, body: &[u8]) -> Result<DecodedRequest, ApiError> {
        let google = self
            .google
            .as_ref()
            .map(|(model, stream)| (&**model, *stream));
        decode_as(self.api, google, body)
    }

    /// The bytes it holds besides itself (a Gemini model's name).
    pub(crate) fn held(&self) -> usize {
        self.google.as_ref().map_or(0, |(model, _)| model.len())
    }
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
            google: Some((model.into(), stream)),
        })
    }

    /// What decoding this route's bodies needs.
    pub(crate) fn decoding(&self) -> Decoding {
        Decoding {
            api: self.api,
            google: self.google.clone(),
        }
    }
}

/// Decodes a request body in the protocol of `target`.
pub(crate) fn decode(target: &Target, body: &[u8]) -> Result<DecodedRequest, ApiError> {
    let google = target
        .google
        .as_ref()
        .map(|(model, stream)| (&**model, *stream));
    decode_as(target.api, google, body)
}

fn decode_as(
    api: Api,
    google: Option<(&str, bool)>,
    body: &[u8],
) -> Result<DecodedRequest, ApiError> {
    server::decode_body(api, google, body)
}
