//! Azure OpenAI Responses (`POST {resource}/openai/v1/responses?api-version=v1`,
//! `stream: true`), pi-ai's `azure-openai-responses`: OpenAI's Responses
//! stream and body with Azure's request side.
//!
//! - [`config`]: [`AzureOpenAiResponses`], the protocol: the `api-key`
//!   header, the deployment name in the body's `model`, the base URL
//!   normalised to `/openai/v1` and the `api-version` query, no `store`;
//!   and the helpers a host uses to read pi-ai's environment
//!   ([`deployment_name`], [`resource_base_url`]).
//! - [`projector`]: [`AzureResponsesProjector`], the
//!   [`responses`](crate::responses) projection recording Pi's api id
//!   `azure-openai-responses`.
//!
//! The server half is the Responses one: the body is read by
//! [`responses::decode`](crate::responses) and the stream written by its
//! encoder.

pub mod config;
pub mod projector;

pub use config::{
    deployment_name, resource_base_url, AzureConfig, AzureOpenAiResponses, AZURE_API_VERSION,
};
pub use projector::{AzureResponsesProjector, AZURE_OPENAI_RESPONSES_API};
