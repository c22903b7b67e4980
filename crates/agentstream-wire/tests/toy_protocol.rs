//! "Adding a provider" (`docs/design.md`) checked by doing it: a toy
//! fifth protocol written in this test along the document's steps, with
//! the crate's public API only, then run through the call path every
//! provider takes (`EndpointModel` over a `Host`), whose host answers by
//! running the toy's server half on a `ScriptedModel` turn.
//!
//! The toy's wire: the body is `{"model", "stream", "context"` (Pi's
//! JSON)`, "max_tokens"?, "temperature"?}` posted to `/v1/toy`; the
//! stream is one SSE event per step (`block`, `delta`, `end`, `call`,
//! `done`, `error`), each carrying compact JSON.

use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::message::transform::{transform_messages, TargetModel};
use agentstream::message::{
    assistant, text, thinking, tool_call, tool_result, user, AssistantMessage, ContentBlock,
    Context, StopReason, TextContent, ThinkingContent, Tool, ToolCall, Usage,
};
use agentstream::model::{
    BlockShape, DoneReason, ErrorCause, ErrorReason, Model, ModelEvent, PartialBuilder,
    ProviderFailure, ScriptedModel, ScriptedTurn, StreamOptions,
};
use agentstream::rt::Timer;
use agentstream_wire::config::{BasePath, Call, EndpointConfig, Protocol};
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
use agentstream_wire::limits::Limits;
use agentstream_wire::model::EndpointModel;
use agentstream_wire::pricing::Pricing;
use agentstream_wire::request::RequestError;
use agentstream_wire::server::{ApiError, Blocks, DecodedRequest, Events, Kind, Wire};
use agentstream_wire::sse::{SseEvent, SseProjector};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

/// The `api` the toy's messages record.
const TOY_API: &str = "toy-protocol";

// Step 1: the body writer, reading the one borrowed `Call`.

/// The toy's option field names: its `FIELDS` table.
const MAX_TOKENS: &str = "max_tokens";
const TEMPERATURE: &str = "temperature";

/// The body of `call` for `context`: the history rewritten for the
/// target model (other models' thinking and failed turns), checked, and
/// sent as Pi's JSON.
fn build_request(context: &Context, call: &Call<'_>) -> Result<Value, RequestError> {
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

// Step 2: the projector, the SSE payloads to `ModelEvent`s over the
// public `SseProjector` trait (the crate's `Frame` and its macros are
// crate-private, so the lifecycle is written here by hand).

/// The toy's projector.
#[derive(Debug)]
struct ToyProjector {
    builder: PartialBuilder,
    started: bool,
    finished: bool,
    limits: Limits,
    pricing: Option<Pricing>,
}

impl ToyProjector {
    fn start(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::Start {
                partial: self.builder.snapshot(),
            });
        }
    }

    fn protocol_error(&mut self, text: &str, out: &mut Vec<ModelEvent>) {
        let message = format!("toy protocol: {text}");
        self.terminate(ErrorReason::Error, message, Some(ErrorCause::Protocol), out);
    }

    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), String> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| e.to_string())?;
        let index = data["index"].as_u64().map(|i| i as usize);
        self.start(out);
        match event.event_type() {
            "block" => {
                if self.builder.content_len() >= self.limits.max_content_blocks {
                    return Err("too many blocks".into());
                }
                let content_index = match data["kind"].as_str() {
                    Some("text") => self.builder.start_text(TextContent::default()),
                    Some("thinking") => self.builder.start_thinking(ThinkingContent::default()),
                    Some("tool_call") => self.builder.start_tool_call(ToolCall {
                        id: data["id"].as_str().unwrap_or_default().into(),
                        name: data["name"].as_str().unwrap_or_default().into(),
                        ..ToolCall::default()
                    }),
                    _ => return Err("a block of no known kind".into()),
                };
                let partial = self.builder.snapshot();
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
                if !self.builder.append(content_index, Arc::clone(&delta)) {
                    return Err("a delta of no open block".into());
                }
                let partial = self.builder.snapshot();
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
                let block = self.builder.snapshot().content_block(content_index);
                let (content, is_text) = match &block {
                    Some(ContentBlock::Text(t)) => (t.text.clone(), true),
                    Some(ContentBlock::Thinking(t)) => (t.thinking.clone(), false),
                    _ => return Err("an end of no text or thinking block".into()),
                };
                if let Some(block) = block {
                    self.builder.complete(content_index, block);
                }
                let partial = self.builder.snapshot();
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
                    self.builder.snapshot().content_block(content_index)
                else {
                    return Err("a call of no tool call block".into());
                };
                let arguments = match &data["arguments"] {
                    Value::Object(arguments) => arguments.clone(),
                    _ => return Err("arguments that are no object".into()),
                };
                let tool_call = Arc::new(ToolCall {
                    arguments,
                    raw_arguments: None,
                    ..call
                });
                self.builder
                    .complete_tool_call(content_index, Arc::clone(&tool_call));
                out.push(ModelEvent::ToolCallEnd {
                    content_index,
                    tool_call,
                    partial: self.builder.snapshot(),
                });
            }
            "done" => {
                let reason = match data["reason"].as_str() {
                    Some("stop") => DoneReason::Stop,
                    Some("length") => DoneReason::Length,
                    Some("toolUse") => DoneReason::ToolUse,
                    _ => return Err("a done of no known reason".into()),
                };
                let mut message = self.builder.snapshot().to_message();
                message.stop_reason = reason.stop_reason();
                message.usage = serde_json::from_value::<Usage>(data["usage"].clone())
                    .map_err(|e| e.to_string())?;
                if let Some(pricing) = &self.pricing {
                    pricing.apply(&mut message.usage);
                }
                self.finished = true;
                out.push(ModelEvent::done(reason, message));
            }
            "error" => {
                let text = data["message"]
                    .as_str()
                    .unwrap_or("the provider failed")
                    .to_owned();
                let code = data["code"].as_str().map(str::to_owned);
                let cause = ErrorCause::Provider(ProviderFailure::new(code));
                self.terminate(ErrorReason::Error, text, Some(cause), out);
            }
            other => return Err(format!("an event of no known type ({other})")),
        }
        Ok(())
    }
}

