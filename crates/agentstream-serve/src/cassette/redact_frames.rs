//! An AWS event-stream body (Bedrock's `application/vnd.amazon.eventstream`)
//! redacted frame by frame: redacting its bytes as text would leave each
//! changed frame with wrong lengths and CRCs, and replay would refuse it.
//!
//! Each whole frame's payload is redacted with `--redact`'s patterns and
//! the frame encoded again (same headers, new lengths and CRCs); a frame
//! nothing matched is written as it came. A piece is written as the whole
//! frames it completed, at its arrival time (a piece that completed none
//! writes nothing yet), so the cassette's pieces are frame-aligned. A
//! frame that does not decode (a broken or hostile upstream), or one over
//! the decoder's size limit, turns the rest of the body over to the text
//! redactor ([`PieceRedactor`]): what cannot be framed is still never
//! written unredacted. A body cut inside a frame ends the same way.

use agentstream_wire::eventstream::{encode_message, EventStreamDecoder, Header, PRELUDE_BYTES};

use super::redact_pieces::PieceRedactor;
use super::Redactor;

/// The largest frame re-encoded; a longer one is redacted as text.
const MAX_FRAME_BYTES: usize = 16 << 20;

/// The lengths a frame re-encoded here may declare (a prelude and a
/// message CRC at the least).
const FRAME_BYTES: core::ops::RangeInclusive<usize> = PRELUDE_BYTES + 4..=MAX_FRAME_BYTES;

/// A response body's event-stream frames, each redacted whole.
pub(crate) struct FrameRedactor {
    redactor: Redactor,
    /// Received bytes not yet written: a frame's start and what follows.
    raw: Vec<u8>,
    /// Set once a frame did not decode: the text redactor has the rest.
    text: Option<PieceRedactor>,
}

impl FrameRedactor {
    /// A redactor of one event-stream body with `redactor`'s patterns.
    pub(crate) fn new(redactor: Redactor) -> Self {
        Self {
            redactor,
            raw: Vec::new(),
            text: None,
        }
    }

    /// Takes the next piece, which arrived at `ms`: the bytes now ready,
    /// redacted, with their arrival time (none, or one piece).
    pub(crate) fn push(&mut self, piece: &[u8], ms: u64) -> Vec<(Vec<u8>, u64)> {
        if let Some(text) = &mut self.text {
            return text.push(piece, ms);
        }
        self.raw.extend_from_slice(piece);
        let mut out = Vec::new();
        let mut used = 0;
        while let Some(frame_len) = self.whole_frame(used) {
            let Some(frame) = self.raw.get(used..used + frame_len) else {
                break;
            };
            match redact_frame(&self.redactor, frame) {
                Some(redacted) => out.extend_from_slice(&redacted),
                None => return self.hand_to_text(used, out, ms),
            }
            used += frame_len;
        }
        if self.oversized(used) {
            return self.hand_to_text(used, out, ms);
        }
        self.raw.drain(..used);
        if out.is_empty() {
            Vec::new()
        } else {
            vec![(out, ms)]
        }
    }

    /// The body has ended (or broke off): a frame cut short is redacted as
    /// text.
    pub(crate) fn finish(&mut self) -> Vec<(Vec<u8>, u64)> {
        let text = self
            .text
            .get_or_insert_with(|| PieceRedactor::new(self.redactor.clone()));
        let mut ready = Vec::new();
        if !self.raw.is_empty() {
            ready.extend(text.push(&self.raw, 0));
            self.raw.clear();
        }
        ready.extend(text.finish());
        ready
    }

    /// The length of the frame at `at` in `raw` when all of it is there.
    fn whole_frame(&self, at: usize) -> Option<usize> {
        let prelude = self.raw.get(at..at + 4)?;
        let total = u32::from_be_bytes(prelude.try_into().ok()?) as usize;
        (FRAME_BYTES.contains(&total) && self.raw.len() - at >= total).then_some(total)
    }

    /// Whether the frame at `at` declares a length past the limit (or less
    /// than a frame can be).
    fn oversized(&self, at: usize) -> bool {
        self.raw.get(at..at + 4).is_some_and(|prelude| {
            let total =
                u32::from_be_bytes([prelude[0], prelude[1], prelude[2], prelude[3]]) as usize;
            !FRAME_BYTES.contains(&total)
        })
    }

    /// Hands the bytes from `at` on to the text redactor; `out` (the
    /// frames before) goes out first, in the same piece.
    fn hand_to_text(&mut self, at: usize, mut out: Vec<u8>, ms: u64) -> Vec<(Vec<u8>, u64)> {
        let mut text = PieceRedactor::new(self.redactor.clone());
        let rest = self.raw.split_off(at);
        self.raw.clear();
        let mut ready = text.push(&rest, ms);
        self.text = Some(text);
        if !out.is_empty() {
            // The frames decided before the break lead the piece.
            match ready.first_mut() {
                Some((first, _)) => {
                    out.extend_from_slice(first);
                    *first = out;
                }
                None => ready.push((out, ms)),
            }
        }
        ready
    }
}

