//! [`OpenAiStream`]: the SSE stream over the chunk projector, and how the
//! projector reads SSE events.

use alloc::vec::Vec;

use serde_json::Value;

use agentstream::model::ModelEvent;

use super::projector::OpenAiProjector;
use crate::cause::Failure;
use crate::error_body::{error_text, BODY_QUOTE};
use crate::json::clip;
use crate::sse::{SseEvent, SseStream};

/// One streaming Chat Completions response, bytes in, [`ModelEvent`]s out:
/// the [`SseStream`] over the [`OpenAiProjector`] (see [`SseStream`] for
/// the rules and examples).
///
/// `event: error` SSE events are reported as errors with their data; other
/// named events (such as `ping`) are skipped.
pub type OpenAiStream = SseStream<OpenAiProjector>;

impl OpenAiProjector {
    /// One SSE event: a `message`'s data is a chunk (or `[DONE]`), an
    /// `error` ends the stream with the provider's message; other named
    /// events are skipped.
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
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
}

crate::sse::sse_projector!(OpenAiProjector);