impl SseProjector for ToyProjector {
    fn for_model(model_id: String, provider: String) -> Self {
        let header = AssistantMessage {
            api: TOY_API.into(),
            provider,
            model: model_id,
            ..assistant([], StopReason::Stop)
        };
        Self::from_header(header)
    }

    fn from_header(header: AssistantMessage) -> Self {
        Self {
            builder: PartialBuilder::new(header),
            started: false,
            finished: false,
            limits: Limits::DEFAULT,
            pricing: None,
        }
    }

    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        if self.finished {
            return;
        }
        if let Err(text) = self.on_event(event, out) {
            self.protocol_error(&text, out);
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        self.start(out);
        self.protocol_error("the stream ended before `done`", out);
    }

    fn terminate(
        &mut self,
        reason: ErrorReason,
        message: String,
        cause: Option<ErrorCause>,
        out: &mut Vec<ModelEvent>,
    ) {
        if self.finished {
            return;
        }
        self.start(out);
        self.finished = true;
        let error = self.builder.to_error_message(reason.stop_reason(), message);
        out.push(ModelEvent::Error {
            reason,
            error: Arc::new(error),
            cause: cause.into(),
        });
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    fn set_pricing(&mut self, pricing: Option<Pricing>) {
        self.pricing = pricing;
    }

    fn set_timestamp(&mut self, timestamp_ms: u64) {
        if !self.started {
            let mut header = self.builder.snapshot().to_message();
            header.timestamp = timestamp_ms;
            self.builder = PartialBuilder::new(header);
        }
    }
}

// Step 3: the protocol struct.

/// The toy protocol's own settings: none.
#[derive(Debug, Clone, Default)]
struct Toy;

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
type ToyConfig = EndpointConfig<Toy>;

// Step 4: the server half: the decoder and the stream encoder.

/// The body the body writer wrote, read back. (`ApiError` is the
/// decoders' error, as in the crate's own protocols.)
#[allow(clippy::result_large_err)]
fn decode_body(body: &[u8]) -> Result<DecodedRequest, ApiError> {
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
struct StreamEncoder {
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

    fn encode_into(&mut self, step: Wire<'_>, out: &mut Events) {
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

    fn error_into(&mut self, error: &ApiError, out: &mut Events) {
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

// The call path: a host answering with the toy server half.

/// The clock every message of these tests is stamped with.
const NOW_MS: u64 = 1_700_000_000_000;

/// A host that decodes each request with the toy decoder, plays the
/// scripted model on it and answers with the toy encoder's stream, in
/// pieces of `piece` bytes.
struct ToyHost {
    model: ScriptedModel,
    requests: Mutex<Vec<DecodedRequest>>,
    piece: usize,
}

impl ToyHost {
    fn new(model: ScriptedModel, piece: usize) -> Self {
        Self {
            model,
            requests: Mutex::new(Vec::new()),
            piece,
        }
    }
}

/// A body handed over in pieces.
struct Pieces(VecDeque<Vec<u8>>);

impl ResponseBody for Pieces {
    type Chunk = Vec<u8>;

    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, TransportError>> + Send {
        std::future::ready(Ok(self.0.pop_front()))
    }
}

impl Host for ToyHost {
    type Body = Pieces;
    type Timer = Self;

    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        Ok(Self::new(ScriptedModel::new(Vec::<ScriptedTurn>::new()), 1))
    }

    fn send(
        &self,
        request: PreparedRequest,
        _connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, Pieces), TransportError>> + Send {
        let piece = self.piece.max(1);
        let answer = decode_body(&request.body).map(|decoded| {
            let stream = self.model.stream(&decoded.context, decoded.options.clone());
            self.requests.lock().unwrap().push(decoded);
            stream
        });
        async move {
            let (status, bytes) = match answer {
                Ok(mut stream) => {
                    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
                    let mut out = Events::default();
                    let mut encoder = StreamEncoder::default();
                    for event in &events {
                        encoder.encode_into(Wire::from(event), &mut out);
                    }
                    (200, out.take(out.len()).to_vec())
                }
                Err(error) => (error.status, error.message.into_bytes()),
            };
            let pieces = bytes.chunks(piece).map(<[u8]>::to_vec).collect();
            Ok((ResponseHead::new(status), Pieces(pieces)))
        }
    }

    fn timer(&self) -> &Self {
        self
    }
}

/// Sleeps that never end, a clock that stands still.
impl Timer for ToyHost {
    type Sleep = std::future::Pending<()>;

    fn sleep(&self, _duration: Duration) -> Self::Sleep {
        std::future::pending()
    }

    fn now_unix_ms(&self) -> u64 {
        NOW_MS
    }
}

type ToyModel = EndpointModel<ToyConfig, ToyHost>;

fn toy_model(turns: Vec<ScriptedTurn>, piece: usize) -> ToyModel {
    let config = ToyConfig::with_protocol("http://toy.test", "toy-1", Toy)
        .with_api_key("k")
        .with_defaults(StreamOptions::default().with_max_tokens(256));
    ToyModel::with_host(config, ToyHost::new(ScriptedModel::new(turns), piece))
}

/// A history with an earlier turn of the toy model (a tool call and its
/// result), which the body writer sends as it is.
fn context() -> Context {
    let earlier = AssistantMessage {
        api: TOY_API.into(),
        provider: "toy".into(),
        model: "toy-1".into(),
        ..assistant(
            [
                thinking("Look first."),
                tool_call("call_0", "ls", json!({"path": "/"})),
            ],
            StopReason::ToolUse,
        )
    };
    let mut context = Context::from_messages([
        user("what is in /?").into(),
        earlier.into(),
        tool_result("call_0", "ls", "etc home", false).into(),
        user("list the files").into(),
    ]);
    context.system_prompt = Some("You are terse.".into());
    context.tools = Some(vec![Tool {
        name: "ls".into(),
        description: "Lists files.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        extra: Map::new(),
    }]);
    context
}

/// The scripted answer: thinking, text and a tool call, as the toy
/// provider's message records it.
fn scripted_answer() -> AssistantMessage {
    AssistantMessage {
        api: TOY_API.into(),
        provider: "toy".into(),
        model: "toy-1".into(),
        timestamp: NOW_MS,
        usage: Usage {
            input: 12,
            output: 34,
            total_tokens: Some(46),
            ..Usage::default()
        },
        ..assistant(
            [
                thinking("The user wants a listing."),
                text("Listing \".\" now…"),
                tool_call("call_1", "ls", json!({"path": ".", "all": true})),
            ],
            StopReason::ToolUse,
        )
    }
}

#[test]
fn the_toy_request_and_answer_round_trip_through_the_call_path() {
    for (piece, full) in [(1, true), (7, true), (4096, true), (5, false)] {
        let turn = ScriptedTurn::message(scripted_answer()).chunked(NonZeroUsize::new(3).unwrap());
        let turn = if full { turn.full_sequence() } else { turn };
        let model = toy_model(vec![turn], piece);
        let options = StreamOptions::default().with_temperature(0.5);
        let mut stream = model.stream(&context(), options);
        let events: Vec<ModelEvent> = futures_executor::block_on(stream.by_ref().collect());
        let message = futures_executor::block_on(stream.result());

        assert_eq!(
            message,
            scripted_answer(),
            "pieces of {piece} bytes, full: {full}"
        );
        let problems = agentstream::model::validate_events(&events);
        assert!(problems.is_empty(), "{problems:?}");
        let mut kinds: Vec<&str> = events.iter().map(ModelEvent::type_name).collect();
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                "start",
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );

        let requests = model.host().requests.lock().unwrap();
        let [request] = requests.as_slice() else {
            panic!("one request, got {}", requests.len())
        };
        assert_eq!(request.context, context());
        assert_eq!((request.model.as_str(), request.stream), ("toy-1", true));
        // The call's temperature over the configuration's token limit.
        assert_eq!(
            (request.options.max_tokens, request.options.temperature),
            (Some(256), Some(0.5))
        );
    }
}

#[test]
fn a_scripted_failure_arrives_as_an_error_with_its_typed_cause() {
    let failure = ScriptedTurn::failure(ErrorReason::Error, "overloaded")
        .with_partial_text("Half an ans")
        .full_sequence();
    let model = toy_model(vec![failure], 5);
    let mut stream = model.stream(&context(), StreamOptions::default());
    let events: Vec<ModelEvent> = futures_executor::block_on(stream.by_ref().collect());

    let last = events.last().expect("a terminal event");
    assert_eq!(last.type_name(), "error");
    let Some(ErrorCause::Provider(provider)) = last.error_cause() else {
        panic!("a provider failure, got {:?}", last.error_cause())
    };
    assert_eq!(provider.code.as_deref(), Some("model_failure"));
    let message = futures_executor::block_on(stream.result());
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("overloaded"));
    // What streamed before the failure is kept.
    assert_eq!(message.text(), "Half an ans");
}

#[test]
fn a_request_the_body_writer_refuses_ends_in_invalid_request() {
    let mut context = context();
    context
        .messages
        .push(assistant([tool_call("c9", "ls", json!({}))], StopReason::ToolUse).into());
    let model = toy_model(vec![ScriptedTurn::message(scripted_answer())], 64);
    let mut stream = model.stream(&context, StreamOptions::default());
    let events: Vec<ModelEvent> = futures_executor::block_on(stream.by_ref().collect());
    let last = events.last().expect("a terminal event");
    assert!(
        matches!(last.error_cause(), Some(ErrorCause::InvalidRequest)),
        "{last:?}"
    );
    assert!(
        model.host().requests.lock().unwrap().is_empty(),
        "nothing was sent"
    );
}

#[test]
fn a_stream_cut_before_done_is_a_protocol_violation() {
    let mut projector = ToyProjector::for_model("toy-1".into(), "toy".into());
    let mut out = Vec::new();
    projector.push_event(
        &SseEvent::message(r#"{"index":0,"kind":"text"}"#).with_event("block"),
        &mut out,
    );
    projector.finish(&mut out);
    assert!(matches!(
        out.last().and_then(ModelEvent::error_cause),
        Some(ErrorCause::Protocol)
    ));
    assert!(projector.is_finished());
}
