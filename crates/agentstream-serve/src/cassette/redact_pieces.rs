//! A response body redacted as one text while it arrives in pieces: a
//! match split across two network pieces (an upstream writing one byte at
//! a time) is redacted as if the body had come whole.
//!
//! # Bounded memory, linear cost
//!
//! The redactor holds back the last bytes of the body, at most twice its
//! window (the longest match any pattern can
//! make, or [`MAX_MATCH_WINDOW`](super::MAX_MATCH_WINDOW) for a
//! pattern whose matches have no bound), or 8 KiB if more, plus the
//! latest piece. Once it holds that much it searches what it holds and writes out what no later
//! byte can change: everything up to a window before its end. Each byte
//! is searched a bounded number of times, so the cost is linear in the
//! body. A match longer than the window of a pattern without a bound
//! (`BEGIN.*END` over more than 64 KiB) may be missed where it crosses
//! the held bytes' edge; a bounded pattern's matches never are.
//!
//! # Piece boundaries
//!
//! The cassette keeps as many pieces as arrived, each with its arrival
//! time; their lengths change with the replacements. A boundary outside
//! any match stays where it was in the text; one inside a match moves to
//! the match's start, so the replacement goes out with the piece that
//! completed the secret, when a client of the real upstream had it
//! whole. A piece that lay wholly inside a match is empty. A piece is
//! written once the bytes before its end are decided: the last ones when
//! the body ends (the recorder [finishes](super::Writer::finish) it
//! before the client's answer ends).

use std::collections::VecDeque;

use super::Redactor;

/// Bytes kept before the undecided ones, for the patterns' look-behind
/// (`\b`, `(?m:^)`) and look-ahead past a match's end (a UTF-8 character
/// at most, twice).
const CONTEXT: usize = 8;

/// The fewest undecided bytes searched at once: with a short pattern and
/// one-byte pieces, a search every few bytes would cost more in starting
/// searches than in searching.
const MIN_SEARCH: usize = 8 << 10;

/// A response body's pieces, redacted across their boundaries.
pub(crate) struct PieceRedactor {
    redactor: Redactor,
    /// The raw bytes not yet written out, after `context` bytes that were
    /// (kept for look-around).
    held: Vec<u8>,
    context: usize,
    /// The body's offset of `held[0]`.
    held_start: usize,
    /// The redacted bytes of the piece being made.
    out: Vec<u8>,
    /// The pieces not yet written: the body's offset of each one's end,
    /// and its arrival time.
    pending: VecDeque<(usize, u64)>,
}

impl PieceRedactor {
    /// A redactor of one body with `redactor`'s patterns.
    pub(crate) fn new(redactor: Redactor) -> Self {
        Self {
            redactor,
            held: Vec::new(),
            context: 0,
            held_start: 0,
            out: Vec::new(),
            pending: VecDeque::new(),
        }
    }

    /// Takes the next piece, which arrived at `ms`: the pieces now
    /// decided, redacted, each with its arrival time (none, or several).
    pub(crate) fn push(&mut self, piece: &[u8], ms: u64) -> Vec<(Vec<u8>, u64)> {
        self.held.extend_from_slice(piece);
        self.pending
            .push_back((self.held_start + self.held.len(), ms));
        let window = self.redactor.window();
        if self.held.len() - self.context >= (2 * window + CONTEXT).max(MIN_SEARCH) {
            self.settle(false)
        } else {
            Vec::new()
        }
    }

    /// The body has ended (or broke off): every piece still held.
    pub(crate) fn finish(&mut self) -> Vec<(Vec<u8>, u64)> {
        self.settle(true)
    }

