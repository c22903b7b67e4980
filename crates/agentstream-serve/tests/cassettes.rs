//! Record through the proxy from the mock provider, replay from the
//! cassettes: the same answers byte for byte, in the same pieces, for our
//! own clients and for the library's `ReplayModel` (Chat Completions,
//! Anthropic Messages, OpenAI Responses and Gemini); a changed prompt gets
//! the mismatch error; no secret reaches a cassette.

use std::path::{Path, PathBuf};

use agentstream::message::{text, user, Context, Message, StopReason, UserContent};
use agentstream::model::{Model, StreamOptions};
use agentstream_serve::cassette::{Cassette, Match};
use agentstream_serve::Server;
use agentstream_testkit::http::{
    answer_payloads, named_sse_body, split_randomly, sse_body, MockServer, Reply, Rng,
};
use agentstream_tokio::{AnthropicModel, GeminiModel, OpenAiCompatModel, ResponsesModel};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::gemini::{GeminiConfig, GeminiProjector};
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::replay::{Recording, ReplayModel};
use agentstream_wire::responses::{ResponsesConfig, ResponsesProjector};
use agentstream_wire::sse::{SseProjector, SseStream};
use agentstream_wire::Api;
use serde_json::{json, Value};

mod support;
use support::everything;

const KEY: &str = "sk-cassette-secret-0123456789";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn anthropic_body() -> Vec<u8> {
    named_sse_body(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-test", "content": [], "stop_reason": null,
               "usage": {"input_tokens": 5, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Bonjour "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "de Paris"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ])
}

fn question(text: &str) -> Context {
    Context::from_messages([user(text).into()])
}

/// A message without what differs between two runs of a client.
fn comparable(mut message: agentstream::message::AssistantMessage) -> Value {
    message.timestamp = 0;
    serde_json::to_value(message).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_then_replay_openai_and_anthropic() {
    let openai_body = sse_body(&answer_payloads(&["thinking"], &["Hello", " there"]));
    let openai_pieces = split_randomly(&openai_body, &mut Rng::new(7), 40);
    let anthropic_pieces = split_randomly(&anthropic_body(), &mut Rng::new(8), 50);
    let (openai_answer, anthropic_answer) = (openai_pieces.clone(), anthropic_pieces.clone());
    let mock = MockServer::start(move |request| {
        if request.path.ends_with("/messages") {
            Reply::sse(anthropic_answer.clone())
        } else {
            Reply::sse(openai_answer.clone())
        }
    })
    .unwrap();
    let dir = temp_dir("cassettes");

    // Record.
    let proxy = Server::proxy(mock.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let openai = |url: String| {
        OpenAiCompatModel::new(OpenAiConfig::new(url, "gpt-test").with_api_key(KEY)).unwrap()
    };
    let anthropic = |url: String| {
        AnthropicModel::new(
            AnthropicConfig::new("claude-test")
                .with_api_key(KEY)
                .with_base_url(url.trim_end_matches("/v1")),
        )
        .unwrap()
    };
    let options = || StreamOptions::default().with_temperature(0.5);
    let live_openai = openai(proxy.url())
        .stream(&question("Hi"), options())
        .result()
        .await;
    let live_anthropic = anthropic(proxy.url())
        .stream(&question("Salut"), options())
        .result()
        .await;
    assert_eq!(live_openai.stop_reason, StopReason::Stop, "{live_openai:?}");
    assert_eq!(live_openai.text(), "Hello there");
    assert_eq!(
        live_anthropic.text(),
        "Bonjour de Paris",
        "{live_anthropic:?}"
    );
    proxy.shutdown().await;
    // The upstream saw the key; the cassettes never do.
    assert!(mock
        .requests()
        .iter()
        .all(|r| r.header("authorization").is_some() || r.header("x-api-key").is_some()));
    let files = everything(&dir);
    assert!(!files.is_empty());
    assert!(
        !files.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the key reached a cassette"
    );

    // The files: the request decoded, the body byte for byte in its pieces.
    let cassettes = Cassette::load_all(&dir).unwrap();
    assert_eq!(cassettes.len(), 2);
    assert_eq!(cassettes[0].name, "0000");
    assert_eq!(
        cassettes[0].request["headers"]["authorization"],
        "[redacted]"
    );
    assert_eq!(cassettes[1].request["headers"]["x-api-key"], "[redacted]");
    assert_eq!(cassettes[0].request["options"], json!({"temperature": 0.5}));
    assert_eq!(cassettes[0].body, openai_body);
    assert_eq!(cassettes[0].status, 200);
    let Message::User(asked) = &cassettes[1].context.messages[0] else {
        panic!("{:?}", cassettes[1].context)
    };
    // The Anthropic client sent the text as one block, marked for the
    // cache (Pi's default retention, `short`).
    assert_eq!(asked.content, UserContent::Blocks(vec![text("Salut")]));
    // Piece sizes as they arrived: never more than the mock sent at once,
    // and all of it.
    assert_eq!(
        cassettes[1].lengths.iter().sum::<usize>(),
        cassettes[1].body.len()
    );
    let pieces: Vec<&[u8]> = cassettes[0].pieces().collect();
    assert_eq!(pieces.concat(), openai_body);

    // Replay: the same answers.
    let replay = Server::replay(&dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let again_openai = openai(replay.url())
        .stream(&question("Hi"), options())
        .result()
        .await;
    let again_anthropic = anthropic(replay.url())
        .stream(&question("Salut"), options())
        .result()
        .await;
    assert_eq!(comparable(again_openai), comparable(live_openai.clone()));
    assert_eq!(
        comparable(again_anthropic),
        comparable(live_anthropic.clone())
    );
    // The raw bytes too.
    let raw = reqwest::Client::new()
        .post(format!("{}/chat/completions", replay.url()))
        .body(json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    assert_eq!(raw.bytes().await.unwrap(), openai_body);

    // A changed prompt: the provider's error, naming the closest cassette
    // and where the contexts part.
    let changed = openai(replay.url())
        .stream(&question("Hello"), options())
        .result()
        .await;
    assert_eq!(changed.stop_reason, StopReason::Error);
    let message = changed.error_message.unwrap_or_default();
    assert!(message.contains("no cassette"), "{message}");
    assert!(message.contains("the closest is 0000"), "{message}");
    assert!(message.contains("$.messages[0].content"), "{message}");
    assert!(
        message.contains("\"Hi\"") && message.contains("\"Hello\""),
        "{message}"
    );
    let error = reqwest::Client::new()
        .post(format!("{}/messages", replay.url()))
        .body(json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "Hola"}]}).to_string())
        .send()
        .await
        .unwrap();
    // 400, which the SDKs do not retry, in Anthropic's shape.
    assert_eq!(error.status(), 400);
    let error: Value = serde_json::from_slice(&error.bytes().await.unwrap()).unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the closest is 0001"));
    // OpenAI's shape, with a code of its own.
    let error = reqwest::Client::new()
        .post(format!("{}/chat/completions", replay.url()))
        .body(json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "Hola"}]}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(error.status(), 400);
    let error: Value = serde_json::from_slice(&error.bytes().await.unwrap()).unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(
        error["error"]["code"],
        agentstream_serve::CASSETTE_UNMATCHED_CODE
    );
    replay.shutdown().await;

    // The library's ReplayModel reads the same files.
    let body = std::fs::read(dir.join("0001/response.body")).unwrap();
    let lengths = std::fs::read_to_string(dir.join("0001/response.body.lengths")).unwrap();
    let recording = Recording::with_lengths(&body, &lengths)
        .unwrap()
        .with_api(Api::Anthropic);
    let replayed = ReplayModel::new([recording])
        .stream(&question("Salut"), StreamOptions::default())
        .result()
        .await;
    assert_eq!(replayed.text(), "Bonjour de Paris");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn strict_order_and_last_message_modes() {
    let mock = MockServer::start(|request| {
        let asked = request.json()["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Reply::sse(vec![sse_body(&answer_payloads(
            &[],
            &[&format!("re: {asked}")],
        ))])
    })
    .unwrap();
    let dir = temp_dir("order");
    let proxy = Server::proxy(mock.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let client = |url: String| OpenAiCompatModel::new(OpenAiConfig::new(url, "gpt-test")).unwrap();
    for text in ["one", "two"] {
        let answer = client(proxy.url())
            .stream(&question(text), StreamOptions::default())
            .result()
            .await;
        assert_eq!(answer.text(), format!("re: {text}"));
    }
    proxy.shutdown().await;

    // Strict order: call 0 must be "one".
    let replay = Server::replay(&dir, Match::Order)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let wrong = client(replay.url())
        .stream(&question("two"), StreamOptions::default())
        .result()
        .await;
    let message = wrong.error_message.unwrap_or_default();
    assert!(message.contains("the closest is 0000"), "{message}");
    let one = client(replay.url())
        .stream(&question("one"), StreamOptions::default())
        .result()
        .await;
    assert_eq!(one.text(), "re: one");
    replay.shutdown().await;

    // Last message: an earlier history does not matter.
    let replay = Server::replay(&dir, Match::LastMessage)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let longer = Context::from_messages([user("earlier").into(), user("two").into()]);
    let two = client(replay.url())
        .stream(&longer, StreamOptions::default())
        .result()
        .await;
    assert_eq!(two.text(), "re: two");
    replay.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A provider stream the wire crate's tests keep (`tests/fixtures/DIR/NAME`,
/// recorded from the real provider; see the README there).
fn wire_fixture(dir: &str, name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../agentstream-wire/tests/fixtures")
        .join(dir)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The final message of `body` fed straight to the projector `P`.
fn projected<P: SseProjector + Send + 'static>(body: &[u8], model: &str, provider: &str) -> Value {
    let mut stream = SseStream::<P>::new(model, provider, None);
    let mut events = stream.feed(body).collect::<Vec<_>>();
    events.extend(stream.finish_input());
    let message = events.last().and_then(|e| e.terminal_message()).cloned();
    comparable(message.expect("a terminal event"))
}

/// OpenAI Responses and Gemini streams (real recordings, cut at random)
/// recorded by the proxy: each cassette, read by `Recording::from_cassette`
/// with no protocol given, replays through `ReplayModel` as the message
/// the client got live, which is the projector's on the recording.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_and_gemini_cassettes_replay_through_replay_model() {
    let responses_body = wire_fixture("openai-responses-sse", "genai-reasoning-tools.sse");
    let gemini_body = wire_fixture("google-sse", "genai-tool.sse");
    let responses_pieces = split_randomly(&responses_body, &mut Rng::new(11), 60);
    let gemini_pieces = split_randomly(&gemini_body, &mut Rng::new(12), 60);
    let mock = MockServer::start(move |request| {
        if request.path.contains(":streamGenerateContent") {
            Reply::sse(gemini_pieces.clone())
        } else {
            Reply::sse(responses_pieces.clone())
        }
    })
    .unwrap();
    let dir = temp_dir("cassettes-providers3");
    let proxy = Server::proxy(mock.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let responses =
        ResponsesModel::new(ResponsesConfig::new(proxy.url(), "gpt-5").with_api_key(KEY)).unwrap();
    let gemini = GeminiModel::new(
        GeminiConfig::new("gemini-2.5-flash")
            .with_base_url(proxy.url().trim_end_matches("/v1"))
            .with_api_key(KEY),
    )
    .unwrap();
    let live_responses = responses
        .stream(&question("Weather?"), StreamOptions::default())
        .result()
        .await;
    let live_gemini = gemini
        .stream(&question("Wetter?"), StreamOptions::default())
        .result()
        .await;
    proxy.shutdown().await;
    assert_eq!(
        live_responses.stop_reason,
        StopReason::ToolUse,
        "{live_responses:?}"
    );
    assert_eq!(
        live_gemini.stop_reason,
        StopReason::ToolUse,
        "{live_gemini:?}"
    );
    assert!(
        !everything(&dir)
            .windows(KEY.len())
            .any(|w| w == KEY.as_bytes()),
        "the key reached a cassette"
    );

    for (exchange, live, api, body) in [
        ("0000", &live_responses, Api::Responses, &responses_body),
        ("0001", &live_gemini, Api::Gemini, &gemini_body),
    ] {
        let read = |name: &str| std::fs::read(dir.join(exchange).join(name)).unwrap();
        let request = String::from_utf8(read("request.json")).unwrap();
        let lengths = String::from_utf8(read("response.body.lengths")).unwrap();
        let recording =
            Recording::from_cassette(&request, &read("response.body"), &lengths).unwrap();
        assert_eq!(recording.api(), api, "{exchange}");
        assert_eq!(
            recording.to_body(),
            **body,
            "{exchange}: the body byte for byte"
        );
        assert!(
            recording.piece_lengths().count() > 1,
            "{exchange}: the pieces"
        );
        let replayed = ReplayModel::new([recording])
            .with_names(live.model.clone(), live.provider.clone())
            .stream(&question("anything"), StreamOptions::default())
            .result()
            .await;
        assert_eq!(comparable(replayed), comparable(live.clone()), "{exchange}");
        let direct = match api {
            Api::Responses => projected::<ResponsesProjector>(body, &live.model, &live.provider),
            _ => projected::<GeminiProjector>(body, &live.model, &live.provider),
        };
        assert_eq!(comparable(live.clone()), direct, "{exchange}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
