//! Thought signatures on a Gemini server's wire: Google's clients take
//! `thoughtSignature` as base64 bytes only (`google-genai` refuses the
//! whole chunk otherwise: "Data should be valid base64"), while a script
//! may sign a block with any text (`"sig-1"`), as the Anthropic and
//! Responses clients accept.
//!
//! `to_wire` (the server half's) sends a signature that is already base64 unchanged (a
//! recorded Google signature stays byte for byte), and any other text as
//! the base64 of [`MARKER`] followed by the text; [`from_wire`] reverses
//! it on a signature a client sends back (in either base64 alphabet,
//! padded or not, as clients re-encode the bytes they decoded), so the
//! scripted text round-trips: serve → google-genai → serve gives the
//! context the script wrote. Any other signature is kept as sent.
//!
//! `google-genai` holds the signature as the bytes it decoded and sends
//! them back as base64; `agentstream`'s own Gemini client (its
//! [projector](super::projector)) reads a wrapped signature back as the
//! scripted text too, so the message it decodes from serve is the
//! scripted one (and, as for any signature that is not base64, its
//! [request builder](super::request) leaves it out of a request to Google).

use alloc::string::String;
use alloc::vec::Vec;

/// The bytes that mark a signature serve wrapped in base64.
pub const MARKER: &[u8] = b"agentstream-signature:";

/// How every wrapped signature starts: the base64 of [`MARKER`]'s first
/// 21 bytes, the same in both alphabets. Any other signature is kept as
/// it is without decoding it.
const WIRE_PREFIX: &str = "YWdlbnRzdHJlYW0tc2lnbmF0dXJl";

#[cfg(any(feature = "server", test))]
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Whether `signature` is standard padded base64, as Google sends it.
pub fn is_base64(signature: &str) -> bool {
    super::request::valid_signature(signature)
}

#[cfg(feature = "server")]
/// The signature as a Gemini server sends it (see the
/// [module documentation](self)).
///
/// ```
/// use agentstream_wire::gemini::signature::{from_wire, to_wire};
/// assert_eq!(to_wire("c2ln"), "c2ln");
/// let wrapped = to_wire("sig-1");
/// assert_ne!(wrapped, "sig-1");
/// assert_eq!(from_wire(&wrapped), "sig-1");
/// ```
pub fn to_wire(signature: &str) -> alloc::borrow::Cow<'_, str> {
    if is_base64(signature) {
        return signature.into();
    }
    let mut bytes = Vec::with_capacity(MARKER.len() + signature.len());
    bytes.extend_from_slice(MARKER);
    bytes.extend_from_slice(signature.as_bytes());
    encode(&bytes).into()
}

/// The signature a client sent, as the context holds it: the scripted
/// text of one `to_wire` wrapped, else `signature` unchanged.
pub fn from_wire(signature: &str) -> String {
    if !signature.starts_with(WIRE_PREFIX) {
        return signature.into();
    }
    decode(signature)
        .as_deref()
        .and_then(|bytes| bytes.strip_prefix(MARKER))
        .and_then(|text| core::str::from_utf8(text).ok())
        .map_or_else(|| signature.into(), Into::into)
}

#[cfg(any(feature = "server", test))]
/// Standard base64, padded.
fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Base64 in the standard or the URL-safe alphabet, padded or not;
/// `None` when it is neither.
fn decode(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if body.len() % 4 == 1 || text.len() - body.len() > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut bits, mut held) = (0u32, 0u32);
    for b in body.bytes() {
        let value = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = bits << 6 | u32::from(value);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xfb\xff", "+/8="),
        ] {
            assert_eq!(encode(bytes), text);
            assert_eq!(decode(text).as_deref(), Some(bytes));
        }
        assert_eq!(decode("-_8").as_deref(), Some(&b"\xfb\xff"[..]));
        assert_eq!(decode("a"), None);
        assert_eq!(decode("a!bc"), None);
    }

    #[test]
    fn the_prefix_is_the_markers() {
        assert_eq!(encode(&MARKER[..21]), WIRE_PREFIX);
    }

    #[cfg(feature = "server")]
    #[test]
    fn any_text_round_trips_and_base64_passes_unchanged() {
        for text in ["sig-1", "sig_123", "héllo ☀", "a b", "abc", "c2ln="] {
            let wire = to_wire(text);
            assert!(is_base64(&wire), "{wire}");
            assert_eq!(from_wire(&wire), text);
            // As a client re-encodes it: URL-safe, unpadded.
            let urlsafe: String = wire
                .trim_end_matches('=')
                .chars()
                .map(|c| match c {
                    '+' => '-',
                    '/' => '_',
                    c => c,
                })
                .collect();
            assert_eq!(from_wire(&urlsafe), text);
        }
        for base64 in ["c2ln", "AAAA", "+/8="] {
            assert_eq!(to_wire(base64), base64);
            assert_eq!(from_wire(base64), base64);
        }
    }
}
