//! Timing, chaos and quirks: each quirk decodes through our own projector
//! to the turn's message without it; chaos is reproducible by its seed and
//! logged; a turn waiting for its first token holds up no other call.

use std::time::Duration;

use agentstream_serve::{Script, Server, CHAOS_HEADER};
use agentstream_wire::anthropic::AnthropicProjector;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::openai::OpenAiProjector;
use agentstream_wire::responses::ResponsesProjector;
use agentstream_wire::sse::{SseProjector, SseStream};
use serde_json::{json, Value};

fn turn() -> Value {
    json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Zürich, then Tokyo."},
        {"type": "text", "text": "Grüße aus Zürich — 東京"},
        {"type": "toolCall", "id": "call_1", "name": "weather", "arguments": {"city": "Zürich"}},
        {"type": "toolCall", "id": "call_2", "name": "time",
         "arguments": {"zone": "Asia/Tokyo", "n": 2.5, "ok": true, "none": null, "at": {"h": [1, 2]}, "list": ["x"], "c": "y"}}
    ], "stopReason": "toolUse",
       "usage": {"input": 30, "output": 25, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 55,
                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
}

fn with(extra: Value) -> Value {
    let mut turn = turn();
    for (key, value) in extra.as_object().unwrap() {
        turn[key] = value.clone();
    }
    turn
}

async fn server(script: Value) -> Server {
    let script = Script::from_value(script).unwrap();
    Server::from_rules_script(script)
        .seed(42)
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

/// The path and body of a streamed request in `api`.
fn request(api: &str) -> (&'static str, Value) {
    let messages = json!([{"role": "user", "content": "hi"}]);
    match api {
        "openai" => (
            "/v1/chat/completions",
            json!({"model": "m", "stream": true, "messages": messages,
                   "stream_options": {"include_usage": true}}),
        ),
        "responses" => (
            "/v1/responses",
            json!({"model": "m", "stream": true, "input": "hi"}),
        ),
        "anthropic" => (
            "/v1/messages",
            json!({"model": "m", "stream": true, "max_tokens": 100, "messages": messages}),
        ),
        _ => (
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        ),
    }
}

async fn call(server: &Server, api: &str, chaos: Option<&str>) -> (u16, Vec<u8>) {
    let (path, body) = request(api);
    let base = server.url();
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", base.trim_end_matches("/v1")))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(chaos) = chaos {
        request = request.header(CHAOS_HEADER, chaos);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let mut bytes = Vec::new();
    let mut response = response;
    while let Ok(Some(chunk)) = response.chunk().await {
        bytes.extend_from_slice(&chunk);
    }
    (status, bytes)
}

fn projected<P: SseProjector + Send + 'static>(body: &[u8]) -> Value {
    let mut stream = SseStream::<P>::new("m", "p", None);
    let mut events = stream.feed(body).collect::<Vec<_>>();
    events.extend(stream.finish_input());
    let mut message = events
        .last()
        .and_then(|e| e.terminal_message())
        .cloned()
        .expect("a terminal event");
    message.timestamp = 0;
    let mut message = serde_json::to_value(message).unwrap();
    // Each call has its own answer id.
    message["responseId"] = Value::Null;
    message
}

fn message(api: &str, body: &[u8]) -> Value {
    match api {
        "openai" => projected::<OpenAiProjector>(body),
        "anthropic" => projected::<AnthropicProjector>(body),
        "responses" => projected::<ResponsesProjector>(body),
        _ => projected::<GeminiProjector>(body),
    }
}

/// `message` without its tool calls' ids.
fn without_ids(mut message: Value) -> Value {
    for block in message["content"].as_array_mut().unwrap() {
        if block["type"] == "toolCall" {
            block["id"] = Value::Null;
        }
    }
    message
}

