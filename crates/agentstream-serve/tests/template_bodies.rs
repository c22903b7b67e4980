//! A turn that answers again is filled in from a template of its first
//! answers (`src/template.rs`): its bytes must be the encoder's. Each
//! turn below answers four times in every API, streamed, from one shared
//! message (a repeated script element, and a rule's reply), and the
//! bodies are compared with those of four equal turns that each answer
//! once (each written apart, so each is its own message and is encoded).

use agentstream_serve::{parse_script, Server};
use serde_json::{json, Value};

mod support;

fn turn(content: Value, stop: &str) -> Value {
    json!({"role": "assistant", "content": content, "model": "template-model", "stopReason": stop,
           "usage": {"input": 12, "output": 7, "cacheRead": 1, "cacheWrite": 0, "totalTokens": 20,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
}

fn turns() -> Vec<Value> {
    vec![
        turn(
            json!([{"type": "text", "text": "Hello, \"world\"!\nLine two: café 😀."}]),
            "stop",
        ),
        turn(
            json!([
                {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "c2lnXzEyMw=="},
                {"type": "text", "text": "The answer is 42."}
            ]),
            "stop",
        ),
        turn(
            json!([
                {"type": "text", "text": "Checking both."},
                {"type": "toolCall", "id": "call_1|fc_1", "name": "weather",
                 "arguments": {"city": "Paris", "units": "metric"}},
                {"type": "toolCall", "id": "", "name": "time", "arguments": {"zone": "Europe/Paris"}}
            ]),
            "toolUse",
        ),
        turn(json!([{"type": "text", "text": "cut"}]), "length"),
    ]
}

/// Each API's streamed call: its path and body.
fn calls() -> Vec<(&'static str, Value)> {
    let openai = json!({"model": "template-model", "stream": true,
        "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "Hi"}]});
    let responses = json!({"model": "template-model", "stream": true,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]});
    vec![
        ("/v1/chat/completions", openai),
        (
            "/v1/messages",
            json!({"model": "template-model", "stream": true, "max_tokens": 64,
            "messages": [{"role": "user", "content": "Hi"}]}),
        ),
        ("/v1/responses", responses.clone()),
        (
            "/v1beta/models/template-model:streamGenerateContent?alt=sse",
            json!({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}),
        ),
        ("/openai/v1/responses?api-version=v1", responses),
        (
            "/mistral/v1/chat/completions",
            json!({"model": "template-model", "stream": true,
            "messages": [{"role": "user", "content": "Hi"}]}),
        ),
    ]
}

/// The bodies of four calls of `path` to a server of `script`, the
/// clock's numbers set to 0.
async fn bodies(script: &str, chunks: usize, path: &str, body: &Value) -> Vec<String> {
    let clock = regex::Regex::new(r#""(created|created_at)":\d+"#).unwrap();
    let server = Server::from_rules_script(parse_script(script).unwrap())
        .chunks(chunks)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = format!("{}{path}", server.url().trim_end_matches("/v1"));
    let mut out = Vec::new();
    for _ in 0..4 {
        let response = support::post_json(&url, body.to_string()).await;
        assert_eq!(response.status(), 200, "{path}");
        let text = String::from_utf8(response.bytes().await.unwrap().to_vec()).unwrap();
        out.push(clock.replace_all(&text, "\"$1\":0").into_owned());
    }
    server.shutdown().await;
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_turns_write_the_bytes_of_turns_answering_once() {
    for turn in turns() {
        let text = turn.to_string();
        // The same text four times: one message. Spaces inside make each
        // element's text its own: four messages.
        let shared = format!("[{}]", [text.as_str(); 4].join(","));
        let inner = text.strip_prefix('{').unwrap();
        let apart: Vec<String> = (0..4)
            .map(|i| format!("{{{}{inner}", " ".repeat(i)))
            .collect();
        let apart = format!("[{}]", apart.join(","));
        let rule = format!(r#"{{"rules": [{{"reply": {text}}}]}}"#);
        for chunks in [1, 3] {
            for (path, body) in calls() {
                let expected = bodies(&apart, chunks, path, &body).await;
                for script in [&shared, &rule] {
                    let actual = bodies(script, chunks, path, &body).await;
                    assert_eq!(actual, expected, "{path}, {chunks} chunks, {script}");
                }
            }
        }
    }
}
