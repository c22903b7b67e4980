//! Decode after encode, both directions, for each of the four protocols
//! (the `server` feature):
//!
//! - **requests**: a random Pi context written by the client's request
//!   builder and read back by the server's decoder gives back the context
//!   as far as the protocol carries it: the builder writes the decoded
//!   context as it wrote the original (the check of serve's
//!   `providers3` tests, here over random contexts), the user and
//!   tool-result texts and the tool calls' names and arguments come back
//!   as they were;
//! - **streams**: a random assistant message played as events, written by
//!   the server's stream encoder and read by the client's projector gives
//!   back the message (the expectations of serve's `roundtrip` tests for
//!   Chat Completions and Messages, of its `providers3` tests for
//!   Responses and Gemini; see `expected` for what does not round-trip).

use std::num::NonZeroUsize;

use agentstream::message::{
    assistant, image, tool_result, user, AssistantMessage, ContentBlock, Context, Message,
    StopReason, ThinkingContent, Tool, ToolCall, Usage, UserContent, UserMessage,
};
use agentstream::model::{Model, ModelEvent, ScriptedModel, ScriptedTurn, StreamOptions};
use agentstream_wire::server::{Encoder, Events, Wire};
use agentstream_wire::sse::SseProjector;
use agentstream_wire::{anthropic, azure, bedrock, gemini, mistral, openai, responses, Api};
use futures_util::StreamExt;
use proptest::prelude::*;

mod body_support;
mod server_support;
use body_support::request_body;
use serde_json::{json, Map, Value};
use server_support::{
    arguments, read_with, some_text, stop_reason, text_block, thinking_block, usage,
};

/// The four protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    OpenAi,
    Anthropic,
    Responses,
    Gemini,
    Azure,
    Mistral,
    Bedrock,
}

impl Protocol {
    fn api(self) -> Api {
        match self {
            Protocol::OpenAi => Api::OpenAi,
            Protocol::Anthropic => Api::Anthropic,
            Protocol::Responses => Api::Responses,
            Protocol::Gemini => Api::Gemini,
            Protocol::Azure => Api::Azure,
            Protocol::Mistral => Api::Mistral,
            Protocol::Bedrock => Api::Bedrock,
        }
    }

    /// Pi's api id, provider and a model name, for messages the builder
    /// replays as its own (signatures kept).
    fn target(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Protocol::OpenAi => (openai::OPENAI_COMPLETIONS_API, "openai", "gpt-test"),
            Protocol::Anthropic => (
                anthropic::ANTHROPIC_MESSAGES_API,
                "anthropic",
                "claude-test",
            ),
            Protocol::Responses => (responses::OPENAI_RESPONSES_API, "openai", "gpt-test"),
            Protocol::Gemini => (gemini::GEMINI_API, "google", "gemini-test"),
            Protocol::Azure => (
                azure::AZURE_OPENAI_RESPONSES_API,
                "azure-openai-responses",
                "gpt-test",
            ),
            Protocol::Mistral => (mistral::MISTRAL_API, "mistral", "mistral-test"),
            // A Claude model: Bedrock keeps thinking signatures for Claude only.
            Protocol::Bedrock => (
                bedrock::BEDROCK_API,
                "amazon-bedrock",
                "anthropic.claude-test",
            ),
        }
    }
}

fn call_block(id: String, name: String, arguments: Map<String, Value>) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id,
        name,
        arguments,
        ..ToolCall::default()
    })
}

fn base64() -> impl Strategy<Value = String> {
    "[A-Za-z0-9+/]{4,24}".prop_map(|s| {
        let pad = (4 - s.len() % 4) % 4;
        format!("{s}{}", "=".repeat(pad))
    })
}

/// A message's blocks in the shape `protocol` streams without merging or
/// renaming (see `expected`): a kind, a text, a signature choice, per
/// block; tool calls get ids and names afterwards.
#[derive(Debug, Clone)]
enum Piece {
    Text(String, Option<String>),
    Thinking(String, Option<String>),
    Redacted(String),
    Call(String, Map<String, Value>),
}

