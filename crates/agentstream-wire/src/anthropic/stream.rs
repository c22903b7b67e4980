//! [`AnthropicStream`]: the SSE stream over the event projector, and how the
//! projector reads SSE events.

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::message::AssistantMessage;
use agentstream::model::{ErrorCause, ErrorReason, ModelEvent};

use super::projector::EventProjector;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::sse::{SseEvent, SseProjector, SseStream};

/// One streaming Messages response, bytes in, [`ModelEvent`]s out: the
/// [`SseStream`] over the [`EventProjector`] (see [`SseStream`] for the
/// rules and examples).
///
/// Each SSE event's data goes to the projector whatever its `event:` name
/// (the payload's `type` names it).
///
/// ```
/// use agentstream::model::{validate_events, ModelEvent};
/// use agentstream_wire::anthropic::AnthropicStream;
///
/// let body = concat!(
///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}}\n\n",
///     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
///     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
///     "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
///     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
///     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
/// );
/// let mut stream = AnthropicStream::new("claude-sonnet-4-5", "anthropic", None);
/// let mut events: Vec<ModelEvent> = Vec::new();
/// for piece in body.as_bytes().chunks(7) {
///     events.extend(stream.feed(piece));
/// }
/// events.extend(stream.finish_input());
/// assert!(validate_events(&events).is_empty());
/// let message = events.last().and_then(ModelEvent::terminal_message).unwrap();
/// assert_eq!((message.text().as_str(), message.usage.total_tokens), ("Hi", Some(4)));
/// ```
pub type AnthropicStream = SseStream<EventProjector>;

impl SseProjector for EventProjector {
    fn for_model(model_id: String, provider: String) -> Self {
        EventProjector::new(model_id, provider)
    }

    fn from_header(header: AssistantMessage) -> Self {
        EventProjector::with_header(header)
    }

    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.push_data(&event.data, out);
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        EventProjector::finish(self, out);
    }

    fn terminate(
        &mut self,
        reason: ErrorReason,
        message: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        EventProjector::terminate(self, reason, message, cause, out);
    }

    fn is_finished(&self) -> bool {
        EventProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        EventProjector::set_limits(self, limits);
    }

    fn set_pricing(&mut self, pricing: Option<Pricing>) {
        EventProjector::set_pricing(self, pricing);
    }

    fn set_timestamp(&mut self, timestamp_ms: u64) {
        EventProjector::set_timestamp(self, timestamp_ms);
    }
}
