//! "Adding a provider" (`docs/design.md`) checked by doing it: the toy
//! fifth protocol of `toy_support` (written along the document's steps
//! with the crate's public API only) run through the call path every
//! provider takes, `EndpointModel` over a `Host`, whose host answers each
//! request by running the toy's server half on a `ScriptedModel` turn.
//! The futures run on `futures_executor::block_on`, no runtime.

mod toy_support;

use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::Duration;

use agentstream::message::{
    assistant, text, thinking, tool_call, tool_result, user, AssistantMessage, Context, StopReason,
    Tool, Usage,
};
use agentstream::model::{
    DoneReason, ErrorCause, ErrorReason, Model, ModelEvent, ScriptedModel, ScriptedTurn,
    StreamOptions,
};
use agentstream::rt::Timer;
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
use agentstream_wire::model::EndpointModel;
use agentstream_wire::server::{message_steps, DecodedRequest, Events, Wire};
use agentstream_wire::sse::SseEvent;
use futures_util::StreamExt;
use serde_json::{json, Map};

use toy_support::server::{decode_body, StreamEncoder};
use toy_support::{Toy, ToyConfig, ToyProjector, TOY_API};

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
fn the_endpoint_model_s_clock_is_its_host_s() {
    use agentstream::model::Model;
    let model = toy_model(Vec::new(), 1);
    let clock = model
        .clock()
        .expect("an endpoint model has its host's clock");
    assert_eq!(clock.now_unix_ms(), NOW_MS);
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
    let mut projector = ToyProjector::new("toy-1", "toy");
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

/// What `agentstream serve` does for a scripted message: the steps of
/// the message (`message_steps`), not the model's events. The toy's
/// encoder writes the same bytes either way, for both traces.
#[test]
fn the_toy_encoder_writes_the_same_bytes_from_events_and_from_message_steps() {
    for full in [false, true] {
        let turn = ScriptedTurn::message(scripted_answer());
        let turn = if full { turn.full_sequence() } else { turn };
        let model = ScriptedModel::new([turn]);
        let events: Vec<ModelEvent> = futures_executor::block_on(
            model.stream(&context(), StreamOptions::default()).collect(),
        );
        let mut from_events = Events::default();
        let mut encoder = StreamEncoder::default();
        for event in &events {
            encoder.encode_into(Wire::from(event), &mut from_events);
        }
        let mut from_steps = Events::default();
        let mut encoder = StreamEncoder::default();
        let message = scripted_answer();
        message_steps(&message, DoneReason::ToolUse, full, |step| {
            encoder.encode_into(step, &mut from_steps);
        });
        let (events, steps) = (from_events.into_strings(), from_steps.into_strings());
        assert_eq!(events, steps, "full sequence: {full}");
        assert_eq!(steps.len(), 10, "{steps:?}");
    }
}
