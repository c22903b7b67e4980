//! The proxy sends Azure OpenAI and Mistral calls to their providers'
//! own paths (Azure's with its `?api-version=`, Mistral's without serve's
//! `/mistral` prefix), records them with Azure's `api-key` redacted, and
//! the cassettes replay on the routes the client called.

mod support;
use support::{piecewise_upstream, temp_dir};

use agentstream_serve::cassette::Match;
use agentstream_serve::Server;
use agentstream_wire::Api;
use serde_json::json;

const AZURE_ANSWER: &str = r#"{"id":"resp_1","object":"response","status":"completed","model":"gpt-az","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello from Azure","annotations":[]}]}]}"#;
const MISTRAL_ANSWER: &str = r#"{"id":"c1","object":"chat.completion","model":"mistral-small","choices":[{"index":0,"message":{"role":"assistant","content":"Bonjour from Mistral"},"finish_reason":"stop"}]}"#;

const AZURE_PATH: &str = "/openai/v1/responses?api-version=2025-04-01-preview";

/// Posts `body` to `url` with Azure's key header, returning the status
/// and the body.
async fn post(url: &str, body: &serde_json::Value) -> (u16, Vec<u8>) {
    let answer = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("api-key", "AZURE-SECRET-KEY")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.bytes().await.unwrap().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_and_mistral_calls_reach_their_providers_paths_and_replay() {
    let (origin, received) = piecewise_upstream(
        |line| {
            let body = if line.contains("/responses") {
                AZURE_ANSWER
            } else {
                MISTRAL_ANSWER
            };
            ("application/json", body.as_bytes().to_vec())
        },
        64,
    );
    let dir = temp_dir("proxy-paths");
    let proxy = Server::proxy(format!("{origin}/v1"), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let at =
        |server: &Server, path: &str| format!("{}{path}", server.url().trim_end_matches("/v1"));
    let azure = json!({"model": "gpt-az", "input": "hello azure"});
    let mistral = json!({"model": "mistral-small",
        "messages": [{"role": "user", "content": "hello mistral"}]});
    let mistral_path = "/mistral/v1/chat/completions";
    let recorded_azure = post(&at(&proxy, AZURE_PATH), &azure).await;
    let recorded_mistral = post(&at(&proxy, mistral_path), &mistral).await;
    proxy.shutdown().await;
    assert_eq!(recorded_azure, (200, AZURE_ANSWER.as_bytes().to_vec()));
    assert_eq!(recorded_mistral, (200, MISTRAL_ANSWER.as_bytes().to_vec()));

    let first = received.recv().unwrap();
    assert_eq!(first.line, format!("POST {AZURE_PATH} HTTP/1.1"));
    assert_eq!(first.header("api-key"), Some("AZURE-SECRET-KEY"));
    let second = received.recv().unwrap();
    assert_eq!(second.line, "POST /v1/chat/completions HTTP/1.1");

    // Recorded with the route the client called, the key redacted.
    let request = |n: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join(n).join("request.json")).unwrap()).unwrap()
    };
    let (azure_request, mistral_request) = (request("0000"), request("0001"));
    assert_eq!(azure_request["api"], Api::Azure.pi_api());
    assert_eq!(azure_request["path"], "/openai/v1/responses");
    assert_eq!(azure_request["query"], "api-version=2025-04-01-preview");
    assert_eq!(azure_request["headers"]["api-key"], "[redacted]");
    assert_eq!(mistral_request["api"], Api::Mistral.pi_api());
    assert_eq!(mistral_request["path"], mistral_path);
    for n in ["0000", "0001"] {
        for file in ["request.json", "request.body", "response.json"] {
            let bytes = std::fs::read_to_string(dir.join(n).join(file)).unwrap();
            assert!(
                !bytes.contains("AZURE-SECRET"),
                "the key reached {n}/{file}"
            );
        }
    }

    // Replayed on the same routes, answered alike.
    let replay = Server::replay(&dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    assert_eq!(post(&at(&replay, AZURE_PATH), &azure).await, recorded_azure);
    assert_eq!(
        post(&at(&replay, mistral_path), &mistral).await,
        recorded_mistral
    );
    replay.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
