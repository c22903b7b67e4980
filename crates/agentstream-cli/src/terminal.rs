//! Printing text that came from outside (a server, a recording, a log) to
//! a terminal: control characters are shown escaped, never obeyed.
//!
//! A provider error carrying `\x1b]0;title\x07\x1b[2J` would otherwise set
//! the window title and clear the screen, and a bidirectional override
//! (U+202E) would make the terminal show text in another order than it
//! has (a file name `txt.exe` shown as `exe.txt`). `--jsonl` output is
//! JSON, whose strings escape control characters already.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character except line feed and tab written
/// as `\u{..}`: C0 controls (carriage return and escape included), DEL,
/// the C1 controls U+0080 to U+009F, and the bidirectional controls
/// ([`is_bidi_control`]).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let is_escaped = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
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

/// Whether `c` is a bidirectional formatting control: the embeddings and
/// overrides U+202A to U+202E, the isolates U+2066 to U+2069, the marks
/// U+200E and U+200F, and the Arabic letter mark U+061C.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
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

    #[test]
    fn bidirectional_controls_are_shown_not_obeyed() {
        assert_eq!(
            escape_controls(
                "a\u{202e}txt.exe\u{202c} \u{2066}\u{2069}\u{200e}\u{200f}\u{61c}\u{202a}"
            ),
            "a\\u{202e}txt.exe\\u{202c} \\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}\\u{202a}"
        );
        // Other format characters (the zero-width joiner of emoji) stay.
        assert!(matches!(escape_controls("👩\u{200d}💻"), Cow::Borrowed(_)));
    }
}
