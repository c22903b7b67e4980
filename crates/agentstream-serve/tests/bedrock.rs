//! Bedrock's endpoints over HTTP: the binary stream's content type and
//! messages read back by the client's stream, the model id from the path
//! percent-decoded, the error body and `x-amzn-errortype`, `splitUtf8` and
//! timing on the binary stream (another API's quirk refused), and the
//! routes' 405 and 404.

use agentstream::model::ModelEvent;
use agentstream_serve::{Script, Server};
use agentstream_wire::bedrock::BedrockStream;
use serde_json::{json, Value};

const MODEL: &str = "anthropic.claude-3-haiku-20240307-v1%3A0";

fn turn() -> Value {
    json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Hm.", "thinkingSignature": "sig"},
        {"type": "text", "text": "Checking."},
        {"type": "toolCall", "id": "t1", "name": "ls", "arguments": {"dir": "/"}}
    ], "stopReason": "toolUse", "usage": {"input": 5, "output": 3, "cacheRead": 0,
        "cacheWrite": 0, "totalTokens": 8, "cost": {"input": 0, "output": 0, "cacheRead": 0,
        "cacheWrite": 0, "total": 0}}})
}

async fn server(script: Value) -> Server {
    Server::from_rules_script(Script::from_value(script).unwrap())
        .chunks(2)
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

fn body() -> Value {
    json!({"messages": [{"role": "user", "content": [{"text": "list /"}]}],
           "inferenceConfig": {"maxTokens": 64}})
}

async fn post(server: &Server, path: &str) -> reqwest::Response {
    let root = server.url();
    let root = root.strip_suffix("/v1").unwrap_or(&root);
    reqwest::Client::new()
        .post(format!("{root}{path}"))
        .body(body().to_string())
        .send()
        .await
        .unwrap()
}

/// The events our own Bedrock client reads from a streamed response.
async fn client_events(response: reqwest::Response) -> Vec<ModelEvent> {
    let bytes = response.bytes().await.unwrap();
    let mut stream = BedrockStream::new("m", "amazon-bedrock", None);
    let mut events: Vec<ModelEvent> = stream.feed(&bytes).collect();
    events.extend(stream.finish_input());
    events
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_binary_messages_the_client_reads_back() {
    let server = server(json!([turn()])).await;
    let response = post(&server, &format!("/model/{MODEL}/converse-stream")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.amazon.eventstream"
    );
    let events = client_events(response).await;
    let message = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap();
    let content = serde_json::to_value(&message.content).unwrap();
    assert_eq!(content[0]["thinkingSignature"], "sig");
    assert_eq!(content[1]["text"], "Checking.");
    assert_eq!(content[2]["arguments"], json!({"dir": "/"}));
    assert_eq!(message.usage.total_tokens, Some(8));
    let requests = reqwest::get(format!("{}/requests", server.url()))
        .await
        .unwrap();
    let requests = json_of(requests).await;
    let recorded = &requests[0];
    assert_eq!(
        recorded["model"], "anthropic.claude-3-haiku-20240307-v1:0",
        "{recorded}"
    );
    assert_eq!(recorded["options"], json!({"maxTokens": 64}), "{recorded}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_bedrocks_body_and_error_type_header() {
    let server = server(json!([
        {"httpError": {"status": 429, "message": "Too many requests"}},
        {"httpError": {"status": 400, "message": "bad"}}
    ]))
    .await;
    for (path, status, kind, message) in [
        (
            "converse-stream",
            429,
            "ThrottlingException",
            "Too many requests",
        ),
        ("converse", 400, "ValidationException", "bad"),
    ] {
        let response = post(&server, &format!("/model/{MODEL}/{path}")).await;
        assert_eq!(response.status(), status);
        assert_eq!(response.headers()["x-amzn-errortype"], kind);
        assert!(response.headers().contains_key("x-amzn-requestid"));
        let body = json_of(response).await;
        assert_eq!(body, json!({"message": message}));
    }
    // A malformed model id in the path is the client's error.
    let response = post(&server, "/model/bad%zz/converse").await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.headers()["x-amzn-errortype"],
        "ValidationException"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_utf8_and_timing_shape_the_binary_stream_and_routes_answer_in_bedrocks_shape() {
    let mut plain = turn();
    plain["content"][1]["text"] = json!("Grüße.");
    let mut shaped = plain.clone();
    shaped["quirks"] = json!(["splitUtf8"]);
    shaped["timing"] = json!({"ttftMs": 1, "tokensPerSecond": 1000});
    let mut foreign = plain.clone();
    foreign["quirks"] = json!(["pingFlood"]);
    let server = server(json!([plain, shaped, foreign])).await;
    let path = format!("/model/{MODEL}/converse-stream");
    let mut contents = Vec::new();
    for _ in 0..2 {
        let response = post(&server, &path).await;
        assert_eq!(response.status(), 200);
        let events = client_events(response).await;
        let message = events
            .last()
            .and_then(ModelEvent::terminal_message)
            .unwrap();
        contents.push(serde_json::to_value(&message.content).unwrap());
    }
    assert_eq!(contents[0], contents[1]);
    assert_eq!(contents[1][1]["text"], "Grüße.");
    // A quirk of another API is refused per request, as on every API.
    let response = post(&server, &path).await;
    assert_eq!(response.status(), 400);
    let body = json_of(response).await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("pingFlood"), "{message}");
    let root = server.url();
    let root = root.strip_suffix("/v1").unwrap_or(&root).to_owned();
    let response = reqwest::get(format!("{root}/model/m/converse"))
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let response = post(&server, "/model/m/invoke").await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["x-amzn-errortype"],
        "ResourceNotFoundException"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_breaks_the_binary_stream_and_the_log_says_so() {
    let server = server(json!([turn()])).await;
    let root = server.url();
    let root = root.strip_suffix("/v1").unwrap_or(&root).to_owned();
    let response = reqwest::Client::new()
        .post(format!("{root}/model/{MODEL}/converse-stream"))
        .header("x-agentstream-chaos", "malformed=1")
        .body(body().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let events = client_events(response).await;
    assert!(
        matches!(events.last(), Some(ModelEvent::Error { .. })),
        "{events:?}"
    );
    let requests = json_of(
        reqwest::get(format!("{}/requests", server.url()))
            .await
            .unwrap(),
    )
    .await;
    let chaos = requests[0]["chaos"].as_array().cloned().unwrap_or_default();
    assert!(!chaos.is_empty(), "{requests}");
    assert!(chaos.iter().all(|c| c["kind"] == "malformed"), "{requests}");
    assert_eq!(chaos[0]["event"], 0, "{requests}");
    server.shutdown().await;
}
