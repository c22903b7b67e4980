//! [`BedrockConfig`]: the [`EndpointConfig`] of an Amazon Bedrock
//! `ConverseStream` endpoint, and [`Bedrock`], what the protocol adds.
//!
//! The URL names the model: `{base}/model/{modelId}/converse-stream`, the
//! id one percent-encoded path segment (an inference-profile ARN keeps
//! its `:` and `/` encoded). The default base is the region's
//! `https://bedrock-runtime.{region}.amazonaws.com`; pi-ai takes the
//! region from its options, then `AWS_REGION`, then `AWS_DEFAULT_REGION`,
//! then `us-east-1` ([`resolve_region`] is that order; reading the
//! environment is the caller's, as this crate is `no_std`).
//!
//! Auth: [`auth_headers`] sends `Authorization: Bearer <key>` when a key
//! is configured (pi-ai's `AWS_BEARER_TOKEN_BEDROCK` path) and nothing
//! otherwise; SigV4 signing is not here.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::Context;
use serde_json::Value;

use super::projector::BedrockProjector;
use super::request::build_request;
pub use crate::config::EndpointConfig;
use crate::config::{BasePath, Call, Protocol};
use crate::endpoint::{api_url_at, push_path_segment};
use crate::request::RequestError;

/// The region pi-ai falls back to.
pub const DEFAULT_REGION: &str = "us-east-1";

/// The Bedrock runtime's base URL in `region`.
pub fn bedrock_base_url(region: &str) -> String {
    format!("https://bedrock-runtime.{region}.amazonaws.com")
}

/// The region as pi-ai resolves it: the option, `AWS_REGION`,
/// `AWS_DEFAULT_REGION` (the caller reads the two variables), then
/// [`DEFAULT_REGION`]; empty values are skipped.
pub fn resolve_region<'a>(
    option: Option<&'a str>,
    aws_region: Option<&'a str>,
    aws_default_region: Option<&'a str>,
) -> &'a str {
    [option, aws_region, aws_default_region]
        .into_iter()
        .flatten()
        .find(|region| !region.is_empty())
        .unwrap_or(DEFAULT_REGION)
}

/// The credential headers of a call: `Authorization: Bearer <key>` when
/// a key (a Bedrock API key) is configured, none otherwise. The one place
/// request auth is decided, where request signing will go.
pub fn auth_headers(api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
    if let Some(key) = api_key {
        headers.push(("authorization", format!("Bearer {key}")));
    }
}

/// A Bedrock `ConverseStream` endpoint: its [`EndpointConfig`] over
/// [`Bedrock`].
pub type BedrockConfig = EndpointConfig<Bedrock>;

/// What the `ConverseStream` protocol adds to an [`EndpointConfig`]:
/// nothing beyond the protocol itself today.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bedrock;

impl BedrockConfig {
    /// `model` in `region` (see [`resolve_region`]), provider
    /// `amazon-bedrock`, no key.
    pub fn new(model: impl Into<String>, region: &str) -> Self {
        Self::with_protocol(bedrock_base_url(region), model, Bedrock)
    }
}

impl Protocol for Bedrock {
    type Projector = BedrockProjector;
    const PROVIDER: &'static str = "amazon-bedrock";
    const ENDPOINT: &'static str = "/converse-stream";
    const BASE_PATH: BasePath = BasePath::Root;

    fn endpoint_url(&self, base_url: &str, model: &str) -> String {
        let mut endpoint = String::from("/model/");
        push_path_segment(&mut endpoint, model);
        endpoint.push_str(Self::ENDPOINT);
        api_url_at(base_url, Self::BASE_PATH, "", &endpoint, "")
    }

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        auth_headers(api_key, headers);
    }
}
