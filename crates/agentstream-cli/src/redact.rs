//! Secrets out of server text: `chat` prints what a server sent (its
//! answer, its error body), and a server that echoes the request's headers
//! would otherwise get the API key printed.
//!
//! [`Redactor::line`] replaces, in a complete text, every occurrence of the
//! configured key and the value of any `Authorization`, `x-api-key` or
//! `api-key` field (as a header line, a JSON member or a query parameter,
//! names in any case) with [`REDACTED`]. [`Redactor::stream`] does the same
//! to text printed piece by piece: it holds back an end that may be the
//! start of the key, so a key cut between two deltas is still caught.

use std::borrow::Cow;

/// What a secret is printed as.
pub const REDACTED: &str = "[REDACTED]";

/// The field names whose values are secrets, in lower case.
const SECRET_FIELDS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// Redacts one key and the secret fields.
#[derive(Debug, Default)]
pub struct Redactor {
    /// The configured API key, when there is one.
    key: Option<String>,
    /// The held-back end of streamed text.
    pending: String,
}

impl Redactor {
    /// A redactor for `key` (keys shorter than 4 bytes are not looked for:
    /// they would match ordinary text).
    pub fn new(key: Option<&str>) -> Self {
        Self {
            key: key.filter(|k| k.len() >= 4).map(String::from),
            pending: String::new(),
        }
    }

    /// `text` with the key and secret field values replaced.
    pub fn line<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = match &self.key {
            Some(key) if text.contains(key.as_str()) => {
                Cow::Owned(text.replace(key.as_str(), REDACTED))
            }
            _ => Cow::Borrowed(text),
        };
        match redact_fields(&text) {
            Some(redacted) => Cow::Owned(redacted),
            None => text,
        }
    }

    /// The part of the text streamed so far, with `piece` appended, that
    /// can be printed: the key replaced, and an end that may be the start
    /// of the key held back until the next piece or [`flush`](Self::flush).
    pub fn stream(&mut self, piece: &str) -> String {
        let Some(key) = &self.key else {
            return piece.to_string();
        };
        let mut text = std::mem::take(&mut self.pending);
        text.push_str(piece);
        let mut text = text.replace(key.as_str(), REDACTED);
        // The longest end of `text` that is a proper start of the key.
        let held = (1..key.len())
            .rev()
            .find(|&n| {
                text.len() >= n
                    && text.is_char_boundary(text.len() - n)
                    && key.starts_with(&text[text.len() - n..])
            })
            .unwrap_or(0);
        self.pending = text.split_off(text.len() - held);
        text
    }

    /// What [`stream`](Self::stream) held back.
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }
}

/// `text` with the value after each secret field name replaced, or `None`
/// when it has none. A value is what follows the name and a `:` or `=`
/// (with quotes, backslashes and blanks around them), up to a quote, a
/// backslash, a line end, `,`, `;`, `&` or `}`.
fn redact_fields(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while from < lower.len() {
        let Some((at, name)) = SECRET_FIELDS
            .iter()
            .filter_map(|name| lower[from..].find(name).map(|i| (from + i, *name)))
            .min_by_key(|&(i, _)| i)
        else {
            break;
        };
        let mut i = at + name.len();
        from = i;
        let skip = |i: &mut usize| {
            while *i < bytes.len() && matches!(bytes[*i], b'"' | b'\'' | b'\\' | b' ' | b'\t') {
                *i += 1;
            }
        };
        skip(&mut i);
        if i >= bytes.len() || !matches!(bytes[i], b':' | b'=') {
            continue;
        }
        i += 1;
        skip(&mut i);
        let start = i;
        while i < bytes.len()
            && !matches!(
                bytes[i],
                b'"' | b'\'' | b'\\' | b'\n' | b'\r' | b',' | b';' | b'&' | b'}'
            )
        {
            i += 1;
        }
        if i == start {
            continue;
        }
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = i;
        from = i;
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_and_secret_fields_are_redacted() {
        let r = Redactor::new(Some("sk-secret-123"));
        assert_eq!(
            r.line(r#"{"error":{"message":"bad","headers":{"Authorization":"Bearer sk-other","X-Api-Key":"k1","api-key": "k2"}}} sk-secret-123"#),
            r#"{"error":{"message":"bad","headers":{"Authorization":"[REDACTED]","X-Api-Key":"[REDACTED]","api-key": "[REDACTED]"}}} [REDACTED]"#
        );
        assert_eq!(
            r.line("authorization: Bearer abc\nx-api-key=def&q=1"),
            "authorization: [REDACTED]\nx-api-key=[REDACTED]&q=1"
        );
        assert!(matches!(
            r.line("the api-key is required"),
            Cow::Borrowed(_)
        ));
        assert_eq!(Redactor::new(None).line("sk-secret-123"), "sk-secret-123");
    }

    #[test]
    fn a_key_cut_between_pieces_is_caught() {
        let key = "sk-secret-123";
        let text = format!("one {key} two {key}");
        for cut in 0..=text.len() {
            let mut r = Redactor::new(Some(key));
            let mut out = r.stream(&text[..cut]);
            out.push_str(&r.stream(&text[cut..]));
            out.push_str(&r.flush());
            assert_eq!(out, "one [REDACTED] two [REDACTED]", "cut at {cut}");
        }
    }
}
