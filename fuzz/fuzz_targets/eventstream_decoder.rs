//! The event-stream decoder fed arbitrary bytes in arbitrary pieces: no
//! panic, the same messages and the same error whatever the split, every
//! message within the limit, and every decoded message re-encoded to the
//! very bytes it came from.
#![no_main]

use agentstream_wire::eventstream::{encode_message, EventStreamDecoder, Header};
use libfuzzer_sys::fuzz_target;

/// Small, so the fuzzer reaches it.
const MAX: usize = 2048;

/// Every message (its bytes re-encoded) and the final result.
fn decode(body: &[u8], size: usize) -> (Vec<Vec<u8>>, Result<(), String>) {
    let mut decoder = EventStreamDecoder::new().with_max_message_bytes(MAX);
    let mut messages = Vec::new();
    for piece in body.chunks(size) {
        decoder.feed(piece);
        while let Some(message) = decoder.next_message() {
            match message {
                Ok(message) => {
                    let headers: Vec<Header<'_>> = message.headers().collect();
                    let mut bytes = Vec::new();
                    encode_message(&headers, message.payload(), &mut bytes)
                        .expect("a decoded message encodes");
                    assert!(bytes.len() <= MAX);
                    messages.push(bytes);
                }
                Err(error) => return (messages, Err(error.to_string())),
            }
        }
    }
    (messages, decoder.finish().map_err(|e| e.to_string()))
}

fuzz_target!(|input: &[u8]| {
    // The first byte picks the piece size, the rest is the body.
    let Some((&size, body)) = input.split_first() else {
        return;
    };
    let size = usize::from(size % 32) + 1;
    let whole = decode(body, body.len().max(1));
    let split = decode(body, size);
    assert_eq!(whole, split);
    // Re-encoded messages are the input's own bytes, in order.
    let joined: Vec<u8> = whole.0.concat();
    assert_eq!(&body[..joined.len()], &joined[..]);
});
