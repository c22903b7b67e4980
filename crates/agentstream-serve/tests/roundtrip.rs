//! Property: a scripted turn played through the server and decoded by our
//! own clients (`OpenAiCompatModel`, `AnthropicModel`) gives back the
//! scripted message: its content, stop reason and usage, for random
//! scripts and random chunking.
//!
//! One test per protocol; each binds a few servers once (their `chunks`
//! differ: 1, 2 and 7 SSE chunks per delta) and plays every case against
//! one of them picked at random, with the turn's own chunking (1 to 5
//! model deltas per text) random too.
//!
//! What cannot round-trip, and is therefore not compared or is compared
//! after the mapping below:
//! - `api`, `provider`, `model` and `timestamp` of the decoded message are
//!   the client's (its configuration and its clock), and response ids are
//!   not part of Pi's message at all;
//! - costs have no wire field: they decode as zero (the script's are zero);
//! - OpenAI: `cacheWrite` has no Chat Completions field (decodes as 0),
//!   thinking signatures have none either (the client records the field
//!   the reasoning came in, `reasoning_content`, as the signature), `totalTokens` is the
//!   `total_tokens` sent (the script's, else input + cacheRead + output);
//!   one stream carries one content text and one reasoning text at a time,
//!   so two adjacent text (or thinking) blocks would merge and the
//!   generator never makes them, and tool calls come after the text as
//!   OpenAI sends them;
//! - Anthropic: `totalTokens` is the sum of the four counts (the wire has
//!   no total);
//! - a scripted failure (`error` or `aborted`) reaches the client as the
//!   provider's error event or error status, so it decodes as `error`
//!   (`aborted` is the client's own abort), with the scripted message in
//!   its `errorMessage` and the partial text kept.

use std::sync::{Arc, Mutex};

use agentstream::message::{
    user, AssistantMessage, ContentBlock, Context, StopReason, ThinkingContent, ToolCall, Usage,
};
use agentstream::model::{
    ErrorReason, Model, ModelStream, ScriptedModel, ScriptedTurn, StreamOptions,
};
use agentstream_serve::Server;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

mod support;
use support::{client, Client, Protocol};

// The wire crate's generators of Pi values, shared with its server
// halves' round-trip tests.
#[path = "../../agentstream-wire/tests/server_support/mod.rs"]
mod server_support;
use server_support::{arguments, some_text, stop_reason, text_block, thinking_block, usage};

/// Cases per protocol: enough to cover every block kind, stop reason and
/// chunking many times over, few enough to run in seconds.
const CASES: u32 = 96;

/// The server chunkings the cases pick from.
const SERVER_CHUNKS: [usize; 3] = [1, 2, 7];

/// A model playing whatever turn the test put in the slot last.
#[derive(Clone, Default)]
struct Slot(Arc<Mutex<Option<ScriptedTurn>>>);

impl Model for Slot {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        // No turn set: an empty script, which answers "exhausted".
        let turn = self.0.lock().unwrap().take();
        ScriptedModel::new(turn).stream(context, options)
    }
}