    /// Writes out what is decided: everything when `last`, else up to a
    /// window (and the look-ahead) before the end, or past it to the end
    /// of a match that started before.
    fn settle(&mut self, last: bool) -> Vec<(Vec<u8>, u64)> {
        let mut ready = Vec::new();
        let Some(regex) = self.redactor.combined() else {
            return ready;
        };
        let regex = regex.clone();
        let len = self.held.len();
        let safe = if last {
            len
        } else {
            len.saturating_sub(self.redactor.window() + CONTEXT)
                .max(self.context)
        };
        let mut cursor = self.context;
        while let Some((start, end)) = regex
            .find_at(&self.held, cursor)
            .map(|found| (found.start(), found.end()))
        {
            if start >= safe && !last {
                break;
            }
            self.raw(cursor, start, &mut ready);
            self.matched(end, &mut ready);
            cursor = end;
        }
        let decided = if last { len } else { safe.max(cursor) };
        self.raw(cursor, decided, &mut ready);
        // Keep a little of what was written, for look-behind.
        let keep = decided.min(CONTEXT);
        self.held.drain(..decided - keep);
        self.held_start += decided - keep;
        self.context = keep;
        ready
    }

    /// `held[from..to]` goes out unchanged, each piece ending in it cut.
    fn raw(&mut self, from: usize, to: usize, ready: &mut Vec<(Vec<u8>, u64)>) {
        let mut at = from;
        while let Some(&(end, ms)) = self.pending.front() {
            let end = end - self.held_start;
            if end > to {
                break;
            }
            self.out.extend_from_slice(&self.held[at..end.max(at)]);
            at = at.max(end);
            ready.push((std::mem::take(&mut self.out), ms));
            self.pending.pop_front();
        }
        self.out.extend_from_slice(&self.held[at..to]);
    }

    /// A match ending at `end` goes out as the replacement; a piece that
    /// ended inside it ends before it.
    fn matched(&mut self, end: usize, ready: &mut Vec<(Vec<u8>, u64)>) {
        while let Some(&(piece_end, ms)) = self.pending.front() {
            if piece_end - self.held_start >= end {
                break;
            }
            ready.push((std::mem::take(&mut self.out), ms));
            self.pending.pop_front();
        }
        self.out.extend_from_slice(super::REDACTED_BODY.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::PieceRedactor;
    use crate::cassette::Redactor;

    /// `body` cut into `pieces`, redacted: the pieces written.
    fn redacted(patterns: &[&str], pieces: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut redactor = PieceRedactor::new(Redactor::new(patterns).unwrap());
        let mut out = Vec::new();
        for (ms, piece) in pieces.iter().enumerate() {
            out.extend(redactor.push(piece, ms as u64));
        }
        out.extend(redactor.finish());
        assert_eq!(out.len(), pieces.len(), "one piece out for each in");
        let times: Vec<u64> = out.iter().map(|(_, ms)| *ms).collect();
        assert_eq!(times, (0..pieces.len() as u64).collect::<Vec<_>>());
        out.into_iter().map(|(piece, _)| piece).collect()
    }

    #[test]
    fn a_match_split_across_pieces_is_redacted_where_it_ends() {
        let out = redacted(&["hunter[0-9]"], &[b"my hun", b"ter2 is", b" safe"]);
        assert_eq!(out, [&b"my "[..], b"[REDACTED] is", b" safe"]);
    }

    #[test]
    fn one_byte_pieces_give_the_whole_body_s_redaction() {
        let body = "a hunter2, b hunter3 c, then a long tail with hunter4".repeat(400);
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        let out = redacted(&["hunter[0-9]", r"\bb\b"], &pieces);
        let joined: Vec<u8> = out.concat();
        let whole = Redactor::new(["hunter[0-9]", r"\bb\b"]).unwrap();
        assert_eq!(joined, &*whole.bytes(body.as_bytes()));
        assert!(!String::from_utf8(joined).unwrap().contains("hunter"));
    }

    #[test]
    fn an_unbounded_pattern_is_redacted_across_many_pieces() {
        let mut body = b"X".repeat(300_000);
        body.splice(150_000..150_000, b"sk-abcdefghijklmnop".iter().copied());
        let pieces: Vec<&[u8]> = body.chunks(7).collect();
        let out = redacted(&["sk-[a-z]+"], &pieces);
        let joined = out.concat();
        assert_eq!(joined.len(), 300_000 + "[REDACTED]".len());
        assert!(!joined.windows(3).any(|w| w == b"sk-"));
    }

    #[test]
    fn without_a_match_the_pieces_stay_as_they_came() {
        let out = redacted(&["secret"], &[b"ab", b"", b"cd"]);
        assert_eq!(out, [&b"ab"[..], b"", b"cd"]);
    }
}
