//! [`OpenAiStream`]: the SSE stream over the chunk projector.

use super::projector::OpenAiProjector;
use crate::sse::SseStream;

/// One streaming Chat Completions response, bytes in,
/// [`ModelEvent`](agentstream::model::ModelEvent)s out:
/// the [`SseStream`] over the [`OpenAiProjector`] (see [`SseStream`] for
/// the rules and examples).
///
/// `event: error` SSE events are reported as errors with their data; other
/// named events (such as `ping`) are skipped.
pub type OpenAiStream = SseStream<OpenAiProjector>;
