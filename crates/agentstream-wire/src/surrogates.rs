//! Lone UTF-16 surrogates in JSON text, as JavaScript writes them.
//!
//! A JavaScript string may hold half of a surrogate pair, and
//! `JSON.stringify` writes it as `\ud83d`. serde_json (rightly, for Rust
//! strings) refuses such an escape. A provider that cuts its text between
//! the two halves of an emoji sends `"\ud83d"` in one chunk and `"\ude00"`
//! in the next; JavaScript joins them into one character.
//!
//! For streams, the chunk projector rewrites each lone surrogate escape of a JSON
//! text into a *marker*: a character of Unicode's Supplementary Private
//! Use Area-B that encodes which half it was (U+100000 + the surrogate's
//! offset). The JSON then parses, and the projector turns the
//! markers of consecutive deltas back into characters: a high half at the
//! end of one delta and a low half at the start of the next become the
//! character they encode; every other marker becomes U+FFFD.
//!
//! Strings that are not streamed as deltas (tool-call ids and names,
//! signatures, the model name, the message id) follow the same rule: every
//! marker in them becomes U+FFFD (`replace_markers`).
//!
//! Tool-call argument text is JSON inside a JSON string, so a lone half in
//! it arrives escaped twice (`\\ud800` in the payload, `\ud800` in the
//! argument text), which no marker catches and which would make the
//! arguments unparsable. `EscapeJoiner` rewrites such escapes in the
//! argument text into `\ufffd` as it streams, holding back an escape cut
//! between two fragments until it is whole, so a pair split across
//! fragments is kept and the deltas still add up to the arguments.
//!
//! Markers are only looked for in payloads that had a lone surrogate, so a
//! genuine private-use character elsewhere is untouched; one in the same
//! payload as a lone surrogate would be read as a marker (an accepted
//! cost: both are vanishingly rare, and together rarer still).

use alloc::borrow::Cow;
use alloc::string::String;

/// The first marker: U+100000 stands for U+D800.
const MARKER_BASE: u32 = 0x10_0000;
const HIGH: core::ops::Range<u32> = 0xD800..0xDC00;
const LOW: core::ops::Range<u32> = 0xDC00..0xE000;

/// The marker of surrogate `unit`.
fn marker(unit: u32) -> char {
    char::from_u32(MARKER_BASE + (unit - HIGH.start)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The surrogate a marker stands for.
fn unmark(c: char) -> Option<u32> {
    let offset = u32::from(c).checked_sub(MARKER_BASE)?;
    (offset < LOW.end - HIGH.start).then_some(offset + HIGH.start)
}

/// Reads the four hex digits at the start of `bytes`.
fn hex4(bytes: &[u8]) -> Option<u32> {
    let digits = bytes.get(..4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(acc * 16 + digit)
    })
}

/// `json` with every lone surrogate escape (`\ud83d` not followed by a low
/// half, `\ude00` not preceded by a high half) replaced by its marker, or
/// `None` when it has none (the common case costs one scan for `\u`).
pub(crate) fn mark_lone_surrogates(json: &str) -> Option<String> {
    rewrite_lone_surrogates(json, |unit, out| out.push(marker(unit)))
}

/// `json` with every lone surrogate escape replaced by `\ufffd` (the
/// replacement character, as an escape of the same length, so byte
/// offsets and columns stay put), or `None` when it has none. The result
/// parses where a lone surrogate was the only obstacle.
///
/// ```
/// use agentstream_wire::surrogates::replace_lone_surrogates;
///
/// let log = r#"{"text":"half \ud83d, whole \ud83d\ude00"}"#;
/// let fixed = replace_lone_surrogates(log).unwrap();
/// assert_eq!(fixed, r#"{"text":"half \ufffd, whole \ud83d\ude00"}"#);
/// let value: serde_json::Value = serde_json::from_str(&fixed).unwrap();
/// assert_eq!(value["text"], "half \u{fffd}, whole 😀");
/// assert_eq!(replace_lone_surrogates(r#"{"text":"\ud83d\ude00"}"#), None);
/// ```
pub fn replace_lone_surrogates(json: &str) -> Option<String> {
    rewrite_lone_surrogates(json, |_, out| out.push_str(r"\ufffd"))
}

/// The position of the first `\\` in `bytes`, eight bytes at a time (the
/// zero-byte test of [`sse`](crate::sse)'s line-break search: no false
/// negatives, and a word with a false positive is searched byte by byte).
fn find_backslash(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut start = 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut array = [0u8; 8];
        array.copy_from_slice(word);
        let x = u64::from_le_bytes(array) ^ (ONES * u64::from(b'\\'));
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            break;
        }
        start += 8;
    }
    bytes[start..]
        .iter()
        .position(|&b| b == b'\\')
        .map(|i| start + i)
}

