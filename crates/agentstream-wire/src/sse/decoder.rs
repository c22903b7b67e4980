//! [`SseDecoder`]: the incremental decoder (see the [module
//! documentation](super)).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::SseEvent;
use crate::limits::{Limit, LimitExceeded, Limits};

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The position of the first CR or LF in `bytes`.
///
/// Eight bytes at a time: a word holds a CR or LF exactly when XOR-ing it
/// with that byte repeated leaves a zero byte, which the classic
/// `(x - 0x01…) & !x & 0x80…` test finds without false negatives (a false
/// positive needs a real zero byte below it, so the word is then searched
/// byte by byte, which finds the real one).
fn find_line_break(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut start = 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut array = [0u8; 8];
        array.copy_from_slice(word);
        let x = u64::from_le_bytes(array);
        if has_zero(x ^ (ONES * u64::from(b'\n'))) | has_zero(x ^ (ONES * u64::from(b'\r'))) != 0 {
            break;
        }
        start += 8;
    }
    bytes[start..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| start + i)
}
/// What [`SseDecoder::finish`] does with an event that has no closing empty
/// line. See the [module documentation](super).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EndOfInput {
    /// Process an unterminated last line, then dispatch a pending event that
    /// has data. The default.
    #[default]
    Dispatch,
    /// Discard both, as the WHATWG standard says.
    Discard,
}

/// An incremental SSE decoder. See the [module documentation](super).
#[derive(Debug, Clone, Default)]
pub struct SseDecoder {
    /// Bytes of the current line not yet ended.
    line: Vec<u8>,
    /// How many bytes of a leading BOM have been matched so far, while the
    /// stream start is still undecided.
    bom_matched: usize,
    /// The start of the stream (and its BOM) is behind us.
    past_start: bool,
    /// The last chunk ended with CR: an LF first in the next one belongs to it.
    skip_lf: bool,
    data: String,
    has_data: bool,
    /// The pending event type; empty means the default type. Its buffer is
    /// kept across events, like `data`'s.
    event: String,
    last_id: Option<Arc<str>>,
    retry: Option<u64>,
    policy: EndOfInput,
    limits: Limits,
    /// The limit exceeded, once one was: later input is ignored.
    exceeded: Option<LimitExceeded>,
    finished: bool,
}

impl SseDecoder {
    /// A decoder with the [`EndOfInput::Dispatch`] policy.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder with the given end-of-input policy.
    pub fn with_end_of_input(policy: EndOfInput) -> Self {
        Self {
            policy,
            ..Self::default()
        }
    }

    /// Sets the line and event data limits (the other [`Limits`] are not
    /// the decoder's). The default is [`Limits::DEFAULT`].
    ///
    /// ```
    /// use agentstream_wire::limits::{Limit, Limits};
    /// use agentstream_wire::sse::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new().with_limits(Limits::default().with_max_line_bytes(8));
    /// let error = decoder.feed_to_vec(b"data: 123456789").unwrap_err();
    /// assert_eq!(error.limit, Limit::LineBytes);
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limit exceeded, if one was.
    pub fn exceeded(&self) -> Option<LimitExceeded> {
        self.exceeded
    }

