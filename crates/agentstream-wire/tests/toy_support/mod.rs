//! A toy fifth protocol, written along "Adding a provider"
//! (`docs/design.md`) with the wire crate's public API only: steps 1-3
//! here (the body writer, the projector, the protocol struct), step 4
//! (the server half) in [`server`]. `tests/toy_protocol.rs` runs it
//! through the call path every provider takes.
//!
//! The toy's wire: the body is `{"model", "stream", "context"` (Pi's
//! JSON)`, "max_tokens"?, "temperature"?}` posted to `/v1/toy`; the
//! stream is one SSE event per step (`block`, `delta`, `end`, `call`,
//! `done`, `error`), each carrying compact JSON.

pub mod server;

use std::sync::Arc;

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    AssistantMessage, ContentBlock, Context, TextContent, ThinkingContent, ToolCall, Usage,
};
use agentstream::model::{DoneReason, ErrorCause, ErrorReason, ModelEvent, ProviderFailure};
use agentstream_wire::config::{BasePath, Call, EndpointConfig, Protocol};
use agentstream_wire::request::RequestError;
use agentstream_wire::sse::{Frame, Projection, Projector, SseEvent};
use serde_json::{json, Map, Value};

pub const TOY_API: &str = "toy-protocol";

// Step 1: the body writer, reading the one borrowed `Call`.

/// The toy's option field names: its `FIELDS` table.
pub const MAX_TOKENS: &str = "max_tokens";
pub const TEMPERATURE: &str = "temperature";

/// The body of `call` for `context`: the history rewritten for the
/// target model (other models' thinking and failed turns), checked, and
/// sent as Pi's JSON.
pub fn build_request(context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
    let target = TargetModel::new(call.provider, TOY_API, call.model);
    let history = transform_messages(&context.messages, &target, str::to_owned);
    RequestError::check(history.iter().map(|m| &**m))?;
    let mut sent = json!(context);
    sent["messages"] = json!(history);
    let mut body = Map::new();
    body.insert("model".into(), call.model.into());
    body.insert("stream".into(), true.into());
    body.insert("context".into(), sent);
    if let Some(max) = call.options.max_tokens {
        body.insert(MAX_TOKENS.into(), max.into());
    }
    if let Some(temperature) = call.options.temperature {
        body.insert(TEMPERATURE.into(), temperature.into());
    }
    Ok(Value::Object(body))
}

// Step 2: the projector, the SSE payloads to `ModelEvent`s: a
// `Projection` over the `Frame` the shared `Projector` owns (the
// lifecycle, limits, prices and terminal verbs are the frame's).

/// The toy's projector.
pub type ToyProjector = Projector<ToyProjection>;

/// What the toy's events say beyond the frame: nothing to remember.
#[derive(Debug)]
pub struct ToyProjection;

impl ToyProjection {
    fn protocol_error(&mut self, frame: &mut Frame, text: &str, out: &mut Vec<ModelEvent>) {
        frame.start(out);
        let message = format!("toy protocol: {text}");
        let cause = Some(ErrorCause::Protocol);
        frame.terminate(ErrorReason::Error, message, cause, |_, _| {}, out);
    }

