//! A call's target: what its route says (read by the wire crate's
//! [`Route`]) with the path the proxy sends it on, and the request
//! decoding the route picks.

use std::borrow::Cow;
use std::sync::Arc;

use agentstream_wire::server::{self, ApiError, DecodedRequest, Route};
use agentstream_wire::Api;

/// What a call's route says: the protocol, the path the proxy sends it
/// on, and, where the path carries them (Gemini), the model and whether
/// the call streams.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) api: Api,
    /// The path and query sent upstream (`/v1/chat/completions`, …).
    pub(crate) upstream: Cow<'static, str>,
    /// The model and whether the call streams, where the path says them.
    in_path: Option<(Arc<str>, bool)>,
}

/// What decoding a request's body needs of its route: the protocol, and
/// the model and streaming its path says. Cheap to clone: the request
/// log keeps one with each body.
#[derive(Debug, Clone)]
pub(crate) struct Decoding {
    pub(crate) api: Api,
    in_path: Option<(Arc<str>, bool)>,
}

impl Decoding {
    /// Decodes `body` as a request of this route.
    pub(crate) fn decode(&self, body: &[u8]) -> Result<DecodedRequest, ApiError> {
        decode(self.api, self.in_path.as_ref(), body)
    }

    /// The bytes it holds besides itself (a model's name from the path).
    pub(crate) fn held(&self) -> usize {
        self.in_path.as_ref().map_or(0, |(model, _)| model.len())
    }
}

impl Target {
    /// The target of a call to `path` (with `query`) on `route`, going
    /// upstream on the path [`upstream_path`](crate::proxy::upstream_path)
    /// gives it.
    pub(crate) fn new(route: Route<'_>, path: &str, query: Option<&str>) -> Self {
        Self {
            api: route.api,
            upstream: crate::proxy::upstream_path(route.api, path, query),
            in_path: route.in_path.map(|(model, stream)| (model.into(), stream)),
        }
    }

    /// The target of a call to `path`, if a protocol's route takes it.
    #[cfg(test)]
    pub(crate) fn of(path: &str, query: Option<&str>) -> Option<Self> {
        Route::of_call(path).map(|route| Self::new(route, path, query))
    }

    /// What decoding this route's bodies needs.
    pub(crate) fn decoding(&self) -> Decoding {
        Decoding {
            api: self.api,
            in_path: self.in_path.clone(),
        }
    }

    /// Decodes a request body in the protocol of this route.
    pub(crate) fn decode(&self, body: &[u8]) -> Result<DecodedRequest, ApiError> {
        decode(self.api, self.in_path.as_ref(), body)
    }
}

/// Decodes `body` in `api`'s protocol, with what the path says.
fn decode(
    api: Api,
    in_path: Option<&(Arc<str>, bool)>,
    body: &[u8],
) -> Result<DecodedRequest, ApiError> {
    let in_path = in_path.map(|(model, stream)| (&**model, *stream));
    server::decode_body(api, in_path, body)
}
