//! `agentstream decode`: recorded-style SSE bodies and chunk files, JSON
//! output, and one clear error line for unreadable input.

use serde_json::Value;

#[path = "support/run.rs"]
mod run_support;
use run_support::{run, text};

/// Writes `contents` to a fresh file under the target directory.
fn file(name: &str, contents: &[u8]) -> String {
    run_support::file("decode", name, contents)
        .display()
        .to_string()
}

const TOOL_SSE: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Reading.\"}}]}\r\n\r\n\
: keep-alive\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c1\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\"}}]}}]}\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"a.txt\\\"}\"}}]}}]}\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":9,\"total_tokens\":59,\"prompt_tokens_details\":{\"cached_tokens\":32}}}\r\n\r\n\
data: [DONE]\r\n\r\n";

#[test]
fn an_sse_body_prints_the_trace_text_calls_and_usage() {
    let path = file("tool.sse", TOOL_SSE.as_bytes());
    let o = run(&["decode", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "start → text_start → text_delta → text_end → toolcall_start → toolcall_delta → toolcall_delta → toolcall_end → done\n\
         Reading.\n\
         toolCall: c1 read {\"path\":\"a.txt\"}\n\
         stopReason: toolUse\n\
         usage: input=18 output=9 cacheRead=32 totalTokens=59\n"
    );
}

/// The thinking signature is the reasoning field, `reasoning_content` (17
/// bytes), as Pi records it.
#[test]
fn chunks_mode_reads_one_payload_per_line() {
    let body = "{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n\
                {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n";
    let path = file("text.chunks.jsonl", body.as_bytes());
    let o = run(&["decode", "--chunks", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "start → thinking_start → thinking_delta → thinking_end → text_start → text_delta → text_end → done\n\
         Hi\n\
         thinking: 2 chars, signature 17 bytes\n\
         stopReason: stop\n\
         usage: input=0 output=0 cacheRead=0 totalTokens=0\n"
    );
}

#[test]
fn a_truncated_body_prints_the_error_and_exits_1() {
    let path = file(
        "cut.sse",
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\n",
    );
    let o = run(&["decode", &path]);
    // A recording that cannot be decoded whole is a failure (it exited 0
    // before): the trace is printed, the error said on stderr.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with(&format!("{path}: error: the stream ended before [DONE]")),
        "{}",
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    assert!(
        out.starts_with("start → text_start → text_delta → error\nHal\nstopReason: error\n"),
        "{out}"
    );
    assert!(
        out.contains("errorMessage: the stream ended before [DONE]"),
        "{out}"
    );
}

#[test]
fn jsonl_prints_every_event_in_pi_shape() {
    let path = file("tool2.sse", TOOL_SSE.as_bytes());
    let o = run(&["decode", "--jsonl", &path]);
    let events: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events.len(), 9);
    assert_eq!(events[1]["type"], "text_start");
    assert_eq!(events[5]["contentIndex"], 1);
    assert_eq!(events[5]["delta"], "{\"path\":");
    assert_eq!(events[7]["toolCall"]["arguments"]["path"], "a.txt");
    assert_eq!(events[8]["message"]["usage"]["cacheRead"], 32);
}

#[test]
fn unreadable_input_exits_2_with_one_file_line_error() {
    let o = run(&["decode", "/nonexistent/body.sse"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("/nonexistent/body.sse:1: error: cannot read file: "),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    let path = file("bad.chunks.jsonl", b"{\"choices\":[]}\n\n{\"choices\": [\n");
    let o = run(&["decode", "--chunks", &path]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("{path}:3: error: not a JSON chunk payload: ")),
        "{err}"
    );

    // Invalid UTF-8 is not unreadable input: it becomes U+FFFD, as in SSE
    // mode (see hostile_output.rs).
    let path = file("latin1.chunks.jsonl", b"{\"choices\":[]}\n\"\xE9\"\n");
    let o = run(&["decode", "--chunks", &path]);
    // Not unreadable (2), but a payload that is not a chunk: the trace is
    // printed and decode fails (1; it exited 0 before).
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\u{fffd}"), "{}", text(&o.stdout));
}

/// A cassette exchange directory under the target directory: `request.json`
/// for `path` (`"stream": stream`), `response.json` with `status`, and
/// `body` as `response.body`.
fn cassette(name: &str, path: &str, stream: bool, status: u16, body: &[u8]) -> String {
    let request = serde_json::json!({"api": "openai-completions", "method": "POST",
        "path": path, "stream": stream});
    let dir: std::path::PathBuf = [env!("CARGO_TARGET_TMPDIR"), "decode", name]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("request.json"), request.to_string()).unwrap();
    let response = serde_json::json!({"status": status, "headers": {}});
    std::fs::write(dir.join("response.json"), response.to_string()).unwrap();
    std::fs::write(dir.join("response.body"), body).unwrap();
    dir.display().to_string()
}

#[test]
fn a_cassette_of_a_call_that_did_not_stream_decodes_its_whole_answer() {
    let completion = br#"{"id": "c1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sunny.",
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}"#;
    let dir = cassette("whole", "/v1/chat/completions", false, 200, completion);
    let o = run(&["decode", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("\nSunny.\n"), "{out}");
    assert!(
        out.contains("toolCall: c1 weather {\"city\":\"Paris\"}"),
        "{out}"
    );
    assert!(out.contains("stopReason: toolUse"), "{out}");
    assert!(out.contains("usage: input=5 output=3"), "{out}");

    // Anthropic's whole message, by the cassette's path.
    let message = br#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 4, "output_tokens": 2}}"#;
    let dir = cassette("whole-anthropic", "/v1/messages", false, 200, message);
    let o = run(&["decode", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("\nHello.\nstopReason: stop"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn a_recording_that_is_not_an_event_stream_exits_1() {
    // A streamed call answered with an error body (status 200): it exited
    // 0 saying "the response is not an event stream".
    let error = br#"{"error": {"message": "Invalid model", "type": "invalid_request_error"}}"#;
    for (name, stream) in [("not-a-stream", true), ("whole-error", false)] {
        let dir = cassette(name, "/v1/chat/completions", stream, 200, error);
        let o = run(&["decode", &dir]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o.stdout));
        let err = text(&o.stderr);
        assert!(
            err.contains("error: the response is not an event stream: Invalid model"),
            "{name}: {err}"
        );
    }
    let path = file("plain.txt", b"hello\n");
    assert_eq!(run(&["decode", &path]).status.code(), Some(1));
}
