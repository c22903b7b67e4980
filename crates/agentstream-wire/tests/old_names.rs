//! The names #36 renamed keep a `#[deprecated]` alias for one release:
//! each old name still names the renamed item.
#![allow(deprecated)]

use std::sync::Arc;

use agentstream_wire::{anthropic, gemini, model, openai, recording, Api};

#[test]
fn each_old_name_names_the_renamed_item() {
    assert_eq!(Api::Google, Api::Gemini);
    assert_eq!(Api::Google.name(), "google");
    assert_eq!(gemini::GOOGLE_API, gemini::GEMINI_API);
    assert_eq!(gemini::GOOGLE_VERTEX_API, gemini::GEMINI_VERTEX_API);
    assert_eq!(gemini::GoogleApi::Vertex, gemini::GeminiApi::Vertex);
    assert_eq!(gemini::GoogleAuth::Bearer, gemini::GeminiAuth::Bearer);
    let config: gemini::GoogleConfig = gemini::GeminiConfig::new("g");
    assert_eq!(config.model, "g");
    let _: openai::ChunkProjector = openai::OpenAiProjector::new("m", "p");
    let _: anthropic::EventProjector = anthropic::AnthropicProjector::new("m", "p");
    let endpoint: recording::TapEndpoint<openai::OpenAiConfig> = recording::RecordingEndpoint::new(
        openai::OpenAiConfig::new("http://h/v1", "m"),
        Arc::new(|_: &[u8]| {}),
    );
    assert_eq!(endpoint.inner().model, "m");
    let _: fn() -> Option<model::GoogleModel<agentstream_wire::replay::ReplayHost>> = || None;
}

#[cfg(feature = "server")]
#[test]
fn the_old_status_name_gives_the_same_status() {
    use agentstream_wire::server::ApiError;
    assert_eq!(
        ApiError::google_status_for(429),
        ApiError::gemini_status_for(429)
    );
    assert_eq!(ApiError::google_status_for(429), "RESOURCE_EXHAUSTED");
}
