//! `POST /v1/responses` and Gemini's `models/{model}:streamGenerateContent`
//! over real HTTP: streamed and whole answers read by the wire crate's
//! projectors, the requests recorded as Pi contexts, each provider's error
//! bodies, and a recording proxy in front of a server whose cassettes
//! replay the same bytes with no key in them.

use std::path::PathBuf;

use agentstream::message::{assistant, text, tool_call, AssistantMessage, StopReason};
use agentstream::model::ScriptedModel;
use agentstream_serve::cassette::{Cassette, Match};
use agentstream_serve::Server;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::responses::ResponsesProjector;
use serde_json::{json, Value};

// The wire crate's projector read-back, shared with its server halves'
// tests.
#[path = "../../agentstream-wire/tests/server_support/mod.rs"]
mod server_support;
use server_support::read_with;

mod support;

const KEY: &str = "AIza-agentstream-secret-key";

fn turns() -> Vec<AssistantMessage> {
    let mut first = assistant(
        [
            text("Checking."),
            tool_call("call_1|fc_1", "weather", json!({"city": "Paris"})),
        ],
        StopReason::ToolUse,
    );
    first.usage.input = 9;
    first.usage.output = 4;
    vec![first, assistant([text("Sunny.")], StopReason::Stop)]
}

fn responses_body(stream: bool) -> Value {
    json!({"model": "gpt-5", "stream": stream, "instructions": "Be brief.",
           "input": [{"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]}],
           "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}}]})
}

fn gemini_body() -> Value {
    json!({"contents": [{"role": "user", "parts": [{"text": "Weather?"}]}],
           "generationConfig": {"maxOutputTokens": 64}})
}

async fn post(url: &str, body: &Value) -> (u16, String, Vec<u8>) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("x-goog-api-key", KEY)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, response.bytes().await.unwrap().to_vec())
}

fn read_responses(body: &[u8]) -> AssistantMessage {
    read_with::<ResponsesProjector>("gpt-5", "openai", body)
}

fn read_gemini(body: &[u8]) -> AssistantMessage {
    read_with::<GeminiProjector>("gemini-2.5-flash", "google", body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_routes_stream_answer_whole_and_record() {
    let mut all = turns();
    all.extend(turns());
    let server = Server::builder(ScriptedModel::new(all))
        .chunks(3)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let base = url.trim_end_matches("/v1");

    let (status, kind, body) = post(&format!("{url}/responses"), &responses_body(true)).await;
    assert_eq!((status, kind.starts_with("text/event-stream")), (200, true));
    let read = read_responses(&body);
    assert_eq!(read.stop_reason, StopReason::ToolUse, "{read:?}");
    assert_eq!(read.tool_calls().next().unwrap().id, "call_1|fc_1");
    assert_eq!(read.usage.input, 9);

    let (status, _, body) = post(&format!("{url}/responses"), &responses_body(false)).await;
    assert_eq!(status, 200);
    let whole: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(whole["object"], "response");
    assert_eq!(whole["output"][0]["content"][0]["text"], "Sunny.");

    let stream = format!("{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    let (status, _, body) = post(&stream, &gemini_body()).await;
    assert_eq!(status, 200);
    let read = read_gemini(&body);
    assert_eq!(read.text(), "Checking.");
    assert_eq!(read.tool_calls().next().unwrap().arguments["city"], "Paris");
    assert_eq!(read.stop_reason, StopReason::ToolUse);

    // The google-genai SDK's default: `/v1/`, not streaming.
    let whole_url = format!("{base}/v1/models/gemini-2.5-flash:generateContent");
    let (status, _, body) = post(&whole_url, &gemini_body()).await;
    assert_eq!(status, 200);
    let whole: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        whole["candidates"][0]["content"]["parts"][0]["text"],
        "Sunny."
    );

    let recorded = server.requests();
    let seen: Vec<(&str, &str, bool)> = recorded
        .iter()
        .map(|r| (r.api.pi_api(), r.model.as_str(), r.stream))
        .collect();
    assert_eq!(
        seen,
        [
            ("openai-responses", "gpt-5", true),
            ("openai-responses", "gpt-5", false),
            ("google-generative-ai", "gemini-2.5-flash", true),
            ("google-generative-ai", "gemini-2.5-flash", false),
        ]
    );
    assert_eq!(
        recorded[0].context.system_prompt.as_deref(),
        Some("Be brief.")
    );
    assert_eq!(recorded[2].options, json!({"maxTokens": 64}));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_come_in_each_providers_shape() {
    let server = Server::builder(ScriptedModel::new(Vec::<AssistantMessage>::new()))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let base = url.trim_end_matches("/v1");
    let (status, _, body) = post(&format!("{url}/responses"), &json!({"model": "m"})).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!((status, &body["error"]["param"]), (400, &json!("input")));

    let stream = format!("{base}/v1beta/models/g:streamGenerateContent?alt=sse");
    let (status, _, body) = post(&stream, &json!({"contents": 3})).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 400);
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(body["error"]["code"], 400);

    // The script is empty: exhausted, in Gemini's shape, with a status
    // the SDKs do not retry (#37).
    let (status, _, body) = post(&stream, &gemini_body()).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, &body["error"]["status"]),
        (400, &json!("INVALID_ARGUMENT"))
    );

    let response = reqwest::get(&stream).await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    let (status, _, body) = post(
        &format!("{base}/v1beta/models/g:countTokens"),
        &gemini_body(),
    )
    .await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, &body["error"]["status"]),
        (404, &json!("NOT_FOUND"))
    );
    server.shutdown().await;
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cassettes_record_and_replay_both_routes_without_the_key() {
    let upstream = Server::builder(ScriptedModel::new(turns()))
        .chunks(2)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let dir = temp_dir("providers3-cassettes");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let base = proxy.url().trim_end_matches("/v1").to_owned();
    let responses_url = format!("{base}/v1/responses");
    let gemini_url =
        format!("{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={KEY}");
    let (status, _, live_responses) = post(&responses_url, &responses_body(true)).await;
    assert_eq!(status, 200);
    let (status, _, live_gemini) = post(&gemini_url, &gemini_body()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&live_gemini));
    assert_eq!(read_gemini(&live_gemini).text(), "Sunny.");
    proxy.shutdown().await;
    // The upstream got the route, the query and the key; no cassette has it.
    let seen = upstream.requests();
    assert_eq!(seen[1].api.pi_api(), "google-generative-ai");
    upstream.shutdown().await;
    let files = support::everything(&dir);
    assert!(
        !files.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the key reached a cassette"
    );
    let cassettes = Cassette::load_all(&dir).unwrap();
    assert_eq!(cassettes.len(), 2);
    assert_eq!(
        cassettes[1].request["headers"]["x-goog-api-key"],
        "[redacted]"
    );
    assert_eq!(cassettes[1].request["query"], "alt=sse&key=[redacted]");
    assert_eq!(cassettes[1].request["api"], "google-generative-ai");

    let replay = Server::replay(&dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let base = replay.url().trim_end_matches("/v1").to_owned();
    let (_, _, replayed_gemini) = post(
        &format!("{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        &gemini_body(),
    )
    .await;
    let (_, _, replayed_responses) =
        post(&format!("{base}/v1/responses"), &responses_body(true)).await;
    assert_eq!(replayed_gemini, live_gemini);
    assert_eq!(replayed_responses, live_responses);
    // A changed prompt: Gemini's error shape, naming the difference.
    let mut changed = gemini_body();
    changed["contents"][0]["parts"][0]["text"] = "Other?".into();
    let (status, _, body) = post(
        &format!("{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        &changed,
    )
    .await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, &body["error"]["status"]),
        (400, &json!("INVALID_ARGUMENT"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no cassette"),
        "{body}"
    );
    replay.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