/// Whether `body` shows what the quirk (of those added since the first
/// eight) says it does.
fn shows(quirk: &str, body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    let payloads: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect();
    let deltas = || {
        payloads
            .iter()
            .filter_map(|p| p.pointer("/choices/0/delta"))
    };
    match quirk {
        "repeatedRole" => deltas().all(|d| d["role"] == "assistant"),
        "noToolCallIds" => {
            let calls = deltas()
                .filter_map(|d| d["tool_calls"].as_array())
                .flatten();
            calls.clone().count() > 0 && calls.clone().all(|c| c.get("id").is_none())
        }
        "usageOnlyFinalChunk" => payloads.last().is_some_and(|p| {
            p["usage"]["prompt_tokens"] == 30 && p["choices"][0]["finish_reason"] == "tool_calls"
        }),
        "reasoningContent" => {
            deltas().any(|d| d.get("reasoning").is_some())
                && deltas().all(|d| d.get("reasoning_content").is_none())
        }
        "keepAliveComments" => {
            text.starts_with(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: ")
        }
        "noCallIds" => payloads.last().is_some_and(|p| {
            let parts = p["candidates"][0]["content"]["parts"].as_array();
            let calls = parts
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("functionCall"));
            p["candidates"][0]["finishReason"] == "STOP"
                && calls.clone().count() == 2
                && calls.clone().all(|c| c.get("id").is_none())
        }),
        "completedWithoutOutput" => payloads
            .iter()
            .any(|p| p["type"] == "response.completed" && p["response"]["output"] == json!([])),
        "interleavedToolBlocks" => {
            // (type, index) of each block event: the second call starts
            // before the first stops, and gets a delta before the first's last.
            let at = |kind: &str, index: u64| {
                payloads
                    .iter()
                    .position(|p| p["type"] == kind && p["index"] == index)
                    .unwrap_or(usize::MAX)
            };
            let last_delta_of_first = payloads
                .iter()
                .rposition(|p| p["type"] == "content_block_delta" && p["index"] == 2);
            at("content_block_start", 3) < at("content_block_stop", 2)
                && last_delta_of_first.is_some_and(|d| at("content_block_delta", 3) < d)
        }
        _ => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_quirk_decodes_to_the_same_message() {
    for (quirk, api) in [
        ("emptyDeltas", "openai"),
        ("pingFlood", "anthropic"),
        ("toolCallsOnIndex0", "openai"),
        ("toolCallsInOneChunk", "openai"),
        ("inputTokensInDelta", "anthropic"),
        ("outputIndexGaps", "responses"),
        ("partialArgs", "gemini"),
        ("splitUtf8", "openai"),
        ("splitUtf8", "anthropic"),
        ("splitUtf8", "gemini"),
        ("repeatedRole", "openai"),
        ("noToolCallIds", "openai"),
        ("usageOnlyFinalChunk", "openai"),
        ("reasoningContent", "openai"),
        ("keepAliveComments", "openai"),
        ("completedWithoutOutput", "responses"),
        ("noCallIds", "gemini"),
        ("interleavedToolBlocks", "anthropic"),
    ] {
        let server = server(json!([turn(), with(json!({"quirks": [quirk]}))])).await;
        let (_, plain) = call(&server, api, None).await;
        let (status, quirked) = call(&server, api, None).await;
        assert_eq!(status, 200);
        assert_ne!(plain, quirked, "{quirk} on {api} changed nothing");
        assert!(
            shows(quirk, &quirked),
            "{quirk} on {api} is not in the stream"
        );
        let (plain, quirked) = (message(api, &plain), message(api, &quirked));
        if api == "gemini" || quirk == "noToolCallIds" {
            // Gemini streams carry no call ids, nor calls without ids: the
            // client makes them (from each call's own answer id on Gemini,
            // from the call's position on Chat Completions).
            let ids = |m: &Value| -> Vec<Value> {
                let calls = m["content"].as_array().unwrap().iter();
                calls
                    .filter(|b| b["type"] == "toolCall")
                    .map(|b| b["id"].clone())
                    .collect()
            };
            if quirk == "noToolCallIds" {
                assert_eq!(ids(&quirked), [json!("call_0"), json!("call_1")]);
            }
            assert_eq!(without_ids(plain), without_ids(quirked), "{quirk}");
        } else if quirk == "reasoningContent" {
            // The thinking block names the field its text came in, as Pi's does.
            let (mut plain, mut quirked) = (plain, quirked);
            assert_eq!(
                plain["content"][0]["thinkingSignature"],
                "reasoning_content"
            );
            assert_eq!(quirked["content"][0]["thinkingSignature"], "reasoning");
            plain["content"][0]["thinkingSignature"] = Value::Null;
            quirked["content"][0]["thinkingSignature"] = Value::Null;
            assert_eq!(plain, quirked);
        } else {
            assert_eq!(plain, quirked, "{quirk} on {api}");
        }
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_foreign_quirks_are_refused() {
    let error = Script::from_value(json!([with(json!({"quirks": ["sparkles"]}))])).unwrap_err();
    assert_eq!(error.path(), "$[0].quirks[0]");
    assert!(error.to_string().contains("pingFlood"), "{error}");
    let error = Script::from_value(json!([with(json!({"timing": {"ttftMs": -5}}))])).unwrap_err();
    assert_eq!(error.path(), "$[0].timing.ttftMs");
    let server = server(json!([with(json!({"quirks": ["pingFlood"]}))])).await;
    let (status, body) = call(&server, "openai", None).await;
    assert_eq!(status, 400);
    let body = String::from_utf8_lossy(&body);
    assert!(
        body.contains("pingFlood") && body.contains("anthropic-messages"),
        "{body}"
    );
    server.shutdown().await;
}

/// The `chaos` of each logged request, once every one has it (the server
/// notes it when the stream's pump is dropped, which may come just after
/// the client read the end).
async fn chaos_log(server: &Server) -> Vec<Value> {
    for _ in 0..500 {
        let log = chaos_once(server).await;
        if log.iter().all(|chaos| !chaos.is_null()) {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    chaos_once(server).await
}

async fn chaos_once(server: &Server) -> Vec<Value> {
    let text = reqwest::get(format!("{}/requests", server.url()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let list: Value = serde_json::from_str(&text).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|request| request["chaos"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_is_reproducible_by_seed_and_logged() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let server = server(json!([turn(), turn(), turn()])).await;
        let mut bodies = Vec::new();
        for _ in 0..3 {
            bodies.push(
                call(&server, "openai", Some("drop=0.3,malformed=0.3"))
                    .await
                    .1,
            );
        }
        runs.push((bodies, chaos_log(&server).await));
        server.shutdown().await;
    }
    // The same seed, the same injections (the bodies differ only in their
    // `created` times).
    assert_eq!(runs[0].1, runs[1].1);
    let (bodies, log) = &runs[0];
    let kinds: Vec<&str> = log
        .iter()
        .flat_map(|c| c.as_array().into_iter().flatten())
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"drop") && kinds.contains(&"malformed"),
        "{log:?}"
    );
    let plain = String::from_utf8_lossy(&bodies[0]);
    assert!(
        plain.lines().any(|line| line.starts_with("data: {")
            && serde_json::from_str::<Value>(&line[6..]).is_err()),
        "{plain}"
    );

    // Certain disconnect: the first event is never written; the requests
    // file gets the chaos as a line of its own.
    let file = std::env::temp_dir().join(format!("agentstream-chaos-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let script = Script::from_value(json!([turn()])).unwrap();
    let server = Server::from_rules_script(script)
        .seed(42)
        .requests_file(&file)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let (status, body) = call(&server, "anthropic", Some("disconnect=1")).await;
    assert_eq!((status, body.len()), (200, 0));
    assert_eq!(
        chaos_log(&server).await,
        [json!([{"event": 0, "kind": "disconnect"}])]
    );
    server.shutdown().await;
    let lines = std::fs::read_to_string(&file).unwrap();
    let last: Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"call": 0, "chaos": [{"event": 0, "kind": "disconnect"}]})
    );
    let _ = std::fs::remove_file(&file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_waiting_for_its_first_token_holds_up_no_other_call() {
    let script = json!({
        "rules": [{"match": {"lastUserText": "slow"},
                   "reply": with(json!({"timing": {"ttftMs": 600000}}))}],
        "turns": [turn()]
    });
    let server = server(script).await;
    let slow = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.url()))
        .header("content-type", "application/json")
        .body(
            json!({"model": "m", "stream": true,
                     "messages": [{"role": "user", "content": "slow"}]})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(slow.status(), 200);
    // Another call is answered whole while the slow one waits.
    let (status, body) = call(&server, "openai", None).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("[DONE]"));
    let mut slow = slow;
    let first = tokio::time::timeout(Duration::from_millis(200), slow.chunk()).await;
    assert!(
        first.is_err(),
        "the slow turn wrote before its ttft: {first:?}"
    );
    drop(slow);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_turn_decodes_to_the_same_message_in_every_api() {
    let timing = json!({"timing": {"ttftMs": 1, "tokensPerSecond": 100000, "jitterMs": 1}});
    for api in ["openai", "anthropic", "responses", "gemini"] {
        let server = server(json!([turn(), with(timing.clone())])).await;
        let (_, plain) = call(&server, api, None).await;
        let (status, paced) = call(&server, api, None).await;
        assert_eq!(status, 200);
        let (plain, paced) = (message(api, &plain), message(api, &paced));
        if api == "gemini" {
            assert_eq!(without_ids(plain), without_ids(paced));
        } else {
            assert_eq!(plain, paced, "{api}");
        }
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_finish_chunk_is_written_when_no_usage_follows() {
    // usageOnlyFinalChunk holds the finish chunk for the usage chunk; a
    // client that asked for no usage gets the stream unchanged.
    let server = server(json!([
        turn(),
        with(json!({"quirks": ["usageOnlyFinalChunk"]}))
    ]))
    .await;
    let mut bodies = Vec::new();
    for _ in 0..2 {
        let body = json!({"model": "m", "stream": true,
                          "messages": [{"role": "user", "content": "hi"}]});
        let response = reqwest::Client::new()
            .post(format!("{}/chat/completions", server.url()))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        bodies.push(response.bytes().await.unwrap());
    }
    let text = String::from_utf8_lossy(&bodies[1]);
    assert!(text.contains("\"finish_reason\":\"tool_calls\""), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    assert_eq!(message("openai", &bodies[0]), message("openai", &bodies[1]));
    server.shutdown().await;
}
