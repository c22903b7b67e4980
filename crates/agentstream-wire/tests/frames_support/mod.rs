//! What the tests of a Bedrock call through a host share
//! (`bedrock_model.rs`, `bedrock_sigv4_call.rs`): a response body handed
//! over in given pieces, and a body of event-stream frames.

use core::future::{ready, Future};

use agentstream_wire::eventstream::encode_event;
use agentstream_wire::http::{ResponseBody, TransportError};

/// A response body handed over as the given pieces, in order.
pub struct Pieces(pub Vec<Vec<u8>>);

impl ResponseBody for Pieces {
    type Chunk = Vec<u8>;
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, TransportError>> + Send {
        ready(Ok((!self.0.is_empty()).then(|| self.0.remove(0))))
    }
}

/// The event-stream frames of `events`, one a pair (event type, JSON
/// payload), in order.
pub fn frames(events: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (event, payload) in events {
        encode_event(event, payload.as_bytes(), &mut body).unwrap();
    }
    body
}
