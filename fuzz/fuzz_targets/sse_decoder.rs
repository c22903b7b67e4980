//! The SSE decoder and the whole OpenAI stream fed arbitrary bytes in
//! arbitrary pieces: no panic, the same events whatever the split, limits
//! that hold, and every event sequence valid under the protocol checker.
#![no_main]

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::limits::Limits;
use agentstream_wire::openai::OpenAiStream;
use agentstream_wire::sse::SseDecoder;
use libfuzzer_sys::fuzz_target;

/// Small limits, so the fuzzer reaches them.
const LIMITS: Limits = Limits::DEFAULT
    .with_max_line_bytes(256)
    .with_max_event_data_bytes(512)
    .with_max_response_bytes(4096)
    .with_max_content_blocks(8)
    .with_max_tool_calls(4)
    .with_max_tool_argument_bytes(128);

fuzz_target!(|input: &[u8]| {
    // The first byte picks the piece size, the rest is the body.
    let Some((&size, body)) = input.split_first() else {
        return;
    };
    let size = usize::from(size % 32) + 1;

    // Decoding in pieces gives the events of decoding at once.
    let mut whole = SseDecoder::new().with_limits(LIMITS);
    let mut expected = Vec::new();
    let whole_result = whole.feed(body, |e| expected.push(e));
    whole.finish(|e| expected.push(e));
    let mut split = SseDecoder::new().with_limits(LIMITS);
    let mut got = Vec::new();
    let mut split_result = Ok(());
    for piece in body.chunks(size) {
        split_result = split.feed(piece, |e| got.push(e));
        if split_result.is_err() {
            break;
        }
    }
    split.finish(|e| got.push(e));
    assert_eq!(whole_result.is_err(), split_result.is_err());
    if whole_result.is_ok() {
        assert_eq!(expected, got);
    }
    for event in &got {
        assert!(event.data.len() <= LIMITS.max_event_data_bytes);
    }

    // The OpenAI stream over the same pieces keeps the protocol.
    let mut stream = OpenAiStream::new("m", "p", None).with_limits(LIMITS);
    let mut events: Vec<ModelEvent> = Vec::new();
    for piece in body.chunks(size) {
        events.extend(stream.feed(piece));
    }
    events.extend(stream.finish_input());
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
});
