//! A hostile upstream's answer as the recording proxy records it, sans
//! IO (`fuzzing::recorded_answer`: the status, headers and body pieces
//! into `response.json` and the lengths sidecar), then loaded back by the
//! cassette loader. The input: two bytes of status (little-endian), a
//! byte whose low bit says the answer was cut, header lines (`name:
//! value`) up to an empty line, then the body, its pieces separated by
//! `\xff`. Whatever an upstream sends, the cassette loads back with the
//! same status, body, pieces and cut mark, and no secret header's value.
#![no_main]

use std::path::Path;

use agentstream_serve::cassette::{is_secret_header, Cassette, CassetteFiles, REDACTED};
use agentstream_serve::fuzzing::recorded_answer;
use libfuzzer_sys::fuzz_target;

const REQUEST: &[u8] = br#"{"api":"openai-completions","method":"POST","path":"/v1/chat/completions","query":null,"headers":{},"model":"m","stream":true,"context":{"messages":[{"role":"user","content":"Hi","timestamp":0}]},"options":{}}"#;

fuzz_target!(|input: &[u8]| {
    let [lo, hi, flags, rest @ ..] = input else {
        return;
    };
    let status = u16::from_le_bytes([*lo, *hi]);
    let cut = flags & 1 == 1;
    let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&rest[..at], &rest[at + 2..]),
        None => (rest, &[][..]),
    };
    let headers: Vec<(&[u8], &[u8])> = head
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let colon = line.iter().position(|b| *b == b':')?;
            let value = &line[colon + 1..];
            let value = value.strip_prefix(b" ").unwrap_or(value);
            Some((&line[..colon], value))
        })
        .collect();
    let pieces: Vec<&[u8]> = body.split(|b| *b == 0xff).collect();
    let Some((response_json, lengths)) = recorded_answer(status, &headers, &pieces, cut) else {
        assert!(!(100..=999).contains(&status));
        return;
    };
    let whole: Vec<u8> = pieces.concat();
    let files = CassetteFiles {
        request_json: REQUEST,
        response_json: &response_json,
        lengths: Some(&lengths),
    };
    let cassette = match Cassette::from_files(Path::new("fuzz/0000"), files, whole.clone()) {
        Ok(cassette) => cassette,
        Err(error) => panic!("a recorded answer does not load back: {error}"),
    };
    assert_eq!(cassette.status, status);
    assert_eq!(cassette.cut, cut);
    assert_eq!(cassette.body, whole);
    let lengths: Vec<usize> = pieces.iter().map(|p| p.len()).collect();
    assert_eq!(cassette.lengths.iter().collect::<Vec<_>>(), lengths);
    for (name, value) in &cassette.headers {
        // A repeated secret header is recorded as its redactions joined.
        if is_secret_header(name) {
            assert!(value.split(", ").all(|v| v == REDACTED), "{name}: {value}");
        }
    }
});
