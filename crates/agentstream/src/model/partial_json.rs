//! Lenient parsing of a JSON text that is still arriving: the value formed
//! so far, as pi-ai's `parseStreamingJson` gives it to a tool call's
//! partial `arguments` (the `partial-json` package).
//!
//! A complete text parses as JSON. A prefix keeps everything that is
//! complete and the open parts that have a value: an open string keeps
//! the characters so far (an escape cut in half is dropped), an open
//! number keeps its digits if they form a number, a literal cut short
//! (`tr`, `nul`) becomes its value, an object member without a value yet
//! is left out. Anything else (a text that is not a JSON prefix) gives
//! `None`. One pass over the text; nesting deeper than [`MAX_DEPTH`] ends
//! the value there, so the cost is linear and the stack bounded.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

/// The deepest nesting parsed; deeper values are cut off at this depth.
pub(crate) const MAX_DEPTH: usize = 128;

/// The arguments object formed so far by the argument text `text`: `{}`
/// for an empty text, a text that is not (a prefix of) an object, or one
/// that is not JSON at all.
pub(crate) fn partial_arguments(text: &str) -> Map<String, Value> {
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) {
        return map;
    }
    match parse_prefix(text) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The value formed so far by the JSON prefix `text`, or `None`.
pub(crate) fn parse_prefix(text: &str) -> Option<Value> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    match parser.value(0) {
        Parsed::Complete(value) | Parsed::Cut(Some(value)) => Some(value),
        Parsed::Cut(None) | Parsed::Invalid => None,
    }
}

