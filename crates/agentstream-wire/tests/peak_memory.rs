//! The memory a hostile response can make the client hold, measured with
//! the counting allocator: an endless line costs the line limit plus a
//! constant, and an endless stream of deltas stops at the response limit
//! with what it holds proportional to that limit, not to what was sent.

use agentstream::model::ModelEvent;
use agentstream_testkit::{peak_bytes, CountingAllocator};
use agentstream_wire::limits::Limits;
use agentstream_wire::openai::OpenAiStream;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// What a stream costs before any line: its buffers and header.
const CONSTANT: isize = 64 * 1024;

/// Feeds `piece` until the stream finishes or `max_pieces` were fed;
/// returns the events and how many pieces went in.
fn flood(stream: &mut OpenAiStream, piece: &[u8], max_pieces: usize) -> (Vec<ModelEvent>, usize) {
    let mut events = Vec::new();
    for fed in 1..=max_pieces {
        // Keep only the terminal event: a consumer that keeps every event
        // holds what it chose to hold.
        events.extend(stream.feed(piece).filter(ModelEvent::is_terminal));
        if stream.is_finished() {
            return (events, fed);
        }
    }
    (events, max_pieces)
}

#[test]
fn an_endless_line_costs_the_line_limit_plus_a_constant() {
    let line_limit = 1 << 20;
    let limits = Limits::default().with_max_line_bytes(line_limit);
    let piece = vec![b'x'; 4096];
    let (peak, (events, fed)) = peak_bytes(|| {
        let mut stream = OpenAiStream::new("m", "p", None).with_limits(limits);
        let _ = stream.feed(b"data: ").count();
        // 64 MiB offered; the limit stops it after about 1 MiB.
        flood(&mut stream, &piece, 16 * 1024)
    });
    assert!(fed <= line_limit / piece.len() + 1, "fed {fed} pieces");
    assert_eq!(events.len(), 1);
    // The line buffer doubles as it grows, so up to twice the limit.
    eprintln!("endless line: peak {peak} bytes for a {line_limit}-byte line limit");
    let bound = 2 * line_limit as isize + CONSTANT;
    assert!(peak <= bound, "peak {peak} bytes > {bound}");
}

#[test]
fn endless_deltas_stop_at_the_response_limit_and_hold_a_multiple_of_it() {
    let response_limit: u64 = 4 << 20;
    let limits = Limits::default().with_max_response_bytes(response_limit);
    let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abcd\"}}]}\n\n";
    let piece = event.repeat(64);
    let (peak, (events, fed)) = peak_bytes(|| {
        let mut stream = OpenAiStream::new("m", "p", None).with_limits(limits);
        // 256 MiB offered.
        flood(&mut stream, &piece, (256 << 20) / piece.len())
    });
    assert!(
        (fed as u64) <= response_limit / piece.len() as u64 + 1,
        "fed {fed}"
    );
    let message = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap();
    assert!(message
        .error_message
        .as_deref()
        .unwrap_or_default()
        .contains("max_response_bytes"));
    // Each 64-byte event leaves 4 bytes of text plus the partial
    // snapshot's nodes: the peak stays within 4x the limit.
    eprintln!("endless deltas: peak {peak} bytes for a {response_limit}-byte response limit");
    let bound = 4 * response_limit as isize + CONSTANT;
    assert!(peak <= bound, "peak {peak} bytes > {bound}");
}

/// Repeated `response.function_call_arguments.done` events after a large
/// argument text cost what they hold, not a copy of the arguments each
/// (issue 42: 16,000 after 7 MiB took 10 s, quadratic).
#[test]
fn repeated_responses_argument_dones_copy_nothing() {
    use agentstream_testkit::allocated_bytes;
    use agentstream_wire::responses::ResponsesProjector;

    let mut projector = ResponsesProjector::new("gpt", "openai");
    let mut events = Vec::new();
    projector.push_data(
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","id":"f","name":"n"}}"#,
        &mut events,
    );
    let chunk = format!(
        r#"{{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{{\"a\":\"{}"}}"#,
        "x".repeat(1 << 20)
    );
    projector.push_data(&chunk, &mut events);
    events.clear();
    let done = r#"{"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"a\":\"xx"}"#;
    let repeats = 2000;
    let (allocated, ()) = allocated_bytes(|| {
        for _ in 0..repeats {
            projector.push_data(done, &mut events);
        }
    });
    assert!(events.is_empty(), "{events:?}");
    eprintln!("{repeats} repeated dones after 1 MiB of arguments: {allocated} bytes allocated");
    // Before: a copy of the 1 MiB arguments per event (2 GiB).
    let bound = repeats * done.len() * 4;
    assert!(allocated <= bound, "{allocated} bytes allocated > {bound}");
}
