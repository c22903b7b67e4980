//! Printing text that came from outside (a server, a recording, a log) to
//! a terminal: control characters are shown escaped, never obeyed.
//!
//! A provider error carrying `\x1b]0;title\x07\x1b[2J` would otherwise set
//! the window title and clear the screen. `--jsonl` output is JSON, whose
//! strings escape control characters already.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character except line feed and tab written
/// as `\u{..}`: C0 controls (carriage return and escape included), DEL and
/// the C1 controls U+0080 to U+009F.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let is_escaped = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(is_escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_escaped(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A one-line message (an error, a quoted body): also escapes line feeds
/// and tabs, so the message stays on its line.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    match escape_controls(text) {
        Cow::Borrowed(text) if !text.contains(['\n', '\t']) => Cow::Borrowed(text),
        escaped => Cow::Owned(escaped.replace('\n', "\\n").replace('\t', "\\t")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        assert_eq!(
            escape_controls("a\x1b]0;title\x07\x1b[2Jb\r\n\tc\u{9b}d\u{7f}"),
            "a\\u{1b}]0;title\\u{7}\\u{1b}[2Jb\\u{d}\n\tc\\u{9b}d\\u{7f}"
        );
        assert!(matches!(
            escape_controls("plain ünïcode\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_line("one\ntwo\tthree\x1b"),
            "one\\ntwo\\tthree\\u{1b}"
        );
    }
}
