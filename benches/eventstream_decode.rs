//! Decoding a Bedrock-style `ConverseStream` body of AWS event-stream
//! messages: agentstream's `EventStreamDecoder` against the AWS Rust SDK's
//! `aws-smithy-eventstream` (`MessageFrameDecoder` over a `BytesMut`), on
//! the same bytes fed in the same pieces. Each side checks both
//! checksums, parses the headers, and reads each message's `:event-type`
//! and payload length.
//!
//! Run with `cargo bench --bench eventstream_decode`. It prints a
//! markdown table: throughput (MB/s, best of several timed passes), the
//! ratio, and allocations per message (a counting global allocator).

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use agentstream_testkit::{allocations as allocations_so_far, CountingAllocator};
use agentstream_wire::eventstream::{encode_event, EventStreamDecoder};
use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use bytes::BytesMut;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const TARGET_BYTES: usize = 10_000_000;
/// What one read from a socket gives, about.
const PIECE: usize = 4096;
const PASSES: usize = 7;

/// `contentBlockDelta` text messages of a few words each, with a
/// `messageStart` before and `messageStop` and `metadata` after, as
/// Bedrock sends them.
fn body() -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut messages = 0;
    encode_event("messageStart", br#"{"role":"assistant"}"#, &mut out).unwrap();
    let words = [
        "The quick ",
        "brown fox ",
        "jumps over",
        " the lazy dog. ",
        "\u{e9}t\u{e9} ",
    ];
    let mut i = 0;
    while out.len() < TARGET_BYTES {
        let payload = format!(
            r#"{{"contentBlockIndex":0,"delta":{{"text":"{}"}},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRSTU"}}"#,
            words[i % words.len()]
        );
        encode_event("contentBlockDelta", payload.as_bytes(), &mut out).unwrap();
        i += 1;
        messages += 1;
    }
    encode_event("contentBlockStop", br#"{"contentBlockIndex":0}"#, &mut out).unwrap();
    encode_event("messageStop", br#"{"stopReason":"end_turn"}"#, &mut out).unwrap();
    encode_event(
        "metadata",
        br#"{"usage":{"inputTokens":12,"outputTokens":900,"totalTokens":912},"metrics":{"latencyMs":800}}"#,
        &mut out,
    )
    .unwrap();
    (out, messages + 4)
}

/// Ours: (messages, payload bytes, a checksum of the event types).
fn ours(body: &[u8]) -> (usize, usize, usize) {
    let mut decoder = EventStreamDecoder::new();
    let (mut count, mut payload, mut types) = (0, 0, 0);
    for piece in body.chunks(PIECE) {
        decoder.feed(piece);
        while let Some(message) = decoder.next_message() {
            let message = message.unwrap();
            types += message.header_str(":event-type").map_or(0, str::len);
            payload += message.payload().len();
            count += 1;
        }
    }
    decoder.finish().unwrap();
    (count, payload, types)
}

/// aws-smithy-eventstream, the same reads.
fn smithy(body: &[u8]) -> (usize, usize, usize) {
    let mut decoder = MessageFrameDecoder::new();
    let mut buffer = BytesMut::new();
    let (mut count, mut payload, mut types) = (0, 0, 0);
    for piece in body.chunks(PIECE) {
        buffer.extend_from_slice(piece);
        while let DecodedFrame::Complete(message) = decoder.decode_frame(&mut buffer).unwrap() {
            types += message
                .headers()
                .iter()
                .find(|header| header.name().as_str() == ":event-type")
                .and_then(|header| header.value().as_string().ok())
                .map_or(0, |value| value.as_str().len());
            payload += message.payload().len();
            count += 1;
        }
    }
    assert!(buffer.is_empty());
    (count, payload, types)
}

/// Best MB/s over the passes, and allocations per message of one pass.
fn measure(body: &[u8], messages: usize, decode: fn(&[u8]) -> (usize, usize, usize)) -> (f64, f64) {
    let before = allocations_so_far();
    let result = black_box(decode(black_box(body)));
    let allocations = allocations_so_far() - before;
    assert_eq!(result.0, messages);
    let mut best = f64::MAX;
    for _ in 0..PASSES {
        let start = Instant::now();
        black_box(decode(black_box(body)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    (
        body.len() as f64 / best / 1e6,
        allocations as f64 / messages as f64,
    )
}

fn main() {
    let (body, messages) = body();
    assert_eq!(
        ours(&body),
        smithy(&body),
        "both sides read the same messages"
    );
    let (ours_mbs, ours_allocs) = measure(&body, messages, ours);
    let (smithy_mbs, smithy_allocs) = measure(&body, messages, smithy);
    println!(
        "\nevent-stream decoding, {} bytes, {} messages, fed in {} B pieces\n",
        body.len(),
        messages,
        PIECE
    );
    println!("| decoder | MB/s | allocations / message |");
    println!("|---|---:|---:|");
    println!("| agentstream EventStreamDecoder | {ours_mbs:.0} | {ours_allocs:.3} |");
    println!(
        "| aws-smithy-eventstream MessageFrameDecoder | {smithy_mbs:.0} | {smithy_allocs:.3} |"
    );
    println!(
        "\nratio (ours / aws-smithy-eventstream): {:.2}x",
        ours_mbs / smithy_mbs
    );
}
