//! The event-stream codec: round trips, every prelude and checksum
//! corruption, splits at every byte, hostile lengths and headers.

use agentstream_wire::eventstream::{
    encode_event, encode_message, DecodeError, DecodeErrorKind, EncodeError, EventStreamDecoder,
    Header, HeaderValue,
};

const FIXTURES: [&str; 4] = [
    "amazon-bedrock-text",
    "amazon-bedrock-reasoning",
    "amazon-bedrock-tool-call.1",
    "amazon-bedrock-tool-no-args",
];

/// A fixture's events as (event type, JSON payload).
fn fixture_events(name: &str) -> Vec<(String, String)> {
    let path = format!(
        "{}/tests/fixtures/bedrock/{name}.events.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let (key, payload) = value.as_object().unwrap().iter().next().unwrap();
            (key.clone(), payload.to_string())
        })
        .collect()
}

fn fixture_body(name: &str) -> Vec<u8> {
    let mut body = Vec::new();
    for (event, payload) in fixture_events(name) {
        encode_event(&event, payload.as_bytes(), &mut body).unwrap();
    }
    body
}

/// Every message of `body` fed in `pieces`, as (event type, payload).
fn decode_all(pieces: &[&[u8]]) -> Result<Vec<(String, String)>, DecodeError> {
    let mut decoder = EventStreamDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        decoder.feed(piece);
        while let Some(message) = decoder.next_message() {
            let message = message?;
            assert_eq!(message.header_str(":message-type"), Some("event"));
            assert_eq!(
                message.header_str(":content-type"),
                Some("application/json")
            );
            out.push((
                message.header_str(":event-type").unwrap().to_owned(),
                String::from_utf8(message.payload().to_vec()).unwrap(),
            ));
        }
    }
    decoder.finish()?;
    Ok(out)
}

fn first_error(body: &[u8]) -> DecodeError {
    decode_all(&[body]).unwrap_err()
}

#[test]
fn fixtures_round_trip_split_at_every_byte() {
    for name in FIXTURES {
        let events = fixture_events(name);
        let body = fixture_body(name);
        assert_eq!(decode_all(&[&body]).unwrap(), events, "{name} whole");
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(decode_all(&[a, b]).unwrap(), events, "{name} cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(decode_all(&bytes).unwrap(), events, "{name} byte by byte");
    }
}

#[test]
fn every_header_type_round_trips() {
    let long = "x".repeat(65_535);
    let long_name = "n".repeat(255);
    let headers = [
        Header::new("t", HeaderValue::Bool(true)),
        Header::new("f", HeaderValue::Bool(false)),
        Header::new("byte", HeaderValue::Byte(-7)),
        Header::new("short", HeaderValue::Short(-300)),
        Header::new("int", HeaderValue::Int(i32::MIN)),
        Header::new("long", HeaderValue::Long(i64::MAX)),
        Header::new("bytes", HeaderValue::Bytes(&[0, 255, 1])),
        Header::new("string", HeaderValue::String("héllo")),
        Header::new("long-string", HeaderValue::String(&long)),
        Header::new("time", HeaderValue::Timestamp(1_700_000_000_123)),
        Header::new("uuid", HeaderValue::Uuid(*b"0123456789abcdef")),
        Header::new(&long_name, HeaderValue::Bytes(&[])),
    ];
    let mut body = Vec::new();
    encode_message(&headers, b"payload", &mut body).unwrap();
    encode_message(&[], b"", &mut body).unwrap();
    let mut decoder = EventStreamDecoder::new();
    decoder.feed(&body);
    let message = decoder.next_message().unwrap().unwrap();
    assert_eq!(message.headers().collect::<Vec<_>>(), headers);
    assert_eq!(message.header("int"), Some(HeaderValue::Int(i32::MIN)));
    assert_eq!(message.header("missing"), None);
    assert_eq!(message.payload(), b"payload");
    assert_eq!(message.offset(), 0);
    let empty = decoder.next_message().unwrap().unwrap();
    assert_eq!(empty.headers().count(), 0);
    assert_eq!(empty.payload(), b"");
    assert_eq!(empty.offset(), (body.len() - 16) as u64);
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.finish(), Ok(()));
}

#[test]
fn the_encoder_refuses_what_the_format_cannot_hold() {
    let mut out = vec![1];
    let long_name = "n".repeat(256);
    let long_value = vec![0u8; 65_536];
    let cases = [
        (
            Header::new("", HeaderValue::Bool(true)),
            EncodeError::HeaderName { len: 0 },
        ),
        (
            Header::new(&long_name, HeaderValue::Bool(true)),
            EncodeError::HeaderName { len: 256 },
        ),
        (
            Header::new("v", HeaderValue::Bytes(&long_value)),
            EncodeError::HeaderValue { len: 65_536 },
        ),
    ];
    for (header, error) in cases {
        assert_eq!(encode_message(&[header], b"", &mut out), Err(error));
        assert_eq!(out, [1], "out is unchanged on an error");
    }
}

