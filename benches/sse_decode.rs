//! Decoding a large recorded-style Chat Completions stream: agentstream's
//! `OpenAiStream` (SSE decoder + chunk projector, producing the full event
//! protocol with partial snapshots) against `eventsource-stream` + serde_json
//! (each event's data parsed into a `serde_json::Value`, the text deltas
//! appended to a `String`), on the same bytes fed in the same pieces. A
//! third input is an Anthropic Messages stream, decoded by ours with
//! `AnthropicStream` and by the peer the same way. Two more are an OpenAI
//! Responses stream and a Gemini `streamGenerateContent` stream, decoded by
//! ours with the SSE decoder feeding `ResponsesProjector` /
//! `GeminiProjector` (what the generic SSE stream does with them).
//!
//! Run with `cargo bench --bench sse_decode`. After
//! criterion's groups it prints a markdown table: throughput (MB/s, best of
//! several timed passes) and allocations (a counting global allocator).

// criterion's macros generate undocumented items.
#![allow(missing_docs)]

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Instant;

use agentstream_testkit::{allocations as allocations_so_far, CountingAllocator};
use agentstream_wire::anthropic::AnthropicStream;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::http::ResponseStream;
use agentstream_wire::openai::OpenAiStream;
use agentstream_wire::responses::ResponsesProjector;
use agentstream_wire::sse::SseDecoder;
use criterion::{criterion_group, Criterion, Throughput};
use eventsource_stream::Eventsource;
use futures_util::{stream, FutureExt, StreamExt};

/// Counts every allocation (and reallocation) of the bench binary: the
/// workspace's one counting allocator, read process-wide.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The shape of the generated chunks.
#[derive(Clone, Copy, Debug)]
enum Style {
    Compact,
    OpenAi,
    /// Anthropic Messages: `event:` + `data:` events, text deltas in
    /// `content_block_delta` payloads.
    Anthropic,
    /// OpenAI Responses: `event:` + `data:` events, text in
    /// `response.output_text.delta` payloads; the finished item and
    /// `response.completed` repeat the whole text, as OpenAI sends them.
    Responses,
    /// Gemini: `data:` lines, each a `GenerateContentResponse` with one
    /// text part and the cumulative `usageMetadata`.
    Gemini,
}

/// The body size to reach, and how many pieces it is fed in.
const TARGET_BYTES: usize = 10_000_000;
const PIECES: usize = 100_000;

/// Rounds of the summary's timing (three passes of each side per round).
const ROUNDS: usize = 5;