/// `json` with `replace(unit, out)` written in place of each lone
/// surrogate escape; `None` when there is none.
fn rewrite_lone_surrogates(
    json: &str,
    mut replace: impl FnMut(u32, &mut String),
) -> Option<String> {
    let bytes = json.as_bytes();
    let mut out: Option<String> = None;
    // `copied` is where the part of `json` not yet copied to `out` starts.
    let (mut i, mut copied) = (0, 0);
    while i + 1 < bytes.len() {
        // Jump to the next backslash, a word at a time: a payload without
        // escapes (the norm) costs one fast scan.
        match find_backslash(&bytes[i..]) {
            Some(offset) => i += offset,
            None => break,
        }
        if i + 1 >= bytes.len() {
            break;
        }
        if bytes[i + 1] != b'u' {
            // Another escape, `\\` included: skip both bytes.
            i += 2;
            continue;
        }
        let Some(unit) = hex4(&bytes[i + 2..]) else {
            i += 2;
            continue;
        };
        let paired_low = || {
            let next = bytes.get(i + 6..i + 8)? == b"\\u";
            hex4(bytes.get(i + 8..)?).filter(|low| next && LOW.contains(low))
        };
        if HIGH.contains(&unit) && paired_low().is_some() {
            i += 12;
            continue;
        }
        if HIGH.contains(&unit) || LOW.contains(&unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied..i]);
            replace(unit, out);
            copied = i + 6;
        }
        i += 6;
    }
    let mut out = out?;
    out.push_str(&json[copied..]);
    Some(out)
}

/// `text` with every marker replaced by U+FFFD: the rule for strings that
/// are not joined across deltas. `marked` says whether the payload had
/// lone surrogates (else `text` is taken as it is). Borrowed when there is
/// none.
pub(crate) fn replace_markers(text: &str, marked: bool) -> Cow<'_, str> {
    if !marked || !text.chars().any(|c| unmark(c).is_some()) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match unmark(c) {
                Some(_) => char::REPLACEMENT_CHARACTER,
                None => c,
            })
            .collect(),
    )
}

/// [`replace_markers`] for an owned string: `text` itself when it has no
/// marker.
pub(crate) fn unmarked(text: String, marked: bool) -> String {
    match replace_markers(&text, marked) {
        Cow::Borrowed(_) => text,
        Cow::Owned(replaced) => replaced,
    }
}

/// Replaces lone surrogate escapes in streamed JSON text (tool-call
/// arguments) by `\ufffd`, holding back an escape that the next fragment
/// may complete. See the [module documentation](self).
#[derive(Debug, Default, Clone)]
pub(crate) struct EscapeJoiner {
    /// The held-back end of the text so far: at most 11 bytes, starting at
    /// an escape's backslash.
    pending: String,
}

impl EscapeJoiner {
    /// The text that can be handed on after `fragment`: the held-back part
    /// and `fragment`, lone surrogate escapes replaced, without an end that
    /// may still become (or complete) a surrogate pair. Borrowed when
    /// nothing was held or replaced.
    pub(crate) fn push<'a>(&mut self, fragment: &'a str) -> Cow<'a, str> {
        if self.pending.is_empty() && !fragment.contains('\\') {
            return Cow::Borrowed(fragment);
        }
        let mut text = core::mem::take(&mut self.pending);
        text.push_str(fragment);
        let cut = hold_from(text.as_bytes()).unwrap_or(text.len());
        self.pending = String::from(&text[cut..]);
        text.truncate(cut);
        match replace_lone_surrogates(&text) {
            Some(replaced) => Cow::Owned(replaced),
            None => Cow::Owned(text),
        }
    }

    /// A fragment of tool-call argument text as a projector hands it on:
    /// its markers (`marked` says the payload had lone surrogates) and its
    /// lone surrogate escapes replaced, as [`push`](Self::push) does. The
    /// one rule for argument text of every projector that holds it in a
    /// string.
    pub(crate) fn push_arguments<'a>(&mut self, fragment: &'a str, marked: bool) -> Cow<'a, str> {
        match replace_markers(fragment, marked) {
            Cow::Borrowed(text) => self.push(text),
            Cow::Owned(text) => Cow::Owned(self.push(&text).into_owned()),
        }
    }

    /// What is held back: the raw end of the text pushed so far, not yet
    /// handed on (at most 11 bytes).
    pub(crate) fn pending(&self) -> &str {
        &self.pending
    }

    /// The end of the text: [`finish_cut`](Self::finish_cut) when it was
    /// `cut` (the provider stopped for length), else
    /// [`finish`](Self::finish).
    pub(crate) fn finish_as(&mut self, cut: bool) -> Option<String> {
        if cut {
            self.finish_cut()
        } else {
            self.finish()
        }
    }

    /// The end of the text: what was held back, lone escapes replaced.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let text = core::mem::take(&mut self.pending);
        Some(replace_lone_surrogates(&text).unwrap_or(text))
    }

    /// The end of a text that was cut off (the provider stopped for
    /// length): what was held back, without an escape left incomplete at
    /// its very end (a `\` or a `\u` with fewer than four digits, which
    /// nothing can finish now), lone escapes replaced. A whole high half
    /// held back for its low half becomes `\ufffd`.
    pub(crate) fn finish_cut(&mut self) -> Option<String> {
        let mut text = core::mem::take(&mut self.pending);
        if let Some(escape) = last_escape(text.as_bytes()) {
            if text.len() - escape < 6 {
                text.truncate(escape);
            }
        }
        if text.is_empty() {
            return None;
        }
        Some(replace_lone_surrogates(&text).unwrap_or(text))
    }
}