/// Every bit of the prelude flipped: a prelude checksum fault at the
/// message's offset, whatever the length fields then say.
#[test]
fn every_prelude_corruption_is_caught() {
    let mut body = Vec::new();
    encode_event("messageStart", b"{}", &mut body).unwrap();
    let offset = body.len() as u64;
    encode_event("messageStop", br#"{"stopReason":"end_turn"}"#, &mut body).unwrap();
    for byte in 0..12 {
        for bit in 0..8 {
            let mut bad = body.clone();
            bad[offset as usize + byte] ^= 1 << bit;
            let error = first_error(&bad);
            assert!(
                matches!(error.kind, DecodeErrorKind::PreludeCrc { .. }),
                "{byte}/{bit}: {error}"
            );
            assert_eq!(error.offset, offset);
        }
    }
}

/// Every byte after the prelude changed: a message checksum fault.
#[test]
fn every_message_corruption_is_caught() {
    let mut body = Vec::new();
    encode_event(
        "contentBlockDelta",
        br#"{"delta":{"text":"hi"}}"#,
        &mut body,
    )
    .unwrap();
    for at in 12..body.len() {
        let mut bad = body.clone();
        bad[at] = bad[at].wrapping_add(1);
        let error = first_error(&bad);
        assert!(
            matches!(error.kind, DecodeErrorKind::MessageCrc { .. }),
            "{at}: {error}"
        );
        assert_eq!(error.offset, 0);
    }
}

/// A message with a valid prelude for `total` and `headers`, the rest
/// given, and a valid message checksum.
fn forged(total: u32, headers_len: u32, rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&headers_len.to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(rest);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[test]
fn hostile_lengths_are_refused_from_the_prelude() {
    for total in [u32::MAX, (8 << 20) + 1] {
        let mut decoder = EventStreamDecoder::new();
        decoder.feed(&forged(total, 0, &[])[..12]);
        let error = decoder.next_message().unwrap().unwrap_err();
        assert_eq!(
            error.kind,
            DecodeErrorKind::MessageTooLong {
                total,
                max: 8 << 20
            }
        );
        assert_eq!(decoder.buffered(), 0, "nothing is kept after the error");
        decoder.feed(&[0; 64]);
        assert_eq!(decoder.next_message(), Some(Err(error)), "the error sticks");
        assert_eq!(decoder.finish(), Err(error));
    }
    let mut small = EventStreamDecoder::new().with_max_message_bytes(20);
    small.feed(&forged(21, 0, &[0; 5]));
    assert_eq!(
        small.next_message().unwrap().unwrap_err().kind,
        DecodeErrorKind::MessageTooLong { total: 21, max: 20 }
    );
    for total in [0, 15] {
        let error = first_error(&forged(total, 0, &[]));
        assert_eq!(error.kind, DecodeErrorKind::MessageTooShort { total });
    }
    let error = first_error(&forged(20, 5, &[0; 4]));
    assert_eq!(
        error.kind,
        DecodeErrorKind::HeadersTooLong {
            headers: 5,
            total: 20
        }
    );
    let error = first_error(&forged(20, u32::MAX, &[0; 4]));
    assert_eq!(
        error.kind,
        DecodeErrorKind::HeadersTooLong {
            headers: u32::MAX,
            total: 20
        }
    );
}

#[test]
fn hostile_headers_name_their_offset() {
    let good = [1, b'a', 0]; // "a" = true, three bytes
    let cases: [(&[u8], DecodeErrorKind); 6] = [
        (&[0, 0], DecodeErrorKind::EmptyHeaderName),
        (&[1, 0xff, 0], DecodeErrorKind::HeaderNameNotUtf8),
        (&[1, b'a', 10], DecodeErrorKind::UnknownHeaderType(10)),
        (
            &[1, b'a', 7, 0, 1, 0xc3],
            DecodeErrorKind::HeaderStringNotUtf8,
        ),
        (&[1, b'a', 5, 0, 0], DecodeErrorKind::HeaderTruncated),
        (&[9, b'a'], DecodeErrorKind::HeaderTruncated),
    ];
    for (bad, kind) in cases {
        let section = [&good[..], bad].concat();
        let body = forged(16 + section.len() as u32, section.len() as u32, &section);
        let error = first_error(&body);
        assert_eq!(error.kind, kind, "{bad:?}");
        assert_eq!(error.offset, 12 + 3, "{bad:?}: the second header's offset");
        assert!(error.to_string().contains("(at byte 15)"), "{error}");
    }
}

#[test]
fn a_body_that_ends_inside_a_message_is_truncated() {
    let body = fixture_body("amazon-bedrock-text");
    for cut in 1..40 {
        let mut decoder = EventStreamDecoder::new();
        decoder.feed(&body[..cut]);
        assert!(decoder.next_message().is_none(), "{cut}");
        assert_eq!(
            decoder.finish().unwrap_err().kind,
            DecodeErrorKind::Truncated { buffered: cut }
        );
    }
}

/// Random bytes and random damage to real bodies: an error or messages,
/// never a panic, and the decoder stops at the first error.
#[test]
fn arbitrary_input_never_panics() {
    let body = fixture_body("amazon-bedrock-reasoning");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..2_000 {
        let mut input = if round % 2 == 0 {
            body.clone()
        } else {
            (0..(next() % 300)).map(|_| next() as u8).collect()
        };
        if !input.is_empty() {
            for _ in 0..(next() % 4) {
                let at = (next() as usize) % input.len();
                input[at] = next() as u8;
            }
        }
        let cut = if input.is_empty() {
            0
        } else {
            (next() as usize) % input.len()
        };
        let _ = decode_all(&[&input[..cut], &input[cut..]]);
    }
}
