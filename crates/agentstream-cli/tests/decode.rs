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
fn a_truncated_body_prints_the_error_and_still_exits_0() {
    let path = file(
        "cut.sse",
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\n",
    );
    let o = run(&["decode", &path]);
    assert_eq!(o.status.code(), Some(0));
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
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\u{fffd}"), "{}", text(&o.stdout));
}
