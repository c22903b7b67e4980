//! The payloads of a Gemini `streamGenerateContent` stream as the
//! [`GeminiProjection`](super::projector::GeminiProjection) reads them:
//! one `GenerateContentResponse` per SSE `data:`, its text borrowed, the
//! rare parts kept as `Value`s.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::Value;

use crate::json::{borrowed_str, lenient_count};

/// One `GenerateContentResponse`: the fields the projector reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    pub(super) candidates: Option<Vec<Candidate<'a>>>,
    #[serde(default)]
    pub(super) usage_metadata: Option<UsageMetadata>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) response_id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) prompt_feedback: Option<Value>,
    #[serde(default)]
    pub(super) error: Option<Value>,
}

/// The counts of `usageMetadata` the projector reads (the per-modality
/// details are skipped without being built).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageMetadata {
    #[serde(default, deserialize_with = "lenient_count")]
    pub(super) prompt_token_count: Option<u64>,
    #[serde(default, deserialize_with = "lenient_count")]
    pub(super) candidates_token_count: Option<u64>,
    #[serde(default, deserialize_with = "lenient_count")]
    pub(super) total_token_count: Option<u64>,
    #[serde(default, deserialize_with = "lenient_count")]
    pub(super) thoughts_token_count: Option<u64>,
    #[serde(default, deserialize_with = "lenient_count")]
    pub(super) cached_content_token_count: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate<'a> {
    #[serde(borrow, default)]
    pub(super) content: Option<Content<'a>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) finish_message: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Content<'a> {
    #[serde(borrow, default)]
    pub(super) parts: Option<Vec<Part<'a>>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Part<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) text: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) thought: Option<bool>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub(super) thought_signature: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) function_call: Option<FunctionCall>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FunctionCall {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) args: Option<Value>,
    #[serde(default)]
    pub(super) will_continue: Option<bool>,
    #[serde(default)]
    pub(super) partial_args: Option<Vec<PartialArg>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PartialArg {
    #[serde(default)]
    pub(super) json_path: Option<String>,
    #[serde(default)]
    pub(super) string_value: Option<String>,
    #[serde(default)]
    pub(super) number_value: Option<Value>,
    #[serde(default)]
    pub(super) bool_value: Option<bool>,
    #[serde(default)]
    pub(super) struct_value: Option<Value>,
    #[serde(default)]
    pub(super) list_value: Option<Value>,
    #[serde(default)]
    pub(super) will_continue: Option<bool>,
}
