//! The server's wire output, byte for byte: the response bodies of all
//! seven APIs (Bedrock's binary messages written as their headers and
//! payloads), streaming and not, for a set of scripted scenarios (text,
//! thinking, tool calls, chunked deltas, failures), compared with
//! `tests/golden/bodies.txt`. A change to how a protocol is encoded shows
//! up here as a difference in that file.
//!
//! The wall clock's `created` / `created_at` numbers are replaced by `0`.
//! serde_json writes an object's keys in its build's order (sorted, or as
//! written when some crate of the build turns on `preserve_order`): with
//! the sorted order (`cargo test -p agentstream-serve`), the bodies are
//! compared byte for byte; with the other, line by line as JSON values.
//!
//! `GOLDEN_UPDATE=1` writes the file instead of comparing (only after a
//! deliberate change to the wire output).

use std::path::PathBuf;

use agentstream_serve::{ServeTurn, Server};
use serde_json::{json, Value};

mod support;

/// One scenario: a name, the serve script of one call, the chunks per
/// delta.
struct Scenario {
    name: &'static str,
    chunks: usize,
    script: Value,
}

fn turn(content: Value, stop: &str, usage: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "openai-completions",
           "provider": "openai", "model": "golden-model", "stopReason": stop,
           "usage": usage, "timestamp": 0})
}

