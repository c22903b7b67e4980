//! Step 4 of "Adding a provider": the toy's server half, the request
//! decoder (what the body writer writes, read back) and the stream
//! encoder (model events as the SSE the projector reads), over the
//! crate's public `server` pieces.

use agentstream::message::Context;
use agentstream::model::{BlockShape, StreamOptions};
use agentstream_wire::server::{ApiError, Blocks, DecodedRequest, Events, Kind, Wire};
use serde_json::{json, Value};

use super::{MAX_TOKENS, TEMPERATURE};

/// The body the body writer wrote, read back. (`ApiError` is the
/// decoders' error, as in the crate's own protocols.)
#[allow(clippy::result_large_err)]
pub fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
    let invalid = |text: String| ApiError::new(400, text).with_type("invalid_request_error");
    let value: Value = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
    let context =
        Context::from_value(value["context"].clone()).map_err(|e| invalid(e.to_string()))?;
    let mut options = StreamOptions::default();
    options.max_tokens = value[MAX_TOKENS].as_u64();
    options.temperature = value[TEMPERATURE].as_f64();
    let model = value["model"].as_str().unwrap_or_default().to_owned();
    let stream = value["stream"].as_bool().unwrap_or(false);
    Ok(DecodedRequest::new(context, model, stream, options))
}

/// Model events written as the toy's SSE. It takes the short trace (a
/// block's first delta opens it, no block ends: what `ScriptedModel`
/// plays by default) as well as the full sequence, and always writes the
/// wire's `block` and `end` events.
#[derive(Debug, Default)]
pub struct StreamEncoder {
    /// Per block index: its kind while it is open and whether any delta
    /// of it was written.
    open: Vec<Option<(Kind, bool)>>,
}

impl StreamEncoder {
    /// Writes the `block` event of block `index` unless it is open.
    fn open(&mut self, kind: Kind, index: usize, blocks: Blocks<'_>, out: &mut Events) {
        if self.open.len() <= index {
            self.open.resize(index + 1, None);
        }
        if self.open[index].is_some() {
            return;
        }
        // One block at a time: the one before ends here (the short trace
        // has no block ends).
        self.end_open_blocks(out);
        self.open[index] = Some((kind, false));
        let mut block = json!({"index": index, "kind": match kind {
            Kind::Text => "text",
            Kind::Thinking => "thinking",
            Kind::ToolCall => "tool_call",
        }});
        if let Some(BlockShape::ToolCall(call)) = blocks.shape(index) {
            block["id"] = call.id.as_str().into();
            block["name"] = call.name.as_str().into();
        }
        out.json(Some("block"), &block);
    }

    /// Writes a delta of the open block `index`.
    fn delta(&mut self, index: usize, text: &str, out: &mut Events) {
        if let Some(Some((_, streamed))) = self.open.get_mut(index) {
            *streamed = true;
        }
        out.json(Some("delta"), &json!({"index": index, "text": text}));
    }

    /// Writes the `end` of every open text or thinking block.
    fn end_open_blocks(&mut self, out: &mut Events) {
        for (index, open) in self.open.iter_mut().enumerate() {
            if let Some((Kind::Text | Kind::Thinking, _)) = open.take() {
                out.json(Some("end"), &json!({"index": index}));
            }
        }
    }

    pub fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
        match step {
            Wire::Start(_) => {}
            Wire::BlockStart {
                kind,
                index,
                blocks,
            } => self.open(kind, index, blocks, out),
            Wire::Delta {
                kind,
                index,
                delta,
                blocks,
            } => {
                self.open(kind, index, blocks, out);
                self.delta(index, delta, out);
            }
            Wire::BlockEnd { index, .. } => {
                if self.open.get_mut(index).and_then(Option::take).is_some() {
                    out.json(Some("end"), &json!({"index": index}));
                }
            }
            // The arguments stream as `delta`s (one, if none streamed),
            // then travel whole.
            Wire::ToolCallEnd {
                index,
                call,
                blocks,
            } => {
                self.open(Kind::ToolCall, index, blocks, out);
                if let Some(Some((_, false))) = self.open.get(index) {
                    self.delta(
                        index,
                        &Value::Object(call.arguments.clone()).to_string(),
                        out,
                    );
                }
                self.open[index] = None;
                out.json(
                    Some("call"),
                    &json!({"index": index, "arguments": call.arguments}),
                );
            }
            Wire::Done { reason, message } => {
                self.end_open_blocks(out);
                out.json(
                    Some("done"),
                    &json!({"reason": reason.as_str(), "usage": message.usage}),
                );
            }
            Wire::Error(message) => self.error_into(&ApiError::model_failure(message), out),
        }
    }

    pub fn error_into(&mut self, error: &ApiError, out: &mut Events) {
        let code = error
            .code
            .as_deref()
            .or(error.error_type.as_deref())
            .unwrap_or("model_failure");
        out.json(
            Some("error"),
            &json!({"message": error.message, "code": code}),
        );
    }
}
