//! The SSE decoder against the WHATWG "interpreting an event stream" rules,
//! one vector per rule, plus property tests: any split of the same bytes
//! gives the same events, and encoding then decoding gives the event back.

use std::sync::Arc;

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::openai::OpenAiStream;
use agentstream_wire::sse::{
    encode_comment, encode_event, encode_retry, EndOfInput, SseDecoder, SseEvent,
};
use proptest::prelude::*;

fn decode(bytes: &[u8]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.feed_to_vec(bytes).unwrap();
    events.extend(decoder.finish_to_vec());
    events
}

/// Feeds `bytes` in pieces ending at `cuts` (sorted positions).
fn decode_split(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain([bytes.len()].iter()) {
        let cut = cut.clamp(from, bytes.len());
        events.extend(decoder.feed_to_vec(&bytes[from..cut]).unwrap());
        from = cut;
    }
    events.extend(decoder.finish_to_vec());
    events
}

fn data(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.data.as_str()).collect()
}

#[test]
fn every_line_ending_ends_a_line() {
    assert_eq!(
        data(&decode(b"data: a\n\ndata: b\r\rdata: c\r\n\r\n")),
        ["a", "b", "c"]
    );
    // Mixed within one event.
    assert_eq!(
        data(&decode(b"data: a\rdata: b\r\ndata: c\n\n")),
        ["a\nb\nc"]
    );
}

#[test]
fn crlf_split_across_chunks_is_one_line_end() {
    let mut decoder = SseDecoder::new();
    assert!(decoder.feed_to_vec(b"data: a\r").unwrap().is_empty());
    // The LF completes the CRLF; the next CR LF is the blank line.
    assert_eq!(data(&decoder.feed_to_vec(b"\n\r").unwrap()), ["a"]);
    assert!(decoder.feed_to_vec(b"\ndata: b\n\n").unwrap().len() == 1);
}

#[test]
fn utf8_split_across_chunks_is_reassembled_and_invalid_bytes_are_replaced() {
    let text = "data: héllo ☃ 🦀\n\n".as_bytes();
    for cut in 0..text.len() {
        assert_eq!(
            data(&decode_split(text, &[cut])),
            ["héllo ☃ 🦀"],
            "cut at {cut}"
        );
    }
    assert_eq!(data(&decode(b"data: a\xFFb\n\n")), ["a\u{FFFD}b"]);
}