/// A recorded-style body: a role chunk, text deltas of one to three words
/// in the chunk shape (with `: keep-alive` comments now and then), the
/// finish chunk, a usage chunk and `[DONE]`. Returns it with its event
/// count.
fn body_of(style: Style) -> (Vec<u8>, usize) {
    match style {
        Style::Anthropic => return anthropic_body(),
        Style::Responses => return responses_body(),
        Style::Gemini => return gemini_body(),
        _ => {}
    }
    let words = [
        "The ",
        "quick ",
        "brown ",
        "fox ",
        "jumps ",
        "over ",
        "the ",
        "lazy ",
        "dog; ",
        "naïve ",
        "café ",
        "→ ",
        "ünïcödé ",
        "text ",
        "🙂 ",
    ];
    let head = match style {
        // Compact, like vLLM or llama.cpp: about 100 bytes per event, so
        // 10 MB hold about 100k chunks.
        Style::Compact => {
            r#"{"id":"cmpl-9a8b","object":"chat.completion.chunk","choices":[{"index":0,"delta":"#
        }
        // What api.openai.com sends: about 260 bytes per event.
        Style::OpenAi | Style::Anthropic | Style::Responses | Style::Gemini => {
            r#"{"id":"chatcmpl-9a8b7c6d5e4f3a2b1c0d","object":"chat.completion.chunk","created":1733140000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":"#
        }
    };
    let tail = match style {
        Style::Compact => "}]}",
        Style::OpenAi | Style::Anthropic | Style::Responses | Style::Gemini => {
            r#","logprobs":null,"finish_reason":null}]}"#
        }
    };
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut events = 0;
    let mut push = |out: &mut String, data: &str| {
        out.push_str("data: ");
        out.push_str(data);
        out.push_str("\n\n");
        events += 1;
    };
    push(
        &mut out,
        &format!(
            r#"{head}{{"role":"assistant","content":""}},"logprobs":null,"finish_reason":null}}]}}"#
        ),
    );
    let mut i = 0usize;
    while out.len() < TARGET_BYTES - 600 {
        let delta: String = (0..1 + i % 3)
            .map(|k| words[(i * 7 + k) % words.len()])
            .collect();
        let escaped = serde_json::to_string(&delta).unwrap();
        push(&mut out, &format!(r#"{head}{{"content":{escaped}}}{tail}"#));
        if i % 97 == 0 {
            out.push_str(": keep-alive\n\n");
        }
        i += 1;
    }
    push(
        &mut out,
        &format!(r#"{head}{{}},"logprobs":null,"finish_reason":"stop"}}]}}"#),
    );
    push(
        &mut out,
        r#"{"id":"chatcmpl-9a8b7c6d5e4f3a2b1c0d","object":"chat.completion.chunk","created":1733140000,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":60000,"total_tokens":61200,"prompt_tokens_details":{"cached_tokens":1024}}}"#,
    );
    out.push_str("data: [DONE]\n\n");
    let events = events + 1;
    (out.into_bytes(), events)
}

const WORDS: [&str; 15] = [
    "The ",
    "quick ",
    "brown ",
    "fox ",
    "jumps ",
    "over ",
    "the ",
    "lazy ",
    "dog; ",
    "naïve ",
    "café ",
    "→ ",
    "ünïcödé ",
    "text ",
    "🙂 ",
];

/// An Anthropic-shaped body as api.anthropic.com sends it: `message_start`
/// with usage, a text block of one-to-three-word `text_delta`s (about 130
/// bytes per event with its `event:` line), `ping`s now and then,
/// `content_block_stop`, `message_delta` with the stop reason and
/// cumulative usage, `message_stop`. Returns it with its event count.
fn anthropic_body() -> (Vec<u8>, usize) {
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut events = 0;
    let mut push = |out: &mut String, name: &str, data: &str| {
        out.push_str("event: ");
        out.push_str(name);
        out.push_str("\ndata: ");
        out.push_str(data);
        out.push_str("\n\n");
        events += 1;
    };
    push(
        &mut out,
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":1}}}"#,
    );
    push(
        &mut out,
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    let mut i = 0usize;
    while out.len() < TARGET_BYTES - 600 {
        let delta: String = (0..1 + i % 3)
            .map(|k| WORDS[(i * 7 + k) % WORDS.len()])
            .collect();
        let escaped = serde_json::to_string(&delta).unwrap();
        push(
            &mut out,
            "content_block_delta",
            &format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{escaped}}}}}"#
            ),
        );
        if i % 97 == 0 {
            push(&mut out, "ping", r#"{"type": "ping"}"#);
        }
        i += 1;
    }
    push(
        &mut out,
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    push(
        &mut out,
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":60000}}"#,
    );
    push(&mut out, "message_stop", r#"{"type":"message_stop"}"#);
    (out.into_bytes(), events)
}

/// The one-to-three-word delta number `i`, as the other bodies make them.
fn words(i: usize) -> String {
    (0..1 + i % 3)
        .map(|k| WORDS[(i * 7 + k) % WORDS.len()])
        .collect()
}

/// A Responses-shaped body as api.openai.com sends it: `response.created`,
/// a `message` item and its `output_text` part, `response.output_text.delta`s
/// (about 200 bytes per event with its `event:` line), then the `.done`
/// events and `response.completed`, which repeat the whole text. Returns
/// it with its event count.
fn responses_body() -> (Vec<u8>, usize) {
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut events = 0;
    let mut push = |out: &mut String, data: &str| {
        let kind = data[9..].split('"').next().unwrap_or("");
        out.push_str("event: ");
        out.push_str(kind);
        out.push_str("\ndata: ");
        out.push_str(data);
        out.push_str("\n\n");
        events += 1;
    };
    let id = "msg_0d5b91a37ec2e2620169cb13c670e081919f4d3f4110384d12";
    push(
        &mut out,
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_0d5b91a37ec2e2620169cb13c670e081919f4d3f4110384d12","object":"response","status":"in_progress","model":"gpt-5-mini-2025-08-07","output":[],"usage":null}}"#,
    );
    push(
        &mut out,
        &format!(
            r#"{{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{{"id":"{id}","type":"message","status":"in_progress","content":[],"role":"assistant"}}}}"#
        ),
    );
    push(
        &mut out,
        &format!(
            r#"{{"type":"response.content_part.added","sequence_number":2,"item_id":"{id}","output_index":0,"content_index":0,"part":{{"type":"output_text","annotations":[],"logprobs":[],"text":""}}}}"#
        ),
    );
    let mut text = String::new();
    let mut i = 0usize;
    // The text comes three more times at the end.
    while out.len() + 4 * text.len() < TARGET_BYTES - 2000 {
        let delta = words(i);
        text.push_str(&delta);
        let escaped = serde_json::to_string(&delta).unwrap();
        push(
            &mut out,
            &format!(
                r#"{{"type":"response.output_text.delta","sequence_number":{},"item_id":"{id}","output_index":0,"content_index":0,"delta":{escaped},"logprobs":[],"obfuscation":"Xq3"}}"#,
                i + 3
            ),
        );
        i += 1;
    }
    let whole = serde_json::to_string(&text).unwrap();
    push(
        &mut out,
        &format!(
            r#"{{"type":"response.output_text.done","sequence_number":0,"item_id":"{id}","output_index":0,"content_index":0,"text":{whole},"logprobs":[]}}"#
        ),
    );
    push(
        &mut out,
        &format!(
            r#"{{"type":"response.output_item.done","sequence_number":0,"output_index":0,"item":{{"id":"{id}","type":"message","status":"completed","content":[{{"type":"output_text","annotations":[],"logprobs":[],"text":{whole}}}],"role":"assistant"}}}}"#
        ),
    );
    push(
        &mut out,
        &format!(
            r#"{{"type":"response.completed","sequence_number":0,"response":{{"id":"resp_1","status":"completed","output":[{{"id":"{id}","type":"message","content":[{{"type":"output_text","text":{whole}}}]}}],"usage":{{"input_tokens":1200,"input_tokens_details":{{"cached_tokens":1024}},"output_tokens":60000,"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":61200}}}}}}"#
        ),
    );
    (out.into_bytes(), events)
}

/// A Gemini-shaped body as generativelanguage.googleapis.com sends it with
/// `alt=sse`: one `GenerateContentResponse` per event with a text part of
/// one to three words and the cumulative usage (about 330 bytes per
/// event), the last with `finishReason: STOP`. Returns it with its event
/// count.
fn gemini_body() -> (Vec<u8>, usize) {
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut events = 0;
    let mut i = 0usize;
    loop {
        let last = out.len() >= TARGET_BYTES - 600;
        let escaped = serde_json::to_string(&words(i)).unwrap();
        let finish = if last {
            r#","finishReason":"STOP""#
        } else {
            ""
        };
        out.push_str(&format!(
            r#"data: {{"candidates":[{{"content":{{"parts":[{{"text":{escaped}}}],"role":"model"}}{finish},"index":0}}],"usageMetadata":{{"promptTokenCount":9,"candidatesTokenCount":{},"totalTokenCount":{},"promptTokensDetails":[{{"modality":"TEXT","tokenCount":9}}],"thoughtsTokenCount":185}},"modelVersion":"gemini-2.5-flash","responseId":"bH6LaZW8Fp_3nsEPqtaSwQ4"}}"#,
            i + 1,
            i + 195
        ));
        out.push_str("\r\n\r\n");
        events += 1;
        i += 1;
        if last {
            break;
        }
    }
    (out.into_bytes(), events)
}

/// `PIECES` pieces at pseudo-random boundaries (inside UTF-8 characters
/// and lines included).
fn split(body: &[u8]) -> Vec<&[u8]> {
    let mean = body.len() / PIECES;
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut pieces = Vec::with_capacity(PIECES + 1);
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (1 + (state as usize) % (2 * mean)).min(rest.len());
        let (piece, tail) = rest.split_at(len);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

/// Ours: every piece through `OpenAiStream` (or `AnthropicStream`);
/// returns the number of events and the final text length.
fn ours(pieces: &[&[u8]]) -> (usize, usize) {
    ours_with(pieces, OpenAiStream::new("gpt-4o-mini", "openai", None))
}

/// Ours on an Anthropic-shaped body.
fn ours_anthropic(pieces: &[&[u8]]) -> (usize, usize) {
    ours_with(
        pieces,
        AnthropicStream::new("claude-sonnet-4-5", "anthropic", None),
    )
}

/// Ours on a Responses- or Gemini-shaped body: the SSE decoder feeding the
/// projector, as the SSE stream drives it.
fn ours_projector(pieces: &[&[u8]], style: Style) -> (usize, usize) {
    let mut decoder = SseDecoder::new();
    let mut responses = ResponsesProjector::new("gpt-5-mini", "openai");
    let mut gemini = GeminiProjector::new("gemini-2.5-flash", "google");
    let mut out = Vec::new();
    let mut events = 0;
    let mut text = 0;
    let mut drain = |out: &mut Vec<agentstream::model::ModelEvent>| {
        for event in out.drain(..) {
            events += 1;
            if let Some(message) = event.terminal_message() {
                text = message.text().len();
            }
            black_box(&event);
        }
    };
    let mut push = |event: &agentstream_wire::sse::SseEvent, out: &mut Vec<_>| match style {
        Style::Gemini => gemini.push_data(&event.data, out),
        _ => responses.push_data(&event.data, out),
    };
    for piece in pieces {
        decoder
            .feed_ref(piece, |event| push(event, &mut out))
            .expect("within the limits");
        drain(&mut out);
    }
    decoder.finish_ref(|event| push(event, &mut out));
    match style {
        Style::Gemini => gemini.finish(&mut out),
        _ => responses.finish(&mut out),
    }
    drain(&mut out);
    (events, text)
}

fn ours_with(pieces: &[&[u8]], mut stream: impl ResponseStream) -> (usize, usize) {
    let mut events = 0;
    let mut text = 0;
    let mut count = |event: agentstream::model::ModelEvent| {
        events += 1;
        if let Some(message) = event.terminal_message() {
            text = message.text().len();
        }
        black_box(&event);
    };
    for piece in pieces {
        stream.feed(piece).for_each(&mut count);
    }
    stream.finish_input().for_each(&mut count);
    (events, text)
}

/// The peer: eventsource-stream's decoder, each data payload parsed with
/// serde_json, the text deltas appended; returns the event count and the
/// text length.
fn peer(pieces: &[&[u8]]) -> (usize, usize) {
    let source = stream::iter(pieces.iter().map(|piece| Ok::<&[u8], Infallible>(*piece)));
    let run = async {
        let mut events = source.eventsource();
        let mut count = 0;
        let mut text = String::new();
        while let Some(Ok(event)) = events.next().await {
            count += 1;
            if event.data == "[DONE]" {
                break;
            }
            let value: serde_json::Value = serde_json::from_str(&event.data).expect("json");
            if let Some(delta) = value["choices"][0]["delta"]["content"].as_str() {
                text.push_str(delta);
            }
            // Responses: `{"type":"response.output_text.delta","delta":…}`.
            if value["type"] == "response.output_text.delta" {
                if let Some(delta) = value["delta"].as_str() {
                    text.push_str(delta);
                }
            }
            // Gemini: `{"candidates":[{"content":{"parts":[{"text":…}]}}]}`.
            if let Some(delta) = value["candidates"][0]["content"]["parts"][0]["text"].as_str() {
                text.push_str(delta);
            }
            // Anthropic's shape: `{"type":"content_block_delta","delta":{"text":…}}`.
            if value["type"] == "content_block_delta" {
                if let Some(delta) = value["delta"]["text"].as_str() {
                    text.push_str(delta);
                }
            }
            black_box(&value);
        }
        (count, text.len())
    };
    run.now_or_never().expect("the input is all in memory")
}

fn bench(c: &mut Criterion) {
    let (body, _) = body_of(Style::Compact);
    let pieces = split(&body);
    let mut group = c.benchmark_group("sse_decode 10 MB");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.sample_size(10);
    group.bench_function("ours", |b| b.iter(|| ours(black_box(&pieces))));
    group.bench_function("eventsource-stream + serde_json", |b| {
        b.iter(|| peer(black_box(&pieces)))
    });
    group.finish();
    let (anthropic, _) = body_of(Style::Anthropic);
    let pieces = split(&anthropic);
    let mut group = c.benchmark_group("sse_decode 10 MB anthropic");
    group.throughput(Throughput::Bytes(anthropic.len() as u64));
    group.sample_size(10);
    group.bench_function("ours", |b| b.iter(|| ours_anthropic(black_box(&pieces))));
    group.bench_function("eventsource-stream + serde_json", |b| {
        b.iter(|| peer(black_box(&pieces)))
    });
    group.finish();
    for (style, name) in [(Style::Responses, "responses"), (Style::Gemini, "gemini")] {
        let (body, _) = body_of(style);
        let pieces = split(&body);
        let mut group = c.benchmark_group(format!("sse_decode 10 MB {name}"));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.sample_size(10);
        group.bench_function("ours", |b| {
            b.iter(|| ours_projector(black_box(&pieces), style))
        });
        group.bench_function("eventsource-stream + serde_json", |b| {
            b.iter(|| peer(black_box(&pieces)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);

/// Best-of-`runs` throughput in MB/s (10^6 bytes) and the allocations of
/// one pass.
fn measure(
    runs: usize,
    bytes: usize,
    f: impl Fn() -> (usize, usize),
) -> (f64, u64, (usize, usize)) {
    let before = allocations_so_far();
    let result = f();
    let allocations = (allocations_so_far() - before) as u64;
    let best = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (bytes as f64 / best / 1e6, allocations, result)
}

fn summary() {
    println!("<!-- sse_decode:begin -->");
    println!(
        "| input | decoder | MB/s (best of {}) | allocations | per piece | per SSE event |",
        3 * ROUNDS
    );
    println!("|---|---|---:|---:|---:|---:|");
    let mut notes = Vec::new();
    let only = std::env::var("SSE_DECODE_ONLY").ok();
    for style in [
        Style::Compact,
        Style::OpenAi,
        Style::Anthropic,
        Style::Responses,
        Style::Gemini,
    ] {
        if only.as_deref().is_some_and(|o| o != format!("{style:?}")) {
            continue;
        }
        let (body, events) = body_of(style);
        let pieces = split(&body);
        // Alternate the two so load from elsewhere on the machine hits both.
        let (mut ours_mbs, mut peer_mbs) = (0.0f64, 0.0f64);
        let (mut ours_allocs, mut peer_allocs) = (0, 0);
        let (mut ours_result, mut peer_result) = ((0, 0), (0, 0));
        for _ in 0..ROUNDS {
            let (mbs, allocs, result) = match style {
                Style::Anthropic => measure(3, body.len(), || ours_anthropic(&pieces)),
                Style::Responses | Style::Gemini => {
                    measure(3, body.len(), || ours_projector(&pieces, style))
                }
                _ => measure(3, body.len(), || ours(&pieces)),
            };
            (ours_mbs, ours_allocs, ours_result) = (ours_mbs.max(mbs), allocs, result);
            let (mbs, allocs, result) = measure(3, body.len(), || peer(&pieces));
            (peer_mbs, peer_allocs, peer_result) = (peer_mbs.max(mbs), allocs, result);
        }
        assert_eq!(ours_result.1, peer_result.1, "both decode the same text");
        let input = format!(
            "{style:?}: {:.1} MB, {events} events, {} pieces",
            body.len() as f64 / 1e6,
            pieces.len()
        );
        let per = |allocs: u64, n: usize| allocs as f64 / n as f64;
        println!(
            "| {input} | ours: `{}` | {ours_mbs:.1} | {ours_allocs} | {:.2} | {:.2} |",
            match style {
                Style::Anthropic => "AnthropicStream",
                Style::Responses => "SseDecoder + ResponsesProjector",
                Style::Gemini => "SseDecoder + GeminiProjector",
                _ => "OpenAiStream",
            },
            per(ours_allocs, pieces.len()),
            per(ours_allocs, events)
        );
        println!(
            "| {input} | eventsource-stream + serde_json | {peer_mbs:.1} | {peer_allocs} | {:.2} | {:.2} |",
            per(peer_allocs, pieces.len()),
            per(peer_allocs, events)
        );
        notes.push(format!("{style:?}: **{:.2}×**", ours_mbs / peer_mbs));
    }
    println!();
    println!(
        "Throughput ratio ours / peer: {} (target ≥ 2×).",
        notes.join(", ")
    );
    println!("<!-- sse_decode:end -->");
}

fn main() {
    // `SSE_DECODE_PROFILE=ours|peer|ours-anthropic|peer-anthropic`: one pass of one side and nothing
    // else, for a profiler (callgrind counts instructions, which the load
    // of a shared machine does not change).
    if let Ok(side) = std::env::var("SSE_DECODE_PROFILE") {
        // `-anthropic` profiles the Anthropic-shaped input; only the input
        // profiled is generated.
        let style = if side.ends_with("-anthropic") {
            Style::Anthropic
        } else if side.ends_with("-responses") {
            Style::Responses
        } else if side.ends_with("-gemini") {
            Style::Gemini
        } else {
            Style::Compact
        };
        let (body, _) = body_of(style);
        let pieces = split(&body);
        let result = match side.as_str() {
            "peer" | "peer-anthropic" | "peer-responses" | "peer-gemini" => peer(&pieces),
            "ours-anthropic" => ours_anthropic(&pieces),
            "ours-responses" | "ours-gemini" => ours_projector(&pieces, style),
            _ => ours(&pieces),
        };
        println!("{side}: {result:?}");
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
