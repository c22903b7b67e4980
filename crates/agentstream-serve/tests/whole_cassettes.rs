//! Cassettes of calls that did not stream: recorded through the proxy in
//! each of the four APIs, their whole answers replay through
//! `ReplayModel` as the recorded message (text, tool call, stop reason),
//! not as an empty one.

mod support;
use support::temp_dir;

use agentstream::message::{Context, StopReason};
use agentstream::model::{Model, StreamOptions};
use agentstream_serve::{ServeTurn, Server};
use agentstream_wire::replay::{Recording, ReplayModel};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_answers_of_every_api_replay_as_the_recorded_message() {
    let turn = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "toolCall", "id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}
    ], "stopReason": "toolUse"});
    let turns = (0..4).map(|_| ServeTurn::from_value(turn.clone()).unwrap());
    let upstream = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let dir = temp_dir("whole-cassettes");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let base = proxy.url();
    let origin = base.trim_end_matches("/v1");
    let user = "What is the weather in Paris?";
    let calls = [
        (
            format!("{base}/chat/completions"),
            json!({"model": "m", "messages": [{"role": "user", "content": user}]}),
        ),
        (
            format!("{base}/messages"),
            json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": user}]}),
        ),
        (
            format!("{base}/responses"),
            json!({"model": "m", "input": user}),
        ),
        (
            format!("{origin}/v1beta/models/m:generateContent"),
            json!({"contents": [{"role": "user", "parts": [{"text": user}]}]}),
        ),
    ];
    for (url, body) in &calls {
        let response = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{url}");
        response.bytes().await.unwrap();
    }
    proxy.shutdown().await;
    upstream.shutdown().await;
    for exchange in ["0000", "0001", "0002", "0003"] {
        let read = |name: &str| std::fs::read(dir.join(exchange).join(name)).unwrap();
        let request = String::from_utf8(read("request.json")).unwrap();
        assert!(
            request.contains("\"stream\": false"),
            "{exchange}: {request}"
        );
        let lengths = String::from_utf8(read("response.body.lengths")).unwrap();
        let recording =
            Recording::from_cassette(&request, &read("response.body"), &lengths).unwrap();
        let message = ReplayModel::new([recording])
            .stream(&Context::default(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{exchange}: {message:?}"
        );
        assert_eq!(message.text(), "Let me look.", "{exchange}");
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{exchange}");
        assert_eq!(calls[0].name, "weather", "{exchange}");
        assert_eq!(
            json!(calls[0].arguments),
            json!({"city": "Paris"}),
            "{exchange}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
