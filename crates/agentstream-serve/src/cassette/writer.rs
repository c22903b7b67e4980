//! The recorder's side of a cassette: each exchange written as it
//! happens, beneath the directory and never over another cassette.

use std::fs;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentstream_beneath::{create_dir, create_file, list_dir, Refusal, Resolver, RootDir};
use serde_json::{json, Value};

use super::cassette_number;
use super::redact_frames::FrameRedactor;
use super::redact_pieces::PieceRedactor;
use super::Redactor;

/// A cassette being written by the proxy: the request and the response's
/// head at once, then each piece of the body as it arrives, before the
/// client gets it (so a client that has read an answer finds it saved).
pub(crate) struct Writer {
    body: fs::File,
    lengths: fs::File,
    /// `response.body.times`: when each piece arrived.
    times: fs::File,
    /// `response.json`, kept open to mark the exchange cut.
    response: fs::File,
    head: Value,
    /// The response body's redaction (`--redact`), across its pieces.
    redacting: Option<BodyRedactor>,
}

/// `response.json` for the response's `head` (`{"status", "headers"}`,
/// and `"cut"` once cut), as the recorder writes it.
pub(crate) fn response_json(head: &Value) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(head).unwrap_or_default();
    text.push(b'\n');
    text
}

/// The line of `response.body.lengths` for a piece of `length` bytes.
pub(crate) fn length_line(length: usize) -> String {
    format!("{length}\n")
}

/// The number after the highest all-digit name in `dir` (`0` when there
/// is none): where a recorder's numbering starts, so a cassette deleted
/// before the last is never numbered again.
pub(crate) fn next_number(dir: &RootDir) -> io::Result<usize> {
    let mut next = 0usize;
    list_dir(dir, ".", Resolver::best(), |mut name| {
        if name.ends_with(['/', '@']) {
            name.pop();
        }
        if let Some(number) = cassette_number(&name) {
            next = next.max(number.saturating_add(1));
        }
    })?;
    Ok(next)
}

impl Writer {
    /// Creates the next cassette in `dir` with the request's files and
    /// `response.json`, and returns it with its name; the response body's
    /// pieces are redacted with `redactor`. The cassette's
    /// directory takes the first number from `next` that no entry has
    /// (created exclusively, so two recorders on one directory never
    /// share one), and every file is created exclusively in it, never
    /// through a symlink.
    pub(crate) fn begin(
        dir: &RootDir,
        next: &AtomicUsize,
        request: &Value,
        request_body: &[u8],
        status: u16,
        headers: Value,
        redactor: &Redactor,
    ) -> io::Result<(Self, String)> {
        use std::io::Write;
        let (cassette, name) = loop {
            let name = format!("{:04}", next.fetch_add(1, Ordering::Relaxed));
            match create_dir(dir, &name) {
                Ok(cassette) => break (cassette, name),
                // Taken: by a cassette of another recorder, or anything
                // else someone put there. The next number is tried; each
                // entry is passed over at most once.
                Err(Refusal::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(refusal) => return Err(refusal.into()),
            }
        };
        let pretty = |value: &Value| {
            let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
            text.push(b'\n');
            text
        };
        let write = |file: &str, bytes: &[u8]| -> io::Result<()> {
            create_file(&cassette, file)?.write_all(bytes)
        };
        write("request.json", &pretty(request))?;
        write("request.body", request_body)?;
        let head = json!({"status": status, "headers": headers});
        let mut response = create_file(&cassette, "response.json")?;
        response.write_all(&response_json(&head))?;
        let redacting = (!redactor.is_empty()).then(|| BodyRedactor::new(redactor, &head));
        let writer = Self {
            body: create_file(&cassette, "response.body")?,
            lengths: create_file(&cassette, "response.body.lengths")?,
            times: create_file(&cassette, "response.body.times")?,
            response,
            head,
            redacting,
        };
        Ok((writer, name))
    }

    /// Appends one piece of the body, which arrived `ms` milliseconds
    /// after the request was sent. With `--redact`, the piece may be
    /// written later (at the latest by [`finish`](Self::finish)), redacted
    /// together with its neighbours.
    pub(crate) fn piece(&mut self, piece: &[u8], ms: u64) -> io::Result<()> {
        match &mut self.redacting {
            None => self.write_piece(piece, ms),
            Some(redacting) => {
                for (piece, ms) in redacting.push(piece, ms) {
                    self.write_piece(&piece, ms)?;
                }
                Ok(())
            }
        }
    }

    /// The body has ended, or broke off: writes the pieces held back.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        let held = self
            .redacting
            .as_mut()
            .map(BodyRedactor::finish)
            .unwrap_or_default();
        for (piece, ms) in held {
            self.write_piece(&piece, ms)?;
        }
        Ok(())
    }

    fn write_piece(&mut self, piece: &[u8], ms: u64) -> io::Result<()> {
        use std::io::Write;
        self.body.write_all(piece)?;
        self.lengths
            .write_all(length_line(piece.len()).as_bytes())?;
        self.times.write_all(format!("{ms}\n").as_bytes())
    }

    /// Marks the exchange cut: `response.json` is written again (through
    /// the handle it was created with) with `"cut": true`.
    pub(crate) fn cut(&mut self) -> io::Result<()> {
        use std::io::{Seek, Write};
        self.head["cut"] = Value::Bool(true);
        self.response.set_len(0)?;
        self.response.rewind()?;
        self.response.write_all(&response_json(&self.head))
    }
}

/// A response body's redaction: as text across its pieces, or frame by
/// frame for an AWS event-stream body (whose frames carry lengths and
/// CRCs that text replacements would break).
enum BodyRedactor {
    Text(PieceRedactor),
    Frames(FrameRedactor),
}

impl BodyRedactor {
    /// The redaction of the body whose response head is `head`.
    fn new(redactor: &Redactor, head: &Value) -> Self {
        let content_type = head["headers"]
            .as_object()
            .and_then(|headers| {
                headers
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            })
            .and_then(|(_, value)| value.as_str())
            .unwrap_or_default();
        if content_type
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("application/vnd.amazon.eventstream")
        {
            Self::Frames(FrameRedactor::new(redactor.clone()))
        } else {
            Self::Text(PieceRedactor::new(redactor.clone()))
        }
    }

    fn push(&mut self, piece: &[u8], ms: u64) -> Vec<(Vec<u8>, u64)> {
        match self {
            Self::Text(text) => text.push(piece, ms),
            Self::Frames(frames) => frames.push(piece, ms),
        }
    }

    fn finish(&mut self) -> Vec<(Vec<u8>, u64)> {
        match self {
            Self::Text(text) => text.finish(),
            Self::Frames(frames) => frames.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_stream_body_is_redacted_by_frames_and_any_other_as_text() {
        let redactor = Redactor::new(["secret"]).unwrap();
        let head =
            |content_type: &str| json!({"status": 200, "headers": {"content-type": content_type}});
        assert!(matches!(
            BodyRedactor::new(&redactor, &head("application/vnd.amazon.eventstream")),
            BodyRedactor::Frames(_)
        ));
        assert!(matches!(
            BodyRedactor::new(&redactor, &head("text/event-stream; charset=utf-8")),
            BodyRedactor::Text(_)
        ));
        assert!(matches!(
            BodyRedactor::new(&redactor, &json!({"status": 502, "headers": {}})),
            BodyRedactor::Text(_)
        ));
    }
}
