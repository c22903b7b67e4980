//! Rough throughput of the SSE decoder plus the chunk projector on a
//! generated recorded-style stream: 10 MB in 100k chunks (text
//! deltas, then a tool call), fed in 16 KiB pieces, as an HTTP body would
//! arrive. Not a benchmark harness; run it in release mode:
//!
//! ```text
//! cargo run --release -p agentstream-wire --example openai_throughput
//! ```

use std::time::Instant;

use agentstream_wire::openai::OpenAiStream;

fn main() {
    let chunks = 100_000;
    let mut body = String::new();
    let filler = "x".repeat(10);
    for i in 0..chunks - 2_000 {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" word{i} {filler}\"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\\\"\"}}]}}]}\n\n");
    for _ in 0..1_997 {
        body.push_str(&format!("data: {{\"id\":\"chatcmpl-1\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{filler}{filler}\"}}}}]}},\"finish_reason\":null}}]}}\n\n"));
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n");
    body.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\ndata: [DONE]\n\n");
    // Pad to 10 MB with keep-alive comments spread over the stream's end.
    while body.len() < 10_000_000 {
        body.push_str(": keep-alive padding to reach the target size of the stream\n");
    }
    let bytes = body.as_bytes();
    let mut best = f64::MAX;
    let mut events = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let mut stream = OpenAiStream::new("gpt-4o", "openai", None);
        events = 0;
        for piece in bytes.chunks(16 * 1024) {
            events += stream.feed(piece).count();
        }
        events += stream.finish_input().count();
        best = best.min(start.elapsed().as_secs_f64());
        assert!(stream.is_finished());
    }
    let mb = bytes.len() as f64 / 1e6;
    println!(
        "{mb:.1} MB, {chunks} chunks, {events} events: best of 5 {:.1} ms = {:.0} MB/s, {:.2} µs/chunk",
        best * 1e3,
        mb / best,
        best * 1e6 / chunks as f64
    );
}
