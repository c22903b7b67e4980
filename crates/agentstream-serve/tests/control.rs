//! Control at run time over real HTTP: `POST /v1/script` replaces or
//! extends the script of the server or of one test id, `POST /v1/reset`
//! rewinds them and clears their requests, a bad script is refused with
//! the CLI's error text, and proxies and replays refuse both with 409.

use agentstream_serve::cassette::Match;
use agentstream_serve::{parse_script, Server, TEST_HEADER};
use serde_json::{json, Value};

/// A response's status and body as JSON (`null` when it is not JSON).
async fn sent(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// `POST url/path` with `body`, under `test`.
async fn post(url: &str, path: &str, test: Option<&str>, body: &str) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .body(body.to_owned());
    if let Some(test) = test {
        request = request.header(TEST_HEADER, test);
    }
    sent(request).await
}

/// A Chat Completions call under `test`: the status and the answer's text.
async fn call(url: &str, test: Option<&str>, text: &str) -> (u16, String) {
    let body = json!({"messages": [{"role": "user", "content": text}]}).to_string();
    let (status, body) = post(url, "/chat/completions", test, &body).await;
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (status, text)
}

#[tokio::test]
async fn an_empty_server_answers_past_the_end_until_a_script_is_posted() {
    let server = Server::from_script([]).bind("127.0.0.1:0").await.unwrap();
    let url = server.url();
    assert_eq!(call(&url, None, "x").await.0, 400);

    let (status, answer) = post(&url, "/script", None, r#"["one", "two"]"#).await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": null, "rules": 0, "turns": 2, "appended": false})
        )
    );
    assert_eq!(call(&url, None, "x").await, (200, "one".into()));
    // Appended: the cursor stays where it was.
    let appended =
        r#"{"rules": [{"match": {"lastUserText": "ping"}, "reply": "pong"}], "turns": ["three"]}"#;
    let (status, answer) = post(&url, "/script?append=1", None, appended).await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": null, "rules": 1, "turns": 3, "appended": true})
        )
    );
    assert_eq!(call(&url, None, "ping").await, (200, "pong".into()));
    assert_eq!(call(&url, None, "x").await, (200, "two".into()));
    assert_eq!(call(&url, None, "x").await, (200, "three".into()));
    assert_eq!(call(&url, None, "x").await.0, 400);

    // A new test id starts from the server's script as it stands.
    assert_eq!(call(&url, Some("t"), "x").await, (200, "one".into()));

    // Reset of the whole server: every lane rewound, every request cleared.
    let (status, answer) = post(&url, "/reset", None, "").await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": null, "reset": true, "clearedRequests": 7})
        )
    );
    assert!(server.requests().is_empty() && server.test_requests("t").is_empty());
    assert_eq!(call(&url, None, "x").await, (200, "one".into()));
    assert_eq!(call(&url, Some("t"), "x").await, (200, "one".into()));
    assert_eq!(server.requests()[0].call, 0, "call numbers start again");
    server.shutdown().await;
}

#[tokio::test]
async fn a_test_ids_script_and_reset_are_its_own() {
    let server = Server::from_script([]).bind("127.0.0.1:0").await.unwrap();
    let url = server.url();
    let (status, answer) = post(&url, "/script", Some("a"), r#"["for a"]"#).await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": "a", "rules": 0, "turns": 1, "appended": false})
        )
    );
    assert_eq!(call(&url, Some("a"), "x").await, (200, "for a".into()));
    assert_eq!(
        call(&url, Some("b"), "x").await.0,
        400,
        "b has the server's"
    );
    assert_eq!(call(&url, None, "x").await.0, 400);
    assert_eq!(call(&url, Some("a"), "x").await.0, 400);

    let (status, answer) = post(&url, "/reset", Some("a"), "").await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"test": "a", "reset": true, "clearedRequests": 2})
        )
    );
    assert_eq!(call(&url, Some("a"), "x").await, (200, "for a".into()));
    assert_eq!(server.test_requests("b").len(), 1, "b's requests stay");
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_bad_script_is_refused_with_the_clis_text() {
    let server = Server::from_script([]).bind("127.0.0.1:0").await.unwrap();
    let url = server.url();
    for (script, expected) in [
        ("[\"ok\",\n {\"role\": \"user\"}]", "2: error: $[1].role"),
        (
            r#"{"rules": [{"reply": "x", "time": 1}]}"#,
            "1: error: $.rules[0].time",
        ),
        (
            "[\"ok\",\n",
            "2: error: invalid JSON: EOF while parsing a value",
        ),
        ("7", "1: error: $: expected a JSON array of turns"),
    ] {
        let (status, body) = post(&url, "/script", None, script).await;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(status, 400, "{script}: {body}");
        assert!(message.starts_with(expected), "{script}: {message}");
        assert_eq!(Err(message.to_owned()), parse_script(script).map(|_| ()));
    }
    // The server's script is unchanged.
    assert_eq!(call(&url, None, "x").await.0, 400);
    server.shutdown().await;
}

#[tokio::test]
async fn proxies_and_replays_refuse_control_with_409() {
    let dir = std::env::temp_dir().join(format!("agentstream-control-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let proxy = Server::proxy("http://127.0.0.1:9", dir.join("rec"))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let replay = Server::replay(&dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    for (server, kind) in [(&proxy, "--upstream"), (&replay, "--replay")] {
        for path in ["/script", "/reset"] {
            let (status, body) = post(&server.url(), path, None, "[]").await;
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert_eq!(status, 409, "{path}: {body}");
            assert!(message.contains(kind), "{message}");
        }
    }
    proxy.shutdown().await;
    replay.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn control_routes_take_only_post() {
    let server = Server::from_script([]).bind("127.0.0.1:0").await.unwrap();
    let response = reqwest::get(format!("{}/reset", server.url()))
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    server.shutdown().await;
}