#[test]
fn one_leading_bom_is_stripped_even_split_and_a_second_is_kept() {
    assert_eq!(data(&decode(b"\xEF\xBB\xBFdata: a\n\n")), ["a"]);
    assert_eq!(
        data(&decode_split(b"\xEF\xBB\xBFdata: a\n\n", &[1, 2])),
        ["a"]
    );
    // A second BOM makes the field name "\u{FEFF}data": ignored.
    assert!(decode(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n").is_empty());
    // A BOM-like prefix that is not a BOM is content.
    assert_eq!(
        decode(b"\xEF\xBBdata: a\n\n").len(),
        0,
        "the field name is not `data`"
    );
    // A BOM later in the stream is not stripped.
    assert_eq!(data(&decode(b"data: \xEF\xBB\xBFx\n\n")), ["\u{FEFF}x"]);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(data(&decode(b": keep-alive\n:\ndata: a\n: mid\n\n")), ["a"]);
    // A comment alone dispatches nothing.
    assert!(decode(b": ping\n\n").is_empty());
}

#[test]
fn exactly_one_space_after_the_colon_is_stripped() {
    assert_eq!(
        data(&decode(b"data:a\n\ndata: a\n\ndata:  a\n\ndata:\ta\n\n")),
        ["a", "a", " a", "\ta"]
    );
    // A colon in the value stays.
    assert_eq!(data(&decode(b"data: {\"a\": 1}\n\n")), ["{\"a\": 1}"]);
}

#[test]
fn multi_line_data_is_joined_and_empty_data_lines_count() {
    assert_eq!(data(&decode(b"data: a\ndata: b\n\n")), ["a\nb"]);
    assert_eq!(data(&decode(b"data\n\n")), [""]);
    assert_eq!(data(&decode(b"data:\ndata:\n\n")), ["\n"]);
    // No data line: nothing is dispatched, and the type is reset.
    let events = decode(b"event: x\n\ndata: a\n\n");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type(), "message");
}

#[test]
fn event_sets_the_type_of_one_event_and_empty_means_message() {
    let events = decode(b"event: add\ndata: 1\n\ndata: 2\n\nevent\ndata: 3\n\n");
    let types: Vec<&str> = events.iter().map(SseEvent::event_type).collect();
    assert_eq!(types, ["add", "message", "message"]);
    assert_eq!(events[0].event.as_deref(), Some("add"));
    assert_eq!(events[2].event, None);
}

#[test]
fn id_persists_is_cleared_by_an_empty_value_and_ignored_with_nul() {
    let events = decode(
        b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid\ndata: d\n\nid: 3\n\ndata: e\n\n",
    );
    let ids: Vec<Option<&str>> = events.iter().map(|e| e.id.as_deref()).collect();
    assert_eq!(ids, [Some("1"), Some("1"), Some("1"), None, Some("3")]);
    let mut decoder = SseDecoder::new();
    decoder.feed_to_vec(b"id: 7\n").unwrap();
    assert_eq!(decoder.last_event_id(), Some("7"));
}

#[test]
fn retry_takes_ascii_digits_only() {
    let mut decoder = SseDecoder::new();
    decoder.feed_to_vec(b"retry: 3000\n").unwrap();
    assert_eq!(decoder.retry(), Some(3000));
    for bad in [
        &b"retry: 12a\n"[..],
        b"retry: -1\n",
        b"retry:\n",
        b"retry: 1.5\n",
        b"retry:  5\n",
    ] {
        decoder.feed_to_vec(bad).unwrap();
        assert_eq!(decoder.retry(), Some(3000), "{bad:?}");
    }
    decoder
        .feed_to_vec(b"retry: 99999999999999999999999\n")
        .unwrap();
    assert_eq!(decoder.retry(), Some(u64::MAX));
    // retry alone dispatches nothing.
    assert!(decode(b"retry: 10\n\n").is_empty());
}

#[test]
fn unknown_fields_and_lines_without_colon_are_ignored() {
    assert_eq!(data(&decode(b"foo: bar\nDATA: x\nbaz\ndata: a\n\n")), ["a"]);
}

#[test]
fn end_of_input_policy() {
    // Default: the unterminated event, even an unterminated last line, is
    // dispatched.
    assert_eq!(data(&decode(b"data: a\n\ndata: [DONE]\n")), ["a", "[DONE]"]);
    assert_eq!(data(&decode(b"data: [DONE]")), ["[DONE]"]);
    assert!(decode(b"event: x\n").is_empty());
    // Discard: the standard's behaviour.
    let mut decoder = SseDecoder::with_end_of_input(EndOfInput::Discard);
    let mut events = decoder.feed_to_vec(b"data: a\n\ndata: [DONE]\n").unwrap();
    events.extend(decoder.finish_to_vec());
    assert_eq!(data(&events), ["a"]);
    // Nothing is decoded after finish.
    assert!(decoder.feed_to_vec(b"data: late\n\n").unwrap().is_empty());
    // A lone partial BOM is content.
    assert!(decode(b"\xEF").is_empty());
}

#[test]
fn encoder_writes_fields_and_refuses_line_breaks_in_event_and_id() {
    let event = SseEvent::message("a\r\nb\rc")
        .with_event("add")
        .with_id("9");
    let mut wire = String::new();
    encode_comment("hi", &mut wire).unwrap();
    encode_retry(1500, &mut wire);
    encode_event(&event, &mut wire).unwrap();
    assert_eq!(
        wire,
        ": hi\nretry: 1500\nevent: add\nid: 9\ndata: a\ndata: b\ndata: c\n\n"
    );
    let back = decode(wire.as_bytes());
    assert_eq!(back[0].data, "a\nb\nc");
    assert_eq!(back[0].event.as_deref(), Some("add"));
    let bad = SseEvent::message("x").with_id("a\nb");
    let mut out = String::new();
    assert!(encode_event(&bad, &mut out).is_err());
    assert!(out.is_empty());
    assert!(encode_comment("a\rb", &mut out).is_err());
}

/// A body mixing every feature: BOM, CRLF/CR/LF, comments, multi-line data,
/// ids, retry, events, UTF-8.
const MIXED: &[u8] = b"\xEF\xBB\xBF: hello\r\nretry: 10\rid: 1\nevent: x\ndata: caf\xC3\xA9\r\ndata:  two\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xE2\x98\x83\"}}]}\n\n: bye\rdata: last";

/// An event with every field given (the fields are public, the struct is
/// `#[non_exhaustive]`).
fn sse_event(event: Option<String>, data: String, id: Option<Arc<str>>) -> SseEvent {
    let mut built = SseEvent::message(data);
    built.event = event;
    built.id = id;
    built
}

fn arb_event() -> impl Strategy<Value = SseEvent> {
    (
        proptest::option::of("[a-z]{1,6}"),
        "[a-z \n:é🦀{}\"]{0,20}",
        proptest::option::of("[0-9a-z]{1,4}"),
    )
        .prop_map(|(event, data, id)| sse_event(event, data, id.map(Arc::from)))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 500 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_split_gives_the_same_events(mut cuts in proptest::collection::vec(0..MIXED.len(), 0..12)) {
        cuts.sort_unstable();
        prop_assert_eq!(decode_split(MIXED, &cuts), decode(MIXED));
    }

    #[test]
    fn any_split_of_arbitrary_bytes_gives_the_same_events(
        bytes in proptest::collection::vec(prop_oneof![
            Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(b'd'), Just(b'a'), Just(b't'),
            Just(0xEF), Just(0xBB), Just(0xBF), Just(0xC3), Just(0xA9), any::<u8>()
        ], 0..80),
        mut cuts in proptest::collection::vec(0usize..80, 0..10),
    ) {
        cuts.sort_unstable();
        prop_assert_eq!(decode_split(&bytes, &cuts), decode(&bytes));
    }

    #[test]
    fn encoding_then_decoding_gives_the_events_back(events in proptest::collection::vec(arb_event(), 0..6)) {
        let mut wire = String::new();
        for event in &events {
            encode_event(event, &mut wire).unwrap();
        }
        let mut last_id = None;
        let expected: Vec<SseEvent> = events.iter().map(|e| {
            if e.id.is_some() { last_id = e.id.clone(); }
            sse_event(e.event.clone().filter(|t| t != "message"), e.data.clone(), last_id.clone())
        }).collect();
        prop_assert_eq!(decode(wire.as_bytes()), expected);
    }

    #[test]
    fn any_split_of_a_response_gives_the_same_model_events(mut cuts in proptest::collection::vec(0..MIXED.len(), 0..12)) {
        cuts.sort_unstable();
        let run = |cuts: &[usize]| {
            let mut stream = OpenAiStream::new("m", "p", None);
            let mut events: Vec<ModelEvent> = Vec::new();
            let mut from = 0;
            for &cut in cuts {
                events.extend(stream.feed(&MIXED[from..cut]));
                from = cut;
            }
            events.extend(stream.feed(&MIXED[from..]));
            events.extend(stream.finish_input());
            events
        };
        let whole = run(&[]);
        prop_assert!(validate_events(&whole).is_empty());
        prop_assert_eq!(run(&cuts), whole);
    }
}

#[test]
fn a_line_past_the_limit_is_refused_after_the_events_before_it() {
    use agentstream_wire::limits::{Limit, Limits};
    let mut decoder = SseDecoder::new().with_limits(Limits::default().with_max_line_bytes(16));
    let mut events = Vec::new();
    // Exactly 16 bytes is allowed, in one piece or split.
    decoder
        .feed(b"data: 0123456789\n\ndata: 01234", |e| events.push(e))
        .unwrap();
    decoder.feed(b"56789\n\n", |e| events.push(e)).unwrap();
    assert_eq!(data(&events), ["0123456789", "0123456789"]);
    // An event completed in the same piece as the long line is still handed on.
    let error = decoder
        .feed(b"data: ok\n\ndata: 01234567890", |e| events.push(e))
        .unwrap_err();
    assert_eq!(error.limit, Limit::LineBytes);
    assert_eq!(error.max, 16);
    assert_eq!(data(&events).last(), Some(&"ok"));
    // Later input and the end are ignored; the error repeats.
    assert_eq!(decoder.feed_to_vec(b"\n\ndata: x\n\n"), Err(error));
    assert!(decoder.finish_to_vec().is_empty());
    assert_eq!(decoder.exceeded(), Some(error));
}

#[test]
fn an_endless_line_in_small_pieces_is_refused_at_the_limit() {
    use agentstream_wire::limits::{Limit, Limits};
    let mut decoder = SseDecoder::new().with_limits(Limits::default().with_max_line_bytes(1000));
    decoder.feed_to_vec(b"data: ").unwrap();
    let mut fed = 6;
    let error = loop {
        match decoder.feed_to_vec(&[b'x'; 7]) {
            Ok(events) => assert!(events.is_empty()),
            Err(error) => break error,
        }
        fed += 7;
        assert!(fed <= 1000, "the line grew past its limit");
    };
    assert_eq!(error.limit, Limit::LineBytes);
    assert!(fed > 1000 - 7);
}

#[test]
fn event_data_past_the_limit_is_refused() {
    use agentstream_wire::limits::{Limit, Limits};
    let limits = Limits::default().with_max_event_data_bytes(10);
    let mut decoder = SseDecoder::new().with_limits(limits);
    // Two lines joined with `\n`: 4 + 1 + 5 = 10 bytes, allowed.
    assert_eq!(
        data(&decoder.feed_to_vec(b"data: abcd\ndata: efghi\n\n").unwrap()),
        ["abcd\nefghi"]
    );
    let error = decoder
        .feed_to_vec(b"data: abcd\ndata: efghij\n")
        .unwrap_err();
    assert_eq!(error.limit, Limit::EventDataBytes);
    assert_eq!(
        error.to_string(),
        "response limit exceeded: an SSE event carries more data than max_event_data_bytes (10)"
    );
    // At the end of input too: the last, unterminated line is checked.
    let mut decoder = SseDecoder::new().with_limits(limits);
    decoder.feed_to_vec(b"data: 0123456789A").unwrap();
    assert!(decoder.finish_to_vec().is_empty());
    assert_eq!(
        decoder.exceeded().map(|e| e.limit),
        Some(Limit::EventDataBytes)
    );
}