fn usage(input: u64, output: u64, cache_read: u64) -> Value {
    json!({"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0,
           "totalTokens": input + output + cache_read,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

fn scenarios() -> Vec<Scenario> {
    let text = turn(
        json!([{"type": "text", "text": "Hello, \"world\"!\nLine two: café 😀."}]),
        "stop",
        usage(12, 7, 0),
    );
    let thinking = turn(
        json!([
            {"type": "thinking", "thinking": "Let me think\nabout it.", "thinkingSignature": "sig_123"},
            {"type": "text", "text": "The answer is 42."}
        ]),
        "stop",
        usage(20, 15, 5),
    );
    let tools = turn(
        json!([
            {"type": "text", "text": "Checking both."},
            {"type": "toolCall", "id": "call_1|fc_1", "name": "weather",
             "arguments": {"city": "Paris", "units": "metric"}},
            // Keys in sorted order: the arguments are written into a JSON
            // string, which the comparison with `preserve_order` (a
            // workspace build) cannot reorder.
            {"type": "toolCall", "id": "call_2|fc_2", "name": "time",
             "arguments": {"nested": {"a": [1, 2.5, null, true]}, "zone": "Europe/Paris"}}
        ]),
        "toolUse",
        usage(30, 25, 0),
    );
    let length = turn(
        json!([{"type": "text", "text": "This answer was cut"}]),
        "length",
        usage(3, 4, 0),
    );
    vec![
        Scenario {
            name: "text",
            chunks: 1,
            script: json!([text]),
        },
        Scenario {
            name: "text chunked",
            chunks: 4,
            script: json!([text]),
        },
        Scenario {
            name: "plain string turn",
            chunks: 1,
            script: json!(["Just words."]),
        },
        Scenario {
            name: "thinking",
            chunks: 1,
            script: json!([thinking]),
        },
        Scenario {
            name: "thinking chunked",
            chunks: 3,
            script: json!([thinking]),
        },
        Scenario {
            name: "tool calls",
            chunks: 1,
            script: json!([tools]),
        },
        Scenario {
            name: "tool calls chunked",
            chunks: 5,
            script: json!([tools]),
        },
        Scenario {
            name: "length",
            chunks: 2,
            script: json!([length]),
        },
        Scenario {
            name: "failure after partial text",
            chunks: 2,
            script: json!([{"stopReason": "error", "errorMessage": "upstream exploded",
                            "partialText": "I was say"}]),
        },
        Scenario {
            name: "failure before any text",
            chunks: 1,
            script: json!([{"stopReason": "error", "errorMessage": "no capacity"}]),
        },
        Scenario {
            name: "http error",
            chunks: 1,
            script: json!([{"httpError": {"status": 429, "message": "slow down",
                                          "retryAfter": 3}}]),
        },
        Scenario {
            name: "http error typed",
            chunks: 1,
            script: json!([{"httpError": {"status": 400, "message": "bad field",
                                          "type": "custom_error", "code": "bad", "param": "messages"}}]),
        },
        Scenario {
            name: "stream error",
            chunks: 2,
            script: json!([{"turn": tools, "streamError": {"message": "overloaded", "type": "overloaded_error"},
                            "afterEvents": 3}]),
        },
    ]
}

/// The seven APIs: a name, the path of a call, its body (Azure's as the
/// `AzureOpenAI` SDK posts it, Mistral's under serve's `/mistral` prefix,
/// Bedrock's with the model in the path).
fn calls(stream: bool) -> [(&'static str, String, Value); 7] {
    let bedrock = if stream {
        "/model/golden-model/converse-stream"
    } else {
        "/model/golden-model/converse"
    };
    let gemini = if stream {
        "/v1beta/models/golden-model:streamGenerateContent?alt=sse"
    } else {
        "/v1beta/models/golden-model:generateContent"
    };
    [
        (
            "openai",
            "/v1/chat/completions".into(),
            json!({"model": "golden-model", "stream": stream,
                   "stream_options": {"include_usage": true},
                   "messages": [{"role": "user", "content": "Hi"}]}),
        ),
        (
            "anthropic",
            "/v1/messages".into(),
            json!({"model": "golden-model", "stream": stream, "max_tokens": 64,
                   "messages": [{"role": "user", "content": "Hi"}]}),
        ),
        (
            "responses",
            "/v1/responses".into(),
            json!({"model": "golden-model", "stream": stream,
                   "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}),
        ),
        (
            "google",
            gemini.into(),
            json!({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}),
        ),
        (
            "azure",
            "/openai/v1/responses?api-version=v1".into(),
            json!({"model": "golden-model", "stream": stream,
                   "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}),
        ),
        (
            "mistral",
            "/mistral/v1/chat/completions".into(),
            json!({"model": "golden-model", "stream": stream,
                   "messages": [{"role": "user", "content": "Hi"}]}),
        ),
        (
            "bedrock",
            bedrock.into(),
            json!({"messages": [{"role": "user", "content": [{"text": "Hi"}]}],
                   "inferenceConfig": {"maxTokens": 64}}),
        ),
    ]
}

/// A binary event-stream body (Bedrock's) as text: per message a line of
/// its headers (`name=value`), then its payload's line; a body that does
/// not decode says where. The headers and payload determine the message's
/// bytes (its lengths and checksums).
fn event_stream_text(body: &[u8]) -> String {
    use agentstream_wire::eventstream::{EventStreamDecoder, HeaderValue};
    let mut decoder = EventStreamDecoder::new();
    decoder.feed(body);
    let mut out = String::new();
    while let Some(message) = decoder.next_message() {
        let message = match message {
            Ok(message) => message,
            Err(error) => {
                out.push_str(&format!("undecodable: {error}\n"));
                return out;
            }
        };
        let headers: Vec<String> = message
            .headers()
            .map(|header| match header.value {
                HeaderValue::String(text) => format!("{}={text}", header.name),
                other => format!("{}={other:?}", header.name),
            })
            .collect();
        out.push_str(&format!("event-stream: {}\n", headers.join(" ")));
        out.push_str(&String::from_utf8_lossy(message.payload()));
        out.push('\n');
    }
    if decoder.buffered() > 0 {
        out.push_str(&format!("trailing bytes: {}\n", decoder.buffered()));
    }
    out
}

/// `text` with the number after each `"created":` / `"created_at":` set
/// to 0 (the wall clock).
fn without_clock(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["\"created\":", "\"created_at\":"]
            .iter()
            .filter_map(|key| rest.find(key).map(|at| (at, key.len())))
            .min();
        let Some((at, len)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at + len]);
        rest = &rest[at + len..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push('0');
            rest = &rest[digits..];
        }
    }
}

async fn post(url: &str, body: &Value) -> String {
    let response = support::post_json(url, body.to_string()).await;
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| format!(" retry-after={}", v.to_str().unwrap()))
        .unwrap_or_default();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.bytes().await.unwrap();
    let text = if kind == "application/vnd.amazon.eventstream" {
        event_stream_text(&body)
    } else {
        String::from_utf8_lossy(&body).into_owned()
    };
    format!("HTTP {status} {kind}{retry}\n{}", without_clock(&text))
}

async fn everything() -> String {
    let mut out = String::new();
    for scenario in scenarios() {
        for stream in [true, false] {
            for (api, path, body) in calls(stream) {
                let script: Vec<ServeTurn> = scenario
                    .script
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| ServeTurn::from_value(v.clone()).unwrap())
                    .collect();
                let server = Server::from_script(script)
                    .chunks(scenario.chunks)
                    .bind("127.0.0.1:0")
                    .await
                    .unwrap();
                let base = server.url();
                let url = format!("{}{path}", base.trim_end_matches("/v1"));
                let answer = post(&url, &body).await;
                server.shutdown().await;
                let mode = if stream { "stream" } else { "whole" };
                out.push_str(&format!("=== {} / {api} / {mode}\n", scenario.name));
                out.push_str(&answer);
                if !answer.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Whether serde_json keeps the keys in the order written
/// (`preserve_order` is on in this build).
fn keys_as_written() -> bool {
    json!({"b": 1, "a": 2}).to_string().starts_with(r#"{"b""#)
}

/// A line, as a JSON value when it is one (after `data: ` too).
fn comparable(line: &str) -> Result<Value, String> {
    let json = line.strip_prefix("data: ").unwrap_or(line);
    serde_json::from_str(json).map_err(|_| line.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_apis_bodies_are_the_golden_bytes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bodies.txt");
    let actual = everything().await;
    if std::env::var_os("GOLDEN_UPDATE").is_some() {
        assert!(!keys_as_written(), "write the golden file with sorted keys");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    if keys_as_written() {
        let lines = |text: &str| text.lines().map(comparable).collect::<Vec<_>>();
        assert_eq!(lines(&actual), lines(&expected));
    } else if actual != expected {
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or(actual.lines().count().min(expected.lines().count()));
        panic!(
            "the bodies differ from tests/golden/bodies.txt from line {}:\n  actual:   {:?}\n  expected: {:?}",
            first + 1,
            actual.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}