/// Where the end of `text` that must wait for more starts: a `\` or
/// `\u` with fewer than four hex digits, a whole high-half escape (its
/// low half may follow), or a high-half escape followed by such a start.
/// `text` starts outside any escape.
fn hold_from(text: &[u8]) -> Option<usize> {
    let escape = last_escape(text)?;
    let tail = &text[escape..];
    let is_hex_prefix = tail.len() <= 6
        && tail.get(1).map_or(true, |&b| b == b'u')
        && tail.iter().skip(2).all(u8::is_ascii_hexdigit);
    if !is_hex_prefix {
        return None;
    }
    if tail.len() == 6 {
        // Complete: held only when it is a high half.
        return hex4(&tail[2..])
            .filter(|unit| HIGH.contains(unit))
            .map(|_| escape);
    }
    // Incomplete: hold it, with a high half just before it.
    let before = escape.checked_sub(6);
    let high_before = before.filter(|&b| {
        text[b] == b'\\'
            && text[b + 1] == b'u'
            && hex4(&text[b + 2..escape]).is_some_and(|unit| HIGH.contains(&unit))
            && last_escape(&text[..=b]) == Some(b)
    });
    Some(high_before.unwrap_or(escape))
}

/// The position of the last backslash of `text` that starts an escape
/// (not the second of a `\\\\`), looking at the last 12 bytes only.
fn last_escape(text: &[u8]) -> Option<usize> {
    let floor = text.len().saturating_sub(12);
    let mut i = text.len();
    while i > floor {
        i -= 1;
        if text[i] != b'\\' {
            continue;
        }
        // The run of backslashes ending here: odd means the last starts an
        // escape, even means they are all pairs.
        let run = text[..=i].iter().rev().take_while(|&&b| b == b'\\').count();
        if run % 2 == 1 {
            return Some(i);
        }
        i = (i + 1).saturating_sub(run);
    }
    None
}

/// Joins the halves of surrogate pairs split across the deltas of one
/// block. See the [module documentation](self).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SurrogateJoiner {
    /// A high half held back from the end of the last delta.
    pending: Option<u32>,
}

