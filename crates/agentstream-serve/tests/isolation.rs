//! Per-test isolation over real HTTP: the `x-agentstream-test` header
//! gives each test id its own script cursor, rule counts, call numbers,
//! request log and `GET /v1/unused`; many ids interleaving on one server
//! never see each other; bad ids are refused; the least recently used id
//! is dropped past the bound.

use agentstream_serve::{Script, Server, TEST_HEADER};
use serde_json::{json, Value};

mod support;

/// A Chat Completions call (not streamed) saying `text`, under `test`;
/// the status and the body.
async fn call(client: &reqwest::Client, url: &str, test: Option<&str>, text: &str) -> (u16, Value) {
    let response = support::chat_call(client, url, test, text).await;
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

/// `GET url/path` under `test`: the JSON body.
async fn get(client: &reqwest::Client, url: &str, path: &str, test: Option<&str>) -> Value {
    let mut request = client.get(format!("{url}{path}"));
    if let Some(test) = test {
        request = request.header(TEST_HEADER, test);
    }
    json_of(request.send().await.unwrap()).await
}

/// A response's body as JSON (`null` when it is not JSON).
async fn json_of(response: reqwest::Response) -> Value {
    let bytes = response.bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn text_of(body: &Value) -> &str {
    body["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or("")
}

fn script() -> Script {
    Script::from_value(json!({
        "rules": [{"name": "hello", "match": {"lastUserText": "hello"}, "reply": "hi", "times": 1}],
        "turns": ["one", "two", "three"],
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn interleaved_test_ids_each_play_the_whole_script() {
    let server = Server::from_rules_script(script())
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let client = reqwest::Client::new();
    // 16 tests at once, each calling the rule once and the three turns,
    // their calls interleaving on one server.
    let tests: Vec<_> = (0..16)
        .map(|k| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move {
                let id = format!("test-{k}");
                let mut texts = Vec::new();
                for said in ["hello", "a", "hello", "b", "c", "d"] {
                    let (status, body) = call(&client, &url, Some(&id), said).await;
                    texts.push((status, text_of(&body).to_owned()));
                    tokio::task::yield_now().await;
                }
                let requests = get(&client, &url, "/requests", Some(&id)).await;
                let unused = get(&client, &url, "/unused", Some(&id)).await;
                (texts, requests, unused)
            })
        })
        .collect();
    for test in tests {
        let (texts, requests, unused) = test.await.unwrap();
        let texts: Vec<(u16, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
        // The rule answers once per test; the second "hello" takes a turn.
        assert_eq!(
            texts,
            [
                (200, "hi"),
                (200, "one"),
                (200, "two"),
                (200, "three"),
                (400, ""),
                (400, "")
            ]
        );
        let requests = requests.as_array().unwrap();
        let calls: Vec<u64> = requests
            .iter()
            .map(|r| r["call"].as_u64().unwrap())
            .collect();
        assert_eq!(calls, [0, 1, 2, 3, 4, 5], "each id numbers its own calls");
        assert_eq!(requests[1]["context"]["messages"][0]["content"], "a");
        assert_eq!(unused, json!({"rules": [], "turns": []}));
    }
    // The server's own lane saw none of it.
    assert!(get(&client, &url, "/requests", None)
        .await
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(
        get(&client, &url, "/unused", None).await,
        json!({"rules": [{"index": 0, "name": "hello"}], "turns": [0, 1, 2]})
    );
    assert!(server.requests().is_empty());
    assert_eq!(server.test_requests("test-3").len(), 6);
    assert_eq!(server.calls(), 16 * 6);
    let (status, body) = call(&client, &url, None, "x").await;
    assert_eq!((status, text_of(&body)), (200, "one"));
    server.shutdown().await;
}

#[tokio::test]
async fn bad_test_ids_are_refused_naming_the_header() {
    let server = Server::from_script([]).bind("127.0.0.1:0").await.unwrap();
    let url = server.url();
    let client = reqwest::Client::new();
    let long = "x".repeat(129);
    for bad in ["", "a b", long.as_str(), "é"] {
        let response = client
            .post(format!("{url}/chat/completions"))
            .header(
                TEST_HEADER,
                reqwest::header::HeaderValue::from_bytes(bad.as_bytes()).unwrap(),
            )
            .body(json!({"messages": [{"role": "user", "content": "x"}]}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{bad:?}");
        let body = json_of(response).await;
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(TEST_HEADER), "{message}");
        // The same on the server's own routes, in Anthropic's shape when asked so.
        let response = client
            .get(format!("{url}/requests"))
            .header("anthropic-version", "2023-06-01")
            .header(
                TEST_HEADER,
                reqwest::header::HeaderValue::from_bytes(bad.as_bytes()).unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body = json_of(response).await;
        assert_eq!(body["type"], "error", "{body}");
    }
    let longest = "y".repeat(128);
    let (status, _) = call(&client, &url, Some(&longest), "x").await;
    assert_eq!(
        status, 400,
        "past the end of an empty script, not refused for its id"
    );
    assert_eq!(server.test_requests(&longest).len(), 1);
    assert_eq!(server.calls(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn the_least_recently_used_id_is_dropped_past_the_bound() {
    let server = Server::from_script(script().turns)
        .max_test_ids(2)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let client = reqwest::Client::new();
    assert_eq!(text_of(&call(&client, &url, Some("a"), "x").await.1), "one");
    assert_eq!(text_of(&call(&client, &url, Some("b"), "x").await.1), "one");
    // "a" is used again, so "b" is the least recently used when "c" comes.
    assert_eq!(text_of(&call(&client, &url, Some("a"), "x").await.1), "two");
    assert_eq!(text_of(&call(&client, &url, Some("c"), "x").await.1), "one");
    assert!(
        server.test_requests("b").is_empty(),
        "dropped with its lane"
    );
    assert_eq!(server.test_requests("a").len(), 2);
    // "b" starts afresh.
    assert_eq!(text_of(&call(&client, &url, Some("b"), "x").await.1), "one");
    server.shutdown().await;
}