/// What parsing a value gave.
enum Parsed {
    /// A whole value; the text may go on.
    Complete(Value),
    /// The text ended inside the value: what it holds so far, if anything.
    Cut(Option<Value>),
    /// Not JSON.
    Invalid,
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn skip_whitespace(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Parsed {
        self.skip_whitespace();
        let Some(&first) = self.bytes.get(self.at) else {
            return Parsed::Cut(None);
        };
        match first {
            b'{' | b'[' if depth >= MAX_DEPTH => Parsed::Cut(None),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => match self.string() {
                Ok(s) => Parsed::Complete(Value::String(s)),
                Err(Some(s)) => Parsed::Cut(Some(Value::String(s))),
                Err(None) => Parsed::Invalid,
            },
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Parsed::Invalid,
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Parsed {
        let rest = &self.bytes[self.at..];
        if rest.starts_with(word.as_bytes()) {
            self.at += word.len();
            return Parsed::Complete(value);
        }
        if word.as_bytes().starts_with(rest) {
            self.at = self.bytes.len();
            return Parsed::Cut(Some(value));
        }
        Parsed::Invalid
    }

    fn number(&mut self) -> Parsed {
        let start = self.at;
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.at += 1;
        }
        let digits = &self.text[start..self.at];
        let at_end = self.at == self.bytes.len();
        match serde_json::from_str::<Number>(digits) {
            Ok(n) if at_end => Parsed::Cut(Some(Value::Number(n))),
            Ok(n) => Parsed::Complete(Value::Number(n)),
            Err(_) if at_end => {
                // `1.`, `1e`, `-`: the longest prefix that is a number.
                let trimmed = digits.trim_end_matches(['.', 'e', 'E', '+', '-']);
                Parsed::Cut(
                    serde_json::from_str::<Number>(trimmed)
                        .ok()
                        .map(Value::Number),
                )
            }
            Err(_) => Parsed::Invalid,
        }
    }

    /// A string at `self.at` (its opening quote): `Ok` when closed,
    /// `Err(Some(so_far))` when the text ends inside it, `Err(None)` when
    /// it is not a JSON string.
    fn string(&mut self) -> Result<String, Option<String>> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run_start = self.at;
            while self
                .bytes
                .get(self.at)
                .is_some_and(|b| *b != b'"' && *b != b'\\')
            {
                self.at += 1;
            }
            out.push_str(&self.text[run_start..self.at]);
            match self.bytes.get(self.at) {
                None => return Err(Some(out)),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                _ => {}
            }
            // A backslash.
            let Some(&escape) = self.bytes.get(self.at + 1) else {
                self.at = self.bytes.len();
                return Err(Some(out));
            };
            self.at += 2;
            let plain = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => match self.unicode_escape() {
                    Ok(c) => c,
                    Err(true) => return Err(Some(out)),
                    Err(false) => return Err(None),
                },
                _ => return Err(None),
            };
            out.push(plain);
        }
    }

    /// The character of a `\u` escape whose digits start at `self.at`
    /// (a surrogate pair included); `Err(true)` if the text ends inside it,
    /// `Err(false)` if it is malformed.
    fn unicode_escape(&mut self) -> Result<char, bool> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            return char::from_u32(first).ok_or(false);
        }
        // A high surrogate: its low half follows as `\uXXXX`.
        match self.bytes.get(self.at..self.at + 2) {
            Some([b'\\', b'u']) => self.at += 2,
            Some(_) => return Err(false),
            None => {
                self.at = self.bytes.len();
                return Err(true);
            }
        }
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(false);
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)).ok_or(false)
    }

    fn hex4(&mut self) -> Result<u32, bool> {
        let Some(digits) = self.text.get(self.at..self.at + 4) else {
            let rest = &self.bytes[self.at..];
            self.at = self.bytes.len();
            return Err(rest.iter().all(u8::is_ascii_hexdigit));
        };
        let value = u32::from_str_radix(digits, 16).map_err(|_| false)?;
        self.at += 4;
        Ok(value)
    }

    fn array(&mut self, depth: usize) -> Parsed {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                None => return Parsed::Cut(Some(Value::Array(items))),
                Some(b']') => {
                    self.at += 1;
                    return Parsed::Complete(Value::Array(items));
                }
                _ => {}
            }
            match self.value(depth) {
                Parsed::Complete(value) => items.push(value),
                Parsed::Cut(value) => {
                    items.extend(value);
                    return Parsed::Cut(Some(Value::Array(items)));
                }
                Parsed::Invalid => return Parsed::Invalid,
            }
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                None => return Parsed::Cut(Some(Value::Array(items))),
                Some(b',') => self.at += 1,
                Some(b']') => {}
                Some(_) => return Parsed::Invalid,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Parsed {
        self.at += 1;
        let mut map = Map::new();
        loop {
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                None => return Parsed::Cut(Some(Value::Object(map))),
                Some(b'}') => {
                    self.at += 1;
                    return Parsed::Complete(Value::Object(map));
                }
                Some(b'"') => {}
                Some(_) => return Parsed::Invalid,
            }
            let key = match self.string() {
                Ok(key) => key,
                // A key cut short has no value yet: left out.
                Err(Some(_)) => return Parsed::Cut(Some(Value::Object(map))),
                Err(None) => return Parsed::Invalid,
            };
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                None => return Parsed::Cut(Some(Value::Object(map))),
                Some(b':') => self.at += 1,
                Some(_) => return Parsed::Invalid,
            }
            match self.value(depth) {
                Parsed::Complete(value) => {
                    map.insert(key, value);
                }
                Parsed::Cut(value) => {
                    if let Some(value) = value {
                        map.insert(key, value);
                    }
                    return Parsed::Cut(Some(Value::Object(map)));
                }
                Parsed::Invalid => return Parsed::Invalid,
            }
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                None => return Parsed::Cut(Some(Value::Object(map))),
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                Some(_) => return Parsed::Invalid,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_prefix, partial_arguments, MAX_DEPTH};
    use alloc::string::String;
    use serde_json::json;

    #[test]
    fn every_prefix_of_an_object_gives_the_value_formed_so_far() {
        let cases = [
            ("", json!({})),
            ("{", json!({})),
            ("{\"pa", json!({})),
            ("{\"path\"", json!({})),
            ("{\"path\":", json!({})),
            ("{\"path\": \"REA", json!({"path": "REA"})),
            ("{\"path\": \"README.md\"", json!({"path": "README.md"})),
            (
                "{\"path\": \"README.md\", \"n\": 1",
                json!({"path": "README.md", "n": 1}),
            ),
            ("{\"n\": 1.", json!({"n": 1})),
            ("{\"n\": -", json!({})),
            ("{\"ok\": tr", json!({"ok": true})),
            ("{\"v\": nu", json!({"v": null})),
            (
                "{\"a\": [1, 2, {\"b\": \"c",
                json!({"a": [1, 2, {"b": "c"}]}),
            ),
            ("{\"s\": \"a\\", json!({"s": "a"})),
            ("{\"s\": \"a\\n\\u00e9\\u12", json!({"s": "a\né"})),
            ("{\"s\": \"\\ud83d\\ude00\"}", json!({"s": "😀"})),
        ];
        for (text, expected) in cases {
            assert_eq!(
                serde_json::Value::Object(partial_arguments(text)),
                expected,
                "{text:?}"
            );
        }
    }

    #[test]
    fn what_is_not_a_json_prefix_gives_nothing() {
        for text in [
            "x",
            "{x",
            "{\"a\" 1",
            "{\"a\": 1 2",
            "[1 2",
            "{\"a\": tx",
            "{\"s\": \"\\q",
        ] {
            assert_eq!(parse_prefix(text), None, "{text:?}");
        }
        assert!(partial_arguments("[1, 2]").is_empty());
        assert!(partial_arguments("\"text\"").is_empty());
    }

    #[test]
    fn deep_nesting_is_cut_at_the_limit_without_recursing_further() {
        let mut text = String::from("{\"a\": ");
        for _ in 0..100_000 {
            text.push('[');
        }
        let value = partial_arguments(&text);
        let mut depth = 0;
        let mut current = &value["a"];
        while let Some(inner) = current.as_array().and_then(|items| items.first()) {
            current = inner;
            depth += 1;
        }
        assert!(depth < MAX_DEPTH, "{depth}");
    }
}
