//! The request log as received: `GET /v1/requests?raw=1` gives each
//! request's body as the client sent it beside the decoded context, the
//! `--requests` file's lines carry it (and the test id), and a plain
//! `GET /v1/requests` stays as it was.

use agentstream_serve::{Server, TEST_HEADER};
use serde_json::{json, Value};

/// The body an SDK sends for a tool result: a `tool` message, which the
/// decoded context shows as `toolResult`.
fn sent() -> Value {
    json!({"model": "m", "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]})
}

async fn post(url: &str, test: Option<&str>, body: String) -> u16 {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(test) = test {
        request = request.header(TEST_HEADER, test);
    }
    request.send().await.unwrap().status().as_u16()
}

async fn listed(url: &str, query: &str, test: Option<&str>) -> Vec<Value> {
    let mut request = reqwest::Client::new().get(format!("{url}/requests{query}"));
    if let Some(test) = test {
        request = request.header(TEST_HEADER, test);
    }
    let bytes = request.send().await.unwrap().bytes().await.unwrap();
    serde_json::from_slice::<Vec<Value>>(&bytes).unwrap()
}

/// Checks the lists of a server that got `sent()` compact, then pretty
/// (line breaks and all), then under the test id `t`.
async fn check(server: &Server) {
    let url = server.url();
    let sent = sent();
    assert_eq!(post(&url, None, sent.to_string()).await, 200);
    let pretty = serde_json::to_string_pretty(&sent).unwrap();
    assert!(pretty.contains('\n'));
    assert_eq!(post(&url, None, pretty).await, 200);
    assert_eq!(post(&url, Some("t"), sent.to_string()).await, 200);

    let plain = listed(&url, "", None).await;
    assert_eq!(plain.len(), 2);
    for line in &plain {
        assert!(line.get("raw").is_none(), "{line}");
        assert!(line.get("test").is_none(), "{line}");
        assert_eq!(line["context"]["messages"][2]["role"], "toolResult");
    }
    let raw = listed(&url, "?raw=1", None).await;
    assert_eq!(raw.len(), 2);
    for line in &raw {
        assert_eq!(line["raw"], sent, "the body as received");
        assert_eq!(line["raw"]["messages"][2]["role"], "tool");
        assert_eq!(line["context"]["messages"][2]["role"], "toolResult");
    }
    let test = listed(&url, "?raw=1", Some("t")).await;
    assert_eq!(test.len(), 1);
    assert_eq!((&test[0]["raw"], &test[0]["test"]), (&sent, &json!("t")));
    assert_eq!(test[0]["call"], 0);
    let recorded = server.test_requests("t");
    assert_eq!(recorded[0].test.as_deref(), Some("t"));
}

#[tokio::test]
async fn raw_bodies_beside_the_decoded_context() {
    let server = Server::from_script(
        ["a", "b"].map(|t| agentstream_serve::ServeTurn::from_value(json!(t)).unwrap()),
    )
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    check(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_requests_file_carries_the_raw_body_and_the_test_id() {
    let path = std::env::temp_dir().join(format!("agentstream-raw-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let server = Server::from_script(
        ["a", "b"].map(|t| agentstream_serve::ServeTurn::from_value(json!(t)).unwrap()),
    )
    .requests_file(&path)
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    check(&server).await;
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        3,
        "one line per request, a pretty body on one line"
    );
    for line in &lines {
        assert_eq!(line["raw"], sent());
    }
    assert_eq!(lines[2]["test"], "t");
    assert!(lines[0].get("test").is_none());
    server.shutdown().await;
    std::fs::remove_file(&path).unwrap();
}