/// `frame` with its payload redacted and encoded again; `frame` itself
/// when nothing matched; `None` when it does not decode.
fn redact_frame(redactor: &Redactor, frame: &[u8]) -> Option<Vec<u8>> {
    let mut decoder = EventStreamDecoder::new().with_max_message_bytes(MAX_FRAME_BYTES);
    decoder.feed(frame);
    let message = decoder.next_message()?.ok()?;
    let payload = redactor.bytes(message.payload());
    if payload.as_ref() == message.payload() {
        return Some(frame.to_vec());
    }
    let headers: Vec<Header<'_>> = message.headers().collect();
    let mut out = Vec::with_capacity(frame.len());
    encode_message(&headers, &payload, &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use agentstream_wire::eventstream::encode_event;

    use super::*;

    fn frames(payloads: &[&str]) -> Vec<u8> {
        let mut body = Vec::new();
        for payload in payloads {
            encode_event("contentBlockDelta", payload.as_bytes(), &mut body).unwrap();
        }
        body
    }

    fn payloads(body: &[u8]) -> Vec<String> {
        let mut decoder = EventStreamDecoder::new();
        decoder.feed(body);
        let mut out = Vec::new();
        while let Some(message) = decoder.next_message() {
            let message = message.expect("every frame decodes, CRCs included");
            out.push(String::from_utf8(message.payload().to_vec()).unwrap());
        }
        decoder.finish().expect("no bytes left over");
        out
    }

    fn redact(body: &[u8], piece: usize) -> (Vec<u8>, usize) {
        let redactor = Redactor::new(["sk-[a-z0-9]{8}"]).unwrap();
        let mut frames = FrameRedactor::new(redactor);
        let mut out = Vec::new();
        let mut pieces = 0;
        for (i, chunk) in body.chunks(piece).enumerate() {
            for (bytes, _) in frames.push(chunk, i as u64) {
                out.extend_from_slice(&bytes);
                pieces += 1;
            }
        }
        for (bytes, _) in frames.finish() {
            out.extend_from_slice(&bytes);
            pieces += 1;
        }
        (out, pieces)
    }

    #[test]
    fn secrets_in_frames_are_redacted_and_the_frames_still_decode() {
        let body = frames(&[
            r#"{"delta":{"text":"key sk-abcd1234 here"}}"#,
            r#"{"delta":{"text":"nothing"}}"#,
            r#"{"delta":{"text":"sk-zzzz9999"}}"#,
        ]);
        for piece in [1, 7, 64, body.len()] {
            let (out, _) = redact(&body, piece);
            assert!(!String::from_utf8_lossy(&out).contains("sk-abcd1234"));
            assert!(!String::from_utf8_lossy(&out).contains("sk-zzzz9999"));
            let payloads = payloads(&out);
            assert_eq!(payloads.len(), 3, "piece {piece}");
            assert!(
                payloads[0].starts_with(r#"{"delta":{"text":"key "#),
                "{payloads:?}"
            );
            assert_eq!(payloads[1], r#"{"delta":{"text":"nothing"}}"#);
        }
    }

    #[test]
    fn a_frame_that_does_not_decode_is_redacted_as_text() {
        let mut body = frames(&[r#"{"delta":{"text":"fine"}}"#]);
        let mut broken = frames(&[r#"{"delta":{"text":"sk-abcd1234"}}"#]);
        let last = broken.len() - 1;
        broken[last] ^= 0xff; // a wrong message CRC
        body.extend_from_slice(&broken);
        let (out, _) = redact(&body, 5);
        assert!(!String::from_utf8_lossy(&out).contains("sk-abcd1234"));
        // The frame before the broken one is still whole.
        let mut decoder = EventStreamDecoder::new();
        decoder.feed(&out);
        let first = decoder.next_message().unwrap().unwrap();
        assert_eq!(first.payload(), br#"{"delta":{"text":"fine"}}"#);
    }

    #[test]
    fn a_body_cut_inside_a_frame_keeps_nothing_unredacted() {
        let body = frames(&[r#"{"delta":{"text":"sk-abcd1234 and more text"}}"#]);
        let cut = &body[..body.len() - 6];
        let (out, _) = redact(cut, 3);
        assert!(!String::from_utf8_lossy(&out).contains("sk-abcd1234"));
    }

    #[test]
    fn an_absurd_declared_length_is_redacted_as_text_without_waiting() {
        let mut body = u32::MAX.to_be_bytes().to_vec();
        body.extend_from_slice(b"....sk-abcd1234");
        let (out, _) = redact(&body, 4);
        assert!(!String::from_utf8_lossy(&out).contains("sk-abcd1234"));
    }
}