    fn read(
        &mut self,
        frame: &mut Frame,
        event: &SseEvent,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), String> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| e.to_string())?;
        let index = data["index"].as_u64().map(|i| i as usize);
        frame.start(out);
        match event.event_type() {
            "block" => {
                if frame.builder().content_len() >= frame.limits().max_content_blocks {
                    return Err("too many blocks".into());
                }
                let builder = frame.builder_mut();
                let content_index = match data["kind"].as_str() {
                    Some("text") => builder.start_text(TextContent::default()),
                    Some("thinking") => builder.start_thinking(ThinkingContent::default()),
                    Some("tool_call") => builder.start_tool_call(ToolCall {
                        id: data["id"].as_str().unwrap_or_default().into(),
                        name: data["name"].as_str().unwrap_or_default().into(),
                        ..ToolCall::default()
                    }),
                    _ => return Err("a block of no known kind".into()),
                };
                let partial = builder.snapshot();
                out.push(match data["kind"].as_str() {
                    Some("text") => ModelEvent::TextStart {
                        content_index,
                        partial,
                    },
                    Some("thinking") => ModelEvent::ThinkingStart {
                        content_index,
                        partial,
                    },
                    _ => ModelEvent::ToolCallStart {
                        content_index,
                        partial,
                    },
                });
            }
            "delta" => {
                let content_index = index.ok_or("a delta without index")?;
                let delta: Arc<str> = data["text"].as_str().ok_or("a delta without text")?.into();
                let builder = frame.builder_mut();
                if !builder.append(content_index, Arc::clone(&delta)) {
                    return Err("a delta of no open block".into());
                }
                let partial = builder.snapshot();
                out.push(match partial.content_block(content_index) {
                    Some(ContentBlock::Thinking(_)) => ModelEvent::ThinkingDelta {
                        content_index,
                        delta,
                        partial,
                    },
                    Some(ContentBlock::ToolCall(_)) => ModelEvent::ToolCallDelta {
                        content_index,
                        delta,
                        partial,
                    },
                    _ => ModelEvent::TextDelta {
                        content_index,
                        delta,
                        partial,
                    },
                });
            }
            "end" => {
                let content_index = index.ok_or("an end without index")?;
                let builder = frame.builder_mut();
                let block = builder.snapshot().content_block(content_index);
                let (content, is_text) = match &block {
                    Some(ContentBlock::Text(t)) => (t.text.clone(), true),
                    Some(ContentBlock::Thinking(t)) => (t.thinking.clone(), false),
                    _ => return Err("an end of no text or thinking block".into()),
                };
                if let Some(block) = block {
                    builder.complete(content_index, block);
                }
                let partial = builder.snapshot();
                out.push(if is_text {
                    ModelEvent::TextEnd {
                        content_index,
                        content,
                        partial,
                    }
                } else {
                    ModelEvent::ThinkingEnd {
                        content_index,
                        content,
                        partial,
                    }
                });
            }
            "call" => {
                let content_index = index.ok_or("a call without index")?;
                let Some(ContentBlock::ToolCall(call)) =
                    frame.builder().snapshot().content_block(content_index)
                else {
                    return Err("a call of no tool call block".into());
                };
                let arguments = match &data["arguments"] {
                    Value::Object(arguments) => arguments.clone(),
                    _ => return Err("arguments that are no object".into()),
                };
                let tool_call = ToolCall {
                    arguments,
                    raw_arguments: None,
                    ..call
                };
                frame.end_tool_call(content_index, tool_call, out);
            }
            "done" => {
                let reason = match data["reason"].as_str() {
                    Some("stop") => DoneReason::Stop,
                    Some("length") => DoneReason::Length,
                    Some("toolUse") => DoneReason::ToolUse,
                    _ => return Err("a done of no known reason".into()),
                };
                let mut message = frame.builder().snapshot().to_message();
                message.stop_reason = reason.stop_reason();
                message.usage = serde_json::from_value::<Usage>(data["usage"].clone())
                    .map_err(|e| e.to_string())?;
                frame.price(&mut message.usage);
                frame.end_done(reason, message, out);
            }
            "error" => {
                let text = data["message"]
                    .as_str()
                    .unwrap_or("the provider failed")
                    .to_owned();
                let code = data["code"].as_str().map(str::to_owned);
                let cause = Some(ErrorCause::Provider(ProviderFailure::new(code)));
                frame.terminate(ErrorReason::Error, text, cause, |_, _| {}, out);
            }
            other => return Err(format!("an event of no known type ({other})")),
        }
        Ok(())
    }
}

impl Projection for ToyProjection {
    const API: &'static str = TOY_API;

    fn for_header(_header: &AssistantMessage) -> Self {
        Self
    }

    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        if let Err(text) = self.read(frame, event, out) {
            self.protocol_error(frame, &text, out);
        }
    }

    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        self.protocol_error(frame, "the stream ended before `done`", out);
    }
}

// Step 3: the protocol struct.

/// The toy protocol's own settings: none.
#[derive(Debug, Clone, Default)]
pub struct Toy;

impl Protocol for Toy {
    type Projector = ToyProjector;
    const PROVIDER: &'static str = "toy";
    const ENDPOINT: &'static str = "/toy";
    const BASE_PATH: BasePath = BasePath::Root;

    fn body(&self, context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
        build_request(context, call)
    }

    fn headers(&self, api_key: Option<&str>, headers: &mut Vec<(&'static str, String)>) {
        if let Some(key) = api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
    }
}

/// The toy's configuration.
pub type ToyConfig = EndpointConfig<Toy>;