    /// The reconnection time in milliseconds from the last valid `retry`
    /// field, if any. A value too large for `u64` saturates.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The last event ID buffer; `None` when empty.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds the next piece of the body; `sink` receives every event it
    /// completes, in order. Input after [`finish`](Self::finish) is ignored.
    ///
    /// # Errors
    /// [`LimitExceeded`] when a line or an event's data goes past its limit
    /// (see [Limits](super#limits)); the events completed before it have
    /// been handed to `sink`, and later input is ignored.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        mut sink: impl FnMut(SseEvent),
    ) -> Result<(), LimitExceeded> {
        self.feed_ref(bytes, |event| sink(event.clone()))
    }

    /// [`feed`](Self::feed), lending each event to `sink` instead of giving
    /// it away: the decoder keeps its data buffer for the next event, so
    /// decoding allocates nothing per event once the buffers have grown.
    ///
    /// # Errors
    /// As [`feed`](Self::feed).
    pub fn feed_ref(
        &mut self,
        mut bytes: &[u8],
        mut sink: impl FnMut(&SseEvent),
    ) -> Result<(), LimitExceeded> {
        if let Some(exceeded) = self.exceeded {
            return Err(exceeded);
        }
        if self.finished {
            return Ok(());
        }
        if !self.past_start {
            while let Some(&b) = bytes.first() {
                if b == BOM[self.bom_matched] {
                    self.bom_matched += 1;
                    bytes = &bytes[1..];
                    if self.bom_matched == BOM.len() {
                        self.past_start = true;
                        break;
                    }
                } else {
                    // Not a BOM: the bytes matched so far are content.
                    self.past_start = true;
                    let matched = self.bom_matched;
                    self.lines(&BOM[..matched], &mut sink)?;
                    break;
                }
            }
            if !self.past_start {
                return Ok(());
            }
        }
        self.lines(bytes, &mut sink)
    }

    fn exceed(&mut self, limit: Limit) -> Result<(), LimitExceeded> {
        let exceeded = LimitExceeded::new(limit, &self.limits);
        self.exceeded = Some(exceeded);
        // Nothing more will be decoded: give the buffers back.
        self.line = Vec::new();
        self.data = String::new();
        self.event = String::new();
        Err(exceeded)
    }

    /// Splits `bytes` into lines, joining with the pending partial line.
    fn lines(
        &mut self,
        mut bytes: &[u8],
        sink: &mut impl FnMut(&SseEvent),
    ) -> Result<(), LimitExceeded> {
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = find_line_break(bytes) {
            let (line, rest) = bytes.split_at(end);
            if rest[0] == b'\r' {
                match rest.get(1) {
                    Some(b'\n') => bytes = &rest[2..],
                    Some(_) => bytes = &rest[1..],
                    None => {
                        self.skip_lf = true;
                        bytes = &[];
                    }
                }
            } else {
                bytes = &rest[1..];
            }
            if self.line.len().saturating_add(line.len()) > self.limits.max_line_bytes {
                return self.exceed(Limit::LineBytes);
            }
            if self.line.is_empty() {
                self.process_line(line, sink)?;
            } else {
                let mut joined = core::mem::take(&mut self.line);
                joined.extend_from_slice(line);
                self.process_line(&joined, sink)?;
                joined.clear();
                self.line = joined;
            }
        }
        if self.line.len().saturating_add(bytes.len()) > self.limits.max_line_bytes {
            return self.exceed(Limit::LineBytes);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(
        &mut self,
        line: &[u8],
        sink: &mut impl FnMut(&SseEvent),
    ) -> Result<(), LimitExceeded> {
        if line.is_empty() {
            self.dispatch(sink);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        // Valid UTF-8 is the norm: check it with the fast validator and
        // only fall back to the replacing one for broken input.
        let text = match core::str::from_utf8(line) {
            Ok(text) => alloc::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(line),
        };
        // The colon ends a short field name: a plain loop finds it sooner
        // than `find`'s memchr, whose setup costs more than the search.
        let (field, value) = match text.bytes().position(|b| b == b':') {
            Some(colon) => {
                let value = &text[colon + 1..];
                (&text[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&*text, ""),
        };
        match field {
            "data" => {
                let added = value.len().saturating_add(usize::from(self.has_data));
                if self.data.len().saturating_add(added) > self.limits.max_event_data_bytes {
                    return self.exceed(Limit::EventDataBytes);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "id" if !value.contains('\0') => {
                self.last_id = (!value.is_empty()).then(|| Arc::from(value));
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.bytes().fold(0u64, |acc, b| {
                    acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
                });
                self.retry = Some(ms);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, sink: &mut impl FnMut(&SseEvent)) {
        if !self.has_data {
            self.data.clear();
            self.event.clear();
            return;
        }
        self.has_data = false;
        let event = (!self.event.is_empty()).then(|| core::mem::take(&mut self.event));
        let mut dispatched = SseEvent {
            event,
            data: core::mem::take(&mut self.data),
            id: self.last_id.clone(),
        };
        sink(&dispatched);
        // Keep the buffers: the next event's data and type reuse their
        // capacity.
        dispatched.data.clear();
        self.data = dispatched.data;
        if let Some(mut event) = dispatched.event {
            event.clear();
            self.event = event;
        }
    }

    /// Ends the input, applying the [`EndOfInput`] policy. Later calls to
    /// [`feed`](Self::feed) and `finish` do nothing.
    pub fn finish(&mut self, mut sink: impl FnMut(SseEvent)) {
        self.finish_ref(|event| sink(event.clone()));
    }

    /// [`finish`](Self::finish), lending the events (see
    /// [`feed_ref`](Self::feed_ref)).
    pub fn finish_ref(&mut self, mut sink: impl FnMut(&SseEvent)) {
        if self.finished || self.exceeded.is_some() {
            self.finished = true;
            return;
        }
        if !self.past_start {
            // A lone partial BOM prefix is content.
            self.past_start = true;
            let matched = self.bom_matched;
            self.line.extend_from_slice(&BOM[..matched]);
        }
        self.finished = true;
        if self.policy == EndOfInput::Discard {
            return;
        }
        if !self.line.is_empty() {
            let line = core::mem::take(&mut self.line);
            // The line is within its limit (`feed` checked it); its data may
            // not be, and then the pending event is not dispatched.
            if self.process_line(&line, &mut sink).is_err() {
                return;
            }
        }
        self.dispatch(&mut sink);
    }

    /// [`feed`](Self::feed), collecting the events into a `Vec`.
    ///
    /// # Errors
    /// As [`feed`](Self::feed); the events before the error are lost to
    /// the caller, so use `feed` where they matter.
    pub fn feed_to_vec(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LimitExceeded> {
        let mut out = Vec::new();
        self.feed(bytes, |e| out.push(e))?;
        Ok(out)
    }

    /// [`finish`](Self::finish), collecting the events into a `Vec`.
    pub fn finish_to_vec(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.finish(|e| out.push(e));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::find_line_break;

    #[test]
    fn the_word_scan_finds_the_first_line_break() {
        // Every position of CR or LF in buffers around the word size, with
        // zero bytes and high bytes around it (the false-positive cases).
        for len in 0..40 {
            for at in 0..=len {
                for fill in [b'a', 0, 0xFF, b'\n' + 1] {
                    for found in [b'\n', b'\r'] {
                        let mut bytes = alloc::vec![fill; len];
                        if at < len {
                            bytes[at] = found;
                        }
                        let naive = bytes.iter().position(|&b| b == b'\n' || b == b'\r');
                        assert_eq!(find_line_break(&bytes), naive, "{bytes:?}");
                    }
                }
            }
        }
    }
}
