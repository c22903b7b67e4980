//! A served request's route, read from its path alone: which protocol a
//! call speaks and what its path says besides (Gemini's model and whether
//! it streams), and the protocol a server answers in where the path names
//! no call. A server routes with these, so it names no protocol itself.

use alloc::format;

use crate::server::{decode_body, ApiError, DecodedRequest};
use crate::{bedrock, gemini, Api};

/// What a call's path says: its protocol and, where the protocol's path
/// carries them (Gemini), the model and whether the call streams.
///
/// ```
/// use agentstream_wire::server::Route;
/// use agentstream_wire::Api;
///
/// let chat = Route::of_call("/v1/chat/completions").unwrap();
/// assert_eq!((chat.api, chat.in_path), (Api::OpenAi, None));
/// // The `/v1` and a trailing `/` may be left out or added.
/// assert_eq!(Route::of_call("/messages/").unwrap().api, Api::Anthropic);
/// let gemini = Route::of_call("/v1beta/models/g:streamGenerateContent").unwrap();
/// assert_eq!((gemini.api, gemini.in_path), (Api::Gemini, Some(("g", true))));
/// assert_eq!(Route::of_call("/v1/models"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route<'a> {
    /// The protocol the call speaks.
    pub api: Api,
    /// The model and whether the call streams, where the path says them
    /// (see [`gemini::decode::route`] and [`bedrock::route`]: Bedrock's
    /// model id as the path carries it, percent-encoded; decoding the
    /// body decodes it); `None` where the body does.
    pub in_path: Option<(&'a str, bool)>,
}

impl<'a> Route<'a> {
    /// The route of a call to `path` (without its query): a protocol's
    /// [`call_path`](Api::call_path), with or without its `/v1` and with
    /// any trailing `/`, a Gemini model method or a Bedrock model's
    /// `converse-stream` / `converse`. `None` for a path that names no
    /// call.
    pub fn of_call(path: &'a str) -> Option<Self> {
        // The fixed paths first: no Gemini or Bedrock path is one of them
        // (theirs carry a model), so the order decides nothing else.
        let route = without_version(path);
        if let Some(api) = Api::ALL
            .into_iter()
            .find(|api| api.call_path().map(without_version) == Some(route))
        {
            return Some(Self { api, in_path: None });
        }
        if let Some(in_path) = gemini::decode::route(path) {
            return Some(Self {
                api: Api::Gemini,
                in_path: Some(in_path),
            });
        }
        bedrock::route(path).map(|in_path| Self {
            api: Api::Bedrock,
            in_path: Some(in_path),
        })
    }

    /// Decodes a request body of this route (see [`decode_body`]).
    ///
    /// # Errors
    /// The protocol's 400 [`ApiError`].
    pub fn decode(&self, body: &[u8]) -> Result<DecodedRequest, ApiError> {
        decode_body(self.api, self.in_path, body)
    }
}

/// `path` without its leading `/v1` and its trailing `/`s.
fn without_version(path: &str) -> &str {
    path.strip_prefix("/v1")
        .unwrap_or(path)
        .trim_end_matches('/')
}

/// The path of a request without its `/v1` and trailing `/`s, as a
/// server compares it with its own routes (`/models`, …).
pub fn route_name(path: &str) -> &str {
    without_version(path)
}

/// The protocol a server answers a request in whose path names no call
/// (an unknown path, `GET /v1/models`): Gemini's under `/v1beta/`,
/// Bedrock's under `/model/`,
/// Anthropic's when the client sent one of Anthropic's headers
/// (`anthropic-version`, `x-api-key`; `has_header` is asked with the
/// lower-case name), OpenAI's otherwise.
///
/// ```
/// use agentstream_wire::server::answering_api;
/// use agentstream_wire::Api;
///
/// assert_eq!(answering_api("/v1/nope", |h| h == "x-api-key"), Api::Anthropic);
/// assert_eq!(answering_api("/v1beta/nope", |_| true), Api::Gemini);
/// assert_eq!(answering_api("/v1/nope", |_| false), Api::OpenAi);
/// ```
pub fn answering_api(path: &str, has_header: impl Fn(&str) -> bool) -> Api {
    if path.starts_with("/v1beta/") {
        Api::Gemini
    } else if path.starts_with("/model/") {
        Api::Bedrock
    } else if has_header("anthropic-version") || has_header("x-api-key") {
        Api::Anthropic
    } else {
        Api::OpenAi
    }
}

impl ApiError {
    /// The 404 of a request to `path` that no route takes, with the
    /// message `api`'s provider gives (`Not Found` at Anthropic,
    /// `Invalid URL (METHOD PATH)` elsewhere).
    pub fn not_found(api: Api, method: &str, path: &str) -> Self {
        let message = match api {
            Api::Anthropic => "Not Found".into(),
            _ => format!("Invalid URL ({method} {path})"),
        };
        Self::new(404, message)
    }

    /// The 405 of a request to `path` with a method its route does not
    /// take (the answer also lists the route's methods in `Allow`).
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        Self::new(405, format!("Invalid method for URL ({method} {path})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_call_path_routes_to_its_protocol_and_other_paths_to_none() {
        for api in Api::ALL {
            if let Some(path) = api.call_path().filter(|p| !p.starts_with("/v1/")) {
                // Azure's and Mistral's prefixed paths route as written.
                let route = Route::of_call(path).unwrap();
                assert_eq!((route.api, route.in_path), (api, None), "{path}");
                assert_eq!(Api::from_path(path), Some(api), "{path}");
            } else if let Some(path) = api.call_path() {
                for variant in [path.to_string(), path[3..].to_string(), format!("{path}/")] {
                    let route = Route::of_call(&variant).unwrap();
                    assert_eq!((route.api, route.in_path), (api, None), "{variant}");
                }
                // Another prefix than `/v1` is no call.
                assert_eq!(Route::of_call(&format!("/v2{}", &path[3..])), None);
            }
        }
        let route = Route::of_call("/model/a.b-v1%3A0/converse").unwrap();
        assert_eq!(
            (route.api, route.in_path),
            (Api::Bedrock, Some(("a.b-v1%3A0", false)))
        );
        let route = Route::of_call("/v1/models/m:generateContent").unwrap();
        assert_eq!(
            (route.api, route.in_path),
            (Api::Gemini, Some(("m", false)))
        );
        for other in [
            "/v1/models",
            "/v1/requests",
            "/",
            "",
            "/v1beta/models/m:count",
        ] {
            assert_eq!(Route::of_call(other), None, "{other}");
        }
    }

    #[test]
    fn route_errors_carry_each_providers_message() {
        let error = ApiError::not_found(Api::Anthropic, "GET", "/v1/x");
        assert_eq!((error.status, error.message.as_str()), (404, "Not Found"));
        let error = ApiError::not_found(Api::Gemini, "GET", "/v1/x");
        assert_eq!(error.message, "Invalid URL (GET /v1/x)");
        let error = ApiError::method_not_allowed("PUT", "/v1/messages");
        assert_eq!(error.status, 405);
        assert_eq!(error.message, "Invalid method for URL (PUT /v1/messages)");
    }
}
