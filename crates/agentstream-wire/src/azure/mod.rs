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
//! The server half (feature `server`) is the Responses one: `decode`
//! reads the body with Responses' reader (the history recorded as
//! Azure's), and the stream and whole answer are written by Responses'
//! encoder. `serve` answers Azure's path as the `AzureOpenAI` SDK calls
//! it: `POST /openai/v1/responses?api-version=…` (the base URL
//! `http://HOST/openai/v1`, or `http://HOST`).

pub mod config;
#[cfg(feature = "server")]
#[allow(clippy::result_large_err)] // see `server`
pub mod decode;
pub mod projector;

pub use config::{
    deployment_name, resource_base_url, AzureConfig, AzureOpenAiResponses, AZURE_API_VERSION,
};
pub use projector::{AzureResponsesProjector, AZURE_OPENAI_RESPONSES_API};