fn piece(protocol: Protocol) -> BoxedStrategy<Piece> {
    let signature = match protocol {
        Protocol::Anthropic | Protocol::Bedrock => {
            proptest::option::of("[A-Za-z0-9+/=]{8,40}").boxed()
        }
        Protocol::Gemini => proptest::option::of(base64()).boxed(),
        _ => Just(None).boxed(),
    };
    // Anthropic's text blocks carry no signature.
    let text_signature = match protocol {
        Protocol::Gemini => signature.clone(),
        _ => Just(None).boxed(),
    };
    let text = (some_text(), text_signature).prop_map(|(t, s)| Piece::Text(t, s));
    let thinking = (some_text(), signature).prop_map(|(t, s)| Piece::Thinking(t, s));
    let call = ("[a-z_]{1,12}", arguments()).prop_map(|(name, a)| Piece::Call(name, a));
    match protocol {
        Protocol::Anthropic => prop_oneof![
            text,
            thinking,
            "[A-Za-z0-9+/=]{8,40}".prop_map(Piece::Redacted),
            call
        ]
        .boxed(),
        _ => prop_oneof![text, thinking, call].boxed(),
    }
}

/// The blocks of `pieces` as `protocol` carries them: OpenAI and Gemini
/// alternate text and thinking (one stream carries one text of each kind
/// at a time, so adjacent blocks of a kind would merge) with the calls
/// after them; Responses and Anthropic take any order. Ids: OpenAI and
/// Anthropic `call_N`, Responses `call_N|fc_N` with reasoning items and
/// message ids as signatures, Gemini the projector's `NAME_r1_N`.
fn blocks(protocol: Protocol, pieces: Vec<Piece>) -> Vec<ContentBlock> {
    let mut pieces = pieces;
    if matches!(
        protocol,
        Protocol::OpenAi | Protocol::Gemini | Protocol::Mistral
    ) {
        pieces.sort_by_key(|p| matches!(p, Piece::Call(..)));
        let mut last: Option<bool> = None;
        pieces.retain(|p| {
            let kind = match p {
                Piece::Text(..) => Some(true),
                Piece::Thinking(..) => Some(false),
                _ => None,
            };
            let keep = kind.is_none() || kind != last;
            if kind.is_some() {
                last = kind.or(last);
            }
            keep
        });
    }
    let mut calls = 0;
    pieces
        .into_iter()
        .enumerate()
        .map(|(i, piece)| match piece {
            Piece::Text(t, s) => match protocol {
                Protocol::Responses | Protocol::Azure => {
                    text_block(t, Some(format!(r#"{{"v":1,"id":"msg_{i}"}}"#)))
                }
                _ => text_block(t, s),
            },
            Piece::Thinking(t, s) => match protocol {
                Protocol::Responses | Protocol::Azure => {
                    let item = json!({"type": "reasoning", "id": format!("rs_{i}"),
                        "encrypted_content": format!("enc{i}"),
                        "summary": [{"type": "summary_text", "text": t}]});
                    thinking_block(t, Some(item.to_string()))
                }
                _ => thinking_block(t, s),
            },
            Piece::Redacted(data) => ContentBlock::Thinking(ThinkingContent {
                thinking_signature: Some(data),
                redacted: Some(true),
                ..ThinkingContent::default()
            }),
            Piece::Call(name, a) => {
                calls += 1;
                let id = match protocol {
                    Protocol::Responses | Protocol::Azure => format!("call_{i}|fc_{i}"),
                    // Mistral's ids: nine alphanumeric characters.
                    Protocol::Mistral => format!("call{i:05}"),
                    Protocol::Gemini => format!("{name}_r1_{calls}"),
                    _ => format!("call_{i}"),
                };
                call_block(id, name, a)
            }
        })
        .collect()
}

fn message(protocol: Protocol) -> impl Strategy<Value = AssistantMessage> {
    (
        prop::collection::vec(piece(protocol), 1..6),
        any::<bool>(),
        usage(),
    )
        .prop_map(move |(pieces, length, usage)| {
            let blocks = blocks(protocol, pieces);
            let reason = stop_reason(&blocks, length);
            let (api, provider, model) = protocol.target();
            let mut message = assistant(blocks, reason);
            message.usage = usage;
            message.api = api.into();
            message.provider = provider.into();
            message.model = model.into();
            message
        })
}

/// A conversation: a system prompt, tools, and turns of a user message
/// (text, sometimes with an image), the assistant's answer and the
/// results of its calls.
fn context(protocol: Protocol) -> impl Strategy<Value = Context> {
    let user_turn = (some_text(), proptest::option::of(base64()));
    let turn = (user_turn, message(protocol), some_text());
    (
        prop::collection::vec(turn, 1..4),
        some_text(),
        proptest::option::of(some_text()),
        prop::collection::vec("[a-z_]{1,10}", 0..3),
    )
        .prop_map(|(turns, last, system, tools)| {
            let mut messages = Vec::new();
            for (turn, ((words, picture), mut answer, result)) in turns.into_iter().enumerate() {
                messages.push(match picture {
                    Some(data) => Message::User(UserMessage {
                        content: UserContent::Blocks(vec![
                            text_block(words, None),
                            image(data, "image/png"),
                        ]),
                        timestamp: 0,
                        extra: Map::new(),
                    }),
                    None => user(words).into(),
                });
                answer.usage = Usage::default();
                // Call ids are unique in a conversation.
                for block in &mut answer.content {
                    if let ContentBlock::ToolCall(call) = block {
                        call.id = match call.id.split_once('|') {
                            Some((id, item)) => format!("{id}t{turn}|{item}t{turn}"),
                            None => format!("{}t{turn}", call.id),
                        };
                    }
                }
                let calls: Vec<ToolCall> = answer.tool_calls().cloned().collect();
                messages.push(answer.into());
                for call in calls {
                    messages.push(tool_result(&call.id, &call.name, &result, false).into());
                }
            }
            messages.push(user(last).into());
            let mut context = Context::from_messages(messages);
            context.system_prompt = system;
            context.tools = (!tools.is_empty()).then(|| {
                tools
                    .into_iter()
                    .map(|name| Tool {
                        name,
                        description: "a tool".into(),
                        parameters: json!({"type": "object", "properties": {}}),
                        extra: Map::new(),
                    })
                    .collect()
            });
            context
        })
}

// ---- requests ----

/// The body the client writes for `context`, and the server's decoding of
/// a body, per protocol.
fn build(protocol: Protocol, context: &Context) -> Value {
    let (_, _, model) = protocol.target();
    match protocol {
        Protocol::OpenAi => request_body(&openai::OpenAiChat::default(), model, context).unwrap(),
        Protocol::Anthropic => {
            request_body(&anthropic::AnthropicMessages::default(), model, context).unwrap()
        }
        Protocol::Responses => {
            request_body(&responses::OpenAiResponses::default(), model, context).unwrap()
        }
        Protocol::Gemini => request_body(&gemini::Gemini::default(), model, context).unwrap(),
        Protocol::Azure => {
            request_body(&azure::AzureOpenAiResponses::default(), model, context).unwrap()
        }
        Protocol::Mistral => request_body(&mistral::Mistral::default(), model, context).unwrap(),
        Protocol::Bedrock => request_body(&bedrock::Bedrock::default(), model, context).unwrap(),
    }
}

fn decode(protocol: Protocol, body: &Value) -> agentstream_wire::server::DecodedRequest {
    let (_, _, model) = protocol.target();
    let decoded = match protocol {
        Protocol::OpenAi => openai::decode::decode_request(body),
        Protocol::Anthropic => anthropic::decode::decode_request(body),
        Protocol::Responses => responses::decode::decode_request(body),
        Protocol::Gemini => gemini::decode::decode_request(body, model, true),
        Protocol::Azure => azure::decode::decode_request(body),
        Protocol::Mistral => mistral::decode::decode_request(body),
        Protocol::Bedrock => bedrock::decode::decode_request(body, model, true),
    };
    decoded.unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// The texts of the user messages and tool results, and the tool calls'
/// names and arguments, in order: what every protocol carries as it is.
fn carried(context: &Context) -> Value {
    let mut out = Vec::new();
    for message in &context.messages {
        match message {
            Message::User(m) => out.push(json!({"user": match &m.content {
                UserContent::Text(t) => t.clone(),
                UserContent::Blocks(blocks) => blocks.iter().filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                }).collect::<Vec<_>>().join("\n"),
            }})),
            Message::ToolResult(r) => out.push(json!({"result": r.text()})),
            Message::Assistant(a) => {
                for call in a.tool_calls() {
                    out.push(json!({"call": call.name, "arguments": call.arguments}));
                }
            }
            _ => {}
        }
    }
    Value::Array(out)
}

fn request_round_trip(protocol: Protocol, context: &Context) -> Result<(), TestCaseError> {
    let body = build(protocol, context);
    let decoded = decode(protocol, &body);
    prop_assert_eq!(&decoded.model, protocol.target().2);
    prop_assert_eq!(build(protocol, &decoded.context), body);
    let mut sent = carried(context);
    if protocol == Protocol::Mistral {
        // pi-ai's Mistral results: the text trimmed, a placeholder for none.
        for item in sent.as_array_mut().unwrap() {
            if let Some(Value::String(text)) = item.get_mut("result") {
                let trimmed = text.trim();
                *text = if trimmed.is_empty() {
                    "(no tool output)".into()
                } else {
                    trimmed.into()
                };
            }
        }
    }
    prop_assert_eq!(carried(&decoded.context), sent);
    prop_assert_eq!(&decoded.context.system_prompt, &context.system_prompt);
    let names =
        |c: &Context| -> Vec<String> { c.tools.iter().flatten().map(|t| t.name.clone()).collect() };
    prop_assert_eq!(names(&decoded.context), names(context));
    Ok(())
}

// ---- streams ----

fn encoder(protocol: Protocol, chunks: usize) -> Encoder {
    let (_, _, model) = protocol.target();
    // Gemini names a call without an id after the response id: `r1`.
    Encoder::new(protocol.api(), "r1".into(), model.into(), 7)
        .with_chunks(chunks)
        .with_usage(true)
        .with_ping(true)
}

/// `message` played as a scripted turn (`model_chunks` deltas per text),
/// encoded with `chunks` SSE events per delta and read by `P`.
fn played<P: SseProjector>(
    protocol: Protocol,
    message: &AssistantMessage,
    model_chunks: usize,
    chunks: usize,
) -> AssistantMessage {
    let turn =
        ScriptedTurn::message(message.clone()).chunked(NonZeroUsize::new(model_chunks).unwrap());
    let context = Context::from_messages([user("play").into()]);
    let events: Vec<ModelEvent> = futures_executor::block_on(
        ScriptedModel::new([turn])
            .stream(&context, StreamOptions::default())
            .collect(),
    );
    let mut encoder = encoder(protocol, chunks);
    let mut written = Events::default();
    for event in &events {
        encoder.encode(Wire::from(event), &mut written);
    }
    let body = written.take(written.len());
    let (_, provider, model) = protocol.target();
    if protocol == Protocol::Bedrock {
        return read_frames(model, provider, &body);
    }
    read_with::<P>(model, provider, &body)
}

/// A Bedrock body (event-stream messages) read by its stream.
fn read_frames(model: &str, provider: &str, body: &[u8]) -> AssistantMessage {
    let mut stream = bedrock::BedrockStream::new(model, provider, None);
    let mut events: Vec<ModelEvent> = stream.feed(body).collect();
    events.extend(stream.finish_input());
    assert!(
        agentstream::model::validate_events(&events).is_empty(),
        "{events:?}"
    );
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap_or_else(|| panic!("no terminal event in {events:?}"))
        .clone()
}

/// What the projector must read back for `message` (serve's roundtrip
/// and providers3 expectations):
/// - costs have no wire field (the script's are zero); `cacheWrite` has
///   no field but in Anthropic's; `totalTokens` is Anthropic's sum of the
///   four counts, the others' total sent (the script's, else input +
///   cacheRead + output);
/// - Chat Completions carries no thinking signature: the client records
///   the field the reasoning came in, `reasoning_content`;
/// - Responses' signatures are JSON texts (a reasoning item, a message
///   id): compared as values;
/// - Mistral reads no cached count (its prompt count is all input).
fn expected(protocol: Protocol, message: &AssistantMessage) -> Value {
    let u = &message.usage;
    let (cache_write, total) = match protocol {
        Protocol::Bedrock => (
            u.cache_write,
            u.total_tokens
                .unwrap_or(u.input + u.output + u.cache_read + u.cache_write),
        ),
        Protocol::Anthropic => (
            u.cache_write,
            u.input + u.output + u.cache_read + u.cache_write,
        ),
        _ => (
            0,
            u.total_tokens.unwrap_or(u.input + u.cache_read + u.output),
        ),
    };
    let mut content = message.content.clone();
    if protocol == Protocol::OpenAi {
        for block in &mut content {
            if let ContentBlock::Thinking(t) = block {
                t.thinking_signature = Some("reasoning_content".into());
            }
        }
    }
    // Mistral reads no cached count: its prompt count is all input.
    let (input, cache_read) = match protocol {
        Protocol::Mistral => (u.input + u.cache_read, 0),
        _ => (u.input, u.cache_read),
    };
    essence(
        &content,
        &message.stop_reason,
        [input, u.output, cache_read, cache_write, total],
    )
}

/// What the projector read, in the form of [`expected`].
fn read_back(read: &AssistantMessage) -> Value {
    let u = &read.usage;
    essence(
        &read.content,
        &read.stop_reason,
        [
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens.unwrap_or_default(),
        ],
    )
}

/// The content, stop reason and usage (the parts that must round-trip),
/// signatures that are JSON texts as values.
fn essence(content: &[ContentBlock], stop: &StopReason, usage: [u64; 5]) -> Value {
    let mut content = serde_json::to_value(content).unwrap();
    for block in content.as_array_mut().unwrap() {
        for key in ["thinkingSignature", "textSignature"] {
            if let Some(Value::String(text)) = block.get(key) {
                if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                    block[key] = value;
                }
            }
        }
    }
    json!({"content": content, "stopReason": stop, "usage": usage})
}

fn stream_round_trip(
    protocol: Protocol,
    message: &AssistantMessage,
    model_chunks: usize,
    chunks: usize,
) -> Result<(), TestCaseError> {
    let read = match protocol {
        Protocol::OpenAi => {
            played::<openai::OpenAiProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Anthropic => {
            played::<anthropic::AnthropicProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Responses => {
            played::<responses::ResponsesProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Gemini => {
            played::<gemini::GeminiProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Azure => {
            played::<azure::AzureResponsesProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Mistral => {
            played::<mistral::MistralProjector>(protocol, message, model_chunks, chunks)
        }
        Protocol::Bedrock => {
            played::<bedrock::BedrockProjector>(protocol, message, model_chunks, chunks)
        }
    };
    prop_assert_eq!(&read.error_message, &None);
    prop_assert_eq!(read_back(&read), expected(protocol, message));
    Ok(())
}

const PROTOCOLS: [Protocol; 7] = [
    Protocol::OpenAi,
    Protocol::Anthropic,
    Protocol::Responses,
    Protocol::Gemini,
    Protocol::Azure,
    Protocol::Mistral,
    Protocol::Bedrock,
];

fn config() -> ProptestConfig {
    ProptestConfig {
        // 64 per protocol.
        cases: 448,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A protocol, and a value of `strategy` for it.
fn for_each<T: std::fmt::Debug>(
    strategy: fn(Protocol) -> BoxedStrategy<T>,
) -> impl Strategy<Value = (Protocol, T)> {
    proptest::sample::select(PROTOCOLS.to_vec())
        .prop_flat_map(move |protocol| strategy(protocol).prop_map(move |value| (protocol, value)))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn requests_decode_back((protocol, context) in for_each(|p| context(p).boxed())) {
        request_round_trip(protocol, &context)?;
    }

    #[test]
    fn streams_read_back(
        (protocol, message) in for_each(|p| message(p).boxed()),
        model_chunks in 1..5usize,
        chunks in 1..8usize,
    ) {
        stream_round_trip(protocol, &message, model_chunks, chunks)?;
    }
}

/// Every protocol is covered above (an eighth one would need its lines).
#[test]
fn the_seven_protocols() {
    let apis: Vec<Api> = PROTOCOLS.iter().map(|p| p.api()).collect();
    assert_eq!(apis, Api::ALL);
}
