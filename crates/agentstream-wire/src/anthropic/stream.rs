//! [`AnthropicStream`]: the SSE stream over the event projector.

use super::projector::AnthropicProjector;
use crate::sse::SseStream;

/// One streaming Messages response, bytes in,
/// [`ModelEvent`](agentstream::model::ModelEvent)s out: the
/// [`SseStream`] over the [`AnthropicProjector`] (see [`SseStream`] for the
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
pub type AnthropicStream = SseStream<AnthropicProjector>;