impl SurrogateJoiner {
    /// `delta` with its markers resolved, holding back a high half at its
    /// end. `marked` says whether the payload had lone surrogates (else
    /// only a pending half is resolved).
    pub(crate) fn join(&mut self, delta: &str, marked: bool) -> Option<String> {
        if !marked && self.pending.is_none() {
            return None;
        }
        let mut out = String::with_capacity(delta.len() + 4);
        let mut chars = delta.chars().peekable();
        if let Some(high) = self.pending.take() {
            let low = chars
                .peek()
                .and_then(|&c| if marked { unmark(c) } else { None })
                .filter(|unit| LOW.contains(unit));
            match low {
                Some(low) => {
                    chars.next();
                    let code = 0x1_0000 + ((high - HIGH.start) << 10) + (low - LOW.start);
                    out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                None => out.push(char::REPLACEMENT_CHARACTER),
            }
        }
        while let Some(c) = chars.next() {
            match unmark(c).filter(|_| marked) {
                Some(unit) if HIGH.contains(&unit) && chars.peek().is_none() => {
                    self.pending = Some(unit);
                }
                Some(_) => out.push(char::REPLACEMENT_CHARACTER),
                None => out.push(c),
            }
        }
        Some(out)
    }

    /// The block ends: a held-back half becomes U+FFFD.
    pub(crate) fn finish(&mut self) -> Option<char> {
        self.pending.take().map(|_| char::REPLACEMENT_CHARACTER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_scan_finds_the_first_backslash() {
        for len in 0..40 {
            for at in 0..=len {
                for fill in [b'a', 0, 0xFF, b'\\' + 1, b'\\' - 1] {
                    let mut bytes = alloc::vec![fill; len];
                    if at < len {
                        bytes[at] = b'\\';
                    }
                    let naive = bytes.iter().position(|&b| b == b'\\');
                    assert_eq!(find_backslash(&bytes), naive, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn a_backslash_before_a_multibyte_character_is_skipped_safely() {
        assert_eq!(
            mark_lone_surrogates("{\"a\":\"\\é\\ud83d\"}").as_deref(),
            Some("{\"a\":\"\\é\u{10003d}\"}")
        );
        assert_eq!(mark_lone_surrogates("\\é\\"), None);
    }

    #[test]
    fn lone_halves_are_marked_and_pairs_left_alone() {
        assert_eq!(mark_lone_surrogates(r#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(mark_lone_surrogates(r#"{"a":"\\ud83d"}"#), None);
        let marked = mark_lone_surrogates(r#"{"a":"x\ud83d","b":"\uDE00y"}"#).unwrap();
        assert_eq!(marked, "{\"a\":\"x\u{10003d}\",\"b\":\"\u{100600}y\"}");
        assert!(serde_json::from_str::<serde_json::Value>(&marked).is_ok());
    }

    #[test]
    fn halves_across_deltas_join_and_lone_ones_become_replacement() {
        let mut joiner = SurrogateJoiner::default();
        let high = marker(0xD83D);
        let low = marker(0xDE00);
        assert_eq!(joiner.join(&alloc::format!("a{high}"), true).unwrap(), "a");
        assert!(joiner.pending.is_some());
        assert_eq!(joiner.join(&alloc::format!("{low}b"), true).unwrap(), "😀b");
        assert_eq!(
            joiner.join(&alloc::format!("{low}{high}c"), true).unwrap(),
            "\u{fffd}\u{fffd}c"
        );
        assert_eq!(joiner.join(&alloc::format!("d{high}"), true).unwrap(), "d");
        assert_eq!(joiner.join("e", false).unwrap(), "\u{fffd}e");
        assert_eq!(joiner.join("f", false), None);
        assert_eq!(joiner.join(&alloc::format!("{high}"), true).unwrap(), "");
        assert_eq!(joiner.finish(), Some('\u{fffd}'));
        assert_eq!(joiner.finish(), None);
    }

    #[test]
    fn escapes_in_argument_text_are_replaced_wherever_the_fragments_are_cut() {
        let cases = [
            r#"{"a":"x\ud800y"}"#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\\ud800","b":"\\\ud800"}"#,
            r#"{"a":"\ud83d\ud83d\ude00\udc00"}"#,
            r#"{"a":"\n\u00e9\ud800"}"#,
            r#"{"a":"end\ud83d"}"#,
        ];
        for text in cases {
            let whole = replace_lone_surrogates(text).unwrap_or_else(|| text.into());
            for cut in 0..=text.len() {
                for second in cut..=text.len() {
                    let mut joiner = EscapeJoiner::default();
                    let mut out = String::new();
                    for part in [&text[..cut], &text[cut..second], &text[second..]] {
                        out.push_str(&joiner.push(part));
                    }
                    out.push_str(&joiner.finish().unwrap_or_default());
                    assert_eq!(out, whole, "{text} cut at {cut} and {second}");
                }
            }
            assert!(
                serde_json::from_str::<serde_json::Value>(&whole).is_ok(),
                "{whole}"
            );
        }
    }

    #[test]
    fn a_cut_text_drops_its_unfinished_escape() {
        for (fragments, pushed, tail) in [
            (&["\"a\\"][..], "\"a", None),
            (&["\"a\\u00"][..], "\"a", None),
            (&["\"\\ud83d"][..], "\"", Some("\\ufffd")),
            (&["\"\\ud83d", "\\ude0"][..], "\"", Some("\\ufffd")),
            (&["\"\\n"][..], "\"\\n", None),
        ] {
            let mut joiner = EscapeJoiner::default();
            let mut text = String::new();
            for fragment in fragments {
                text.push_str(&joiner.push(fragment));
            }
            assert_eq!(text, pushed, "{fragments:?}");
            assert_eq!(joiner.finish_cut().as_deref(), tail, "{fragments:?}");
        }
    }

    #[test]
    fn markers_become_replacement_characters() {
        let text = alloc::format!("id_{}{}", marker(0xD800), marker(0xDFFF));
        assert_eq!(replace_markers(&text, true), "id_\u{fffd}\u{fffd}");
        assert_eq!(replace_markers(&text, false), text);
        assert!(matches!(
            replace_markers("plain", true),
            Cow::Borrowed("plain")
        ));
    }
}