// Cases are few and short-lived: the size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Scripted {
    Message(AssistantMessage),
    Failure {
        reason: ErrorReason,
        message: String,
        partial: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct Case {
    scripted: Scripted,
    model_chunks: usize,
    server: usize,
}

fn call() -> impl Strategy<Value = ContentBlock> {
    ("[a-z_]{1,12}", "[A-Za-z0-9]{4,10}", arguments()).prop_map(|(name, id, arguments)| {
        ContentBlock::ToolCall(ToolCall {
            id: format!("call_{id}"),
            name,
            arguments,
            ..ToolCall::default()
        })
    })
}

/// OpenAI's shape: alternating reasoning and text segments, then calls.
fn openai_blocks() -> impl Strategy<Value = Vec<ContentBlock>> {
    (
        any::<bool>(),
        prop::collection::vec(some_text(), 0..4),
        prop::collection::vec(call(), 0..4),
    )
        .prop_map(|(thinking_first, segments, calls)| {
            let mut blocks: Vec<ContentBlock> = segments
                .into_iter()
                .enumerate()
                .map(|(i, text)| {
                    if (i % 2 == 0) == thinking_first {
                        thinking_block(text, None)
                    } else {
                        text_block(text, None)
                    }
                })
                .collect();
            blocks.extend(calls);
            blocks
        })
        .prop_filter("at least one block", |blocks| !blocks.is_empty())
}

/// Anthropic's shape: any sequence of text, thinking (signed or not),
/// redacted thinking and tool-use blocks.
fn anthropic_blocks() -> impl Strategy<Value = Vec<ContentBlock>> {
    let block = prop_oneof![
        some_text().prop_map(|text| text_block(text, None)),
        (some_text(), proptest::option::of("[A-Za-z0-9+/=]{8,40}"))
            .prop_map(|(thinking, signature)| thinking_block(thinking, signature)),
        "[A-Za-z0-9+/=]{8,40}".prop_map(|data| ContentBlock::Thinking(ThinkingContent {
            thinking_signature: Some(data),
            redacted: Some(true),
            ..ThinkingContent::default()
        })),
        call(),
    ];
    prop::collection::vec(block, 1..6)
}

fn message(blocks: Vec<ContentBlock>, length: bool, usage: Usage) -> AssistantMessage {
    let reason = stop_reason(&blocks, length);
    // Tool-call ids must be unique within a message.
    let mut blocks = blocks;
    for (i, block) in blocks.iter_mut().enumerate() {
        if let ContentBlock::ToolCall(call) = block {
            call.id = format!("{}_{i}", call.id);
        }
    }
    let mut message = agentstream::message::assistant(blocks, reason);
    message.usage = usage;
    message
}

fn case(protocol: Protocol) -> impl Strategy<Value = Case> {
    let blocks = match protocol {
        Protocol::OpenAi => openai_blocks().boxed(),
        Protocol::Anthropic => anthropic_blocks().boxed(),
    };
    let scripted = prop_oneof![
        5 => (blocks, any::<bool>(), usage())
            .prop_map(|(blocks, length, usage)| Scripted::Message(message(blocks, length, usage))),
        1 => (any::<bool>(), some_text(), proptest::option::of(some_text()))
            .prop_map(|(aborted, message, partial)| Scripted::Failure {
                reason: if aborted { ErrorReason::Aborted } else { ErrorReason::Error },
                message,
                partial,
            }),
    ];
    (scripted, 1..=5usize, 0..SERVER_CHUNKS.len()).prop_map(|(scripted, model_chunks, server)| {
        Case {
            scripted,
            model_chunks,
            server,
        }
    })
}

/// What the client must decode for a scripted message (see the module
/// documentation for why each mapping).
fn expected(protocol: Protocol, message: &AssistantMessage) -> (Vec<ContentBlock>, Usage) {
    let mut usage = Usage {
        input: message.usage.input,
        output: message.usage.output,
        cache_read: message.usage.cache_read,
        cache_write: message.usage.cache_write,
        ..Usage::default()
    };
    match protocol {
        Protocol::OpenAi => {
            usage.cache_write = 0;
            usage.total_tokens = Some(
                message
                    .usage
                    .total_tokens
                    .unwrap_or(usage.input + usage.cache_read + usage.output),
            );
        }
        Protocol::Anthropic => {
            usage.total_tokens =
                Some(usage.input + usage.output + usage.cache_read + usage.cache_write);
        }
    }
    let mut content = message.content.clone();
    if protocol == Protocol::OpenAi {
        // The client records the field reasoning arrived in as the
        // thinking signature (as Pi does): the server sends
        // `reasoning_content`.
        for block in &mut content {
            if let ContentBlock::Thinking(t) = block {
                t.thinking_signature = Some("reasoning_content".into());
            }
        }
    }
    (content, usage)
}

async fn play(
    protocol: Protocol,
    clients: &[Client],
    slot: &Slot,
    case: &Case,
) -> Result<(), TestCaseError> {
    let chunks = std::num::NonZeroUsize::new(case.model_chunks).unwrap();
    let turn = match &case.scripted {
        Scripted::Message(message) => ScriptedTurn::message(message.clone()),
        Scripted::Failure {
            reason,
            message,
            partial,
        } => {
            let turn = ScriptedTurn::failure(*reason, message.clone());
            match partial {
                Some(partial) => turn.with_partial_text(partial.clone()),
                None => turn,
            }
        }
    };
    *slot.0.lock().unwrap() = Some(turn.chunked(chunks));
    let context = Context::from_messages([user("play").into()]);
    let decoded = clients[case.server]
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    match &case.scripted {
        Scripted::Message(message) => {
            let (content, usage) = expected(protocol, message);
            prop_assert_eq!(&decoded.error_message, &None);
            prop_assert_eq!(&decoded.content, &content);
            prop_assert_eq!(&decoded.stop_reason, &message.stop_reason);
            prop_assert_eq!(&decoded.usage, &usage);
        }
        Scripted::Failure {
            message, partial, ..
        } => {
            prop_assert_eq!(&decoded.stop_reason, &StopReason::Error);
            let error = decoded.error_message.clone().unwrap_or_default();
            prop_assert!(
                error.contains(message.as_str()),
                "{error:?} lacks {message:?}"
            );
            prop_assert_eq!(decoded.text(), partial.clone().unwrap_or_default());
        }
    }
    Ok(())
}

fn run(protocol: Protocol) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let slot = Slot::default();
    let servers: Vec<Server> = runtime.block_on(async {
        let mut servers = Vec::new();
        for chunks in SERVER_CHUNKS {
            let server = Server::builder(slot.clone())
                .chunks(chunks)
                .pings(true)
                .bind("127.0.0.1:0")
                .await
                .unwrap();
            servers.push(server);
        }
        servers
    });
    let clients: Vec<Client> = servers.iter().map(|s| client(protocol, s)).collect();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(protocol), |case| {
        runtime.block_on(play(protocol, &clients, &slot, &case))
    });
    // Every case reached a server and was recorded there.
    let recorded: usize = servers.iter().map(|s| s.requests().len()).sum();
    runtime.block_on(async {
        for server in servers {
            server.shutdown().await;
        }
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    assert!(recorded >= CASES as usize, "{recorded} requests recorded");
}

#[test]
fn openai_round_trips_through_our_client() {
    run(Protocol::OpenAi);
}

#[test]
fn anthropic_round_trips_through_our_client() {
    run(Protocol::Anthropic);
}
