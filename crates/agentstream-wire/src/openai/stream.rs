//! [`OpenAiStream`]: the SSE stream over the chunk projector, and how the
//! projector reads SSE events.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use agentstream::message::AssistantMessage;
use agentstream::model::{ErrorCause, ErrorReason, ModelEvent};

use super::projector::ChunkProjector;
use crate::cause::Failure;
use crate::error_body::{error_text, BODY_QUOTE};
use crate::json::clip;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::sse::{SseEvent, SseProjector, SseStream};

/// One streaming Chat Completions response, bytes in, [`ModelEvent`]s out:
/// the [`SseStream`] over the [`ChunkProjector`] (see [`SseStream`] for
/// the rules and examples).
///
/// `event: error` SSE events are reported as errors with their data; other
/// named events (such as `ping`) are skipped.
pub type OpenAiStream = SseStream<ChunkProjector>;

impl SseProjector for ChunkProjector {
    fn for_model(model_id: String, provider: String) -> Self {
        ChunkProjector::new(model_id, provider)
    }

    fn from_header(header: AssistantMessage) -> Self {
        ChunkProjector::with_header(header)
    }

    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        match event.event_type() {
            "message" => self.push_data(&event.data, out),
            "error" => {
                let value = serde_json::from_str::<Value>(&event.data).ok();
                let message = match &value {
                    Some(value) => error_text(value.get("error").unwrap_or(value)),
                    None => clip(&event.data, BODY_QUOTE),
                };
                self.fail_with(Failure::in_payload(message, value.as_ref()), out);
            }
            _ => {}
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        ChunkProjector::finish(self, out);
    }

    fn terminate(
        &mut self,
        reason: ErrorReason,
        message: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        ChunkProjector::terminate(self, reason, message, cause, out);
    }

    fn is_finished(&self) -> bool {
        ChunkProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        ChunkProjector::set_limits(self, limits);
    }

    fn set_pricing(&mut self, pricing: Option<Pricing>) {
        ChunkProjector::set_pricing(self, pricing);
    }

    fn set_timestamp(&mut self, timestamp_ms: u64) {
        ChunkProjector::set_timestamp(self, timestamp_ms);
    }
}
