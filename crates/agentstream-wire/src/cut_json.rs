//! Lenient reading of a tool call's argument text that was cut off: the
//! shortest suffix that makes the text JSON.
//!
//! When a provider stops for length in the middle of a tool call, the
//! argument deltas already sent are a prefix of a JSON object. The call is
//! kept (the agent loop does not execute the calls of a `length` turn) with
//! the arguments that prefix gives once completed. The completion is a
//! *suffix*, sent as the call's last delta, so the deltas still add up to
//! the call's arguments:
//!
//! - an open string is closed (a dangling `\` becomes `\\`, a cut `\u`
//!   escape is padded with `0`s); an open key gets `:null`;
//! - a cut literal is finished (`tr` → `true`), a number that ends in
//!   `-`, `.`, `e` or `+` gets a `0`;
//! - a member or element still expected after `:`, `,` or `[` becomes
//!   `null` (a member after a trailing `,` is `"":null`, since JSON has no
//!   trailing commas);
//! - every open object and array is closed.
//!
//! The cost is one pass over the text and the memory one byte per open
//! container.

use alloc::string::String;
use alloc::vec::Vec;

/// Where the scanner is inside the innermost container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (at the top, after `:` or after `[`/`,` in an array).
    Value,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value: `,` or the closer.
    Next,
}

/// The suffix that completes `prefix` (a cut JSON object) into JSON text,
/// or `None` when `prefix` is not the start of a JSON object.
///
/// ```text
/// {"city":"Par      →  "}
/// {"a":1,"b":       →  null}
/// {"a":[1,tr        →  ue]}
/// ```
pub(crate) fn completion(prefix: &str) -> Option<String> {
    let text = crate::json::trim_json(prefix);
    if !text.starts_with('{') {
        return None;
    }
    // Open containers: `{` or `[`.
    let mut stack: Vec<u8> = Vec::new();
    let mut expect = Expect::Value;
    // Inside a string: whether it is a key, and the escape state (0 none,
    // 1 after `\`, 2..=5 inside `\u` with n-2 hex digits).
    let mut string: Option<bool> = None;
    let mut escape = 0u8;
    // The scalar token being read (a number or a literal), if any.
    let mut token = String::new();
    // The object closed: only whitespace may follow.
    let mut closed = false;
    for b in text.bytes() {
        if closed {
            return None;
        }
        if let Some(is_key) = string {
            match escape {
                0 if b == b'\\' => escape = 1,
                0 if b == b'"' => {
                    string = None;
                    expect = if is_key { Expect::Colon } else { Expect::Next };
                }
                0 => {}
                1 if b == b'u' => escape = 2,
                1 => escape = 0,
                2..=4 => escape += 1,
                _ => escape = 0,
            }
            continue;
        }
        if !token.is_empty() && !is_token_byte(b) {
            if !token_complete(&token) {
                return None;
            }
            token.clear();
            expect = Expect::Next;
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' if expect == Expect::Value => {
                stack.push(b'{');
                expect = Expect::FirstKey;
            }
            b'[' if expect == Expect::Value => {
                stack.push(b'[');
                expect = Expect::Value;
            }
            b'}' if matches!(expect, Expect::FirstKey | Expect::Next)
                && stack.last() == Some(&b'{') =>
            {
                stack.pop();
                expect = Expect::Next;
            }
            b']' if matches!(expect, Expect::Value | Expect::Next)
                && stack.last() == Some(&b'[') =>
            {
                stack.pop();
                expect = Expect::Next;
            }
            b'"' => match expect {
                Expect::FirstKey | Expect::Key => string = Some(true),
                Expect::Value => string = Some(false),
                _ => return None,
            },
            b':' if expect == Expect::Colon => expect = Expect::Value,
            b',' if expect == Expect::Next && !stack.is_empty() => {
                expect = if stack.last() == Some(&b'{') {
                    Expect::Key
                } else {
                    Expect::Value
                };
            }
            b if is_token_byte(b) && expect == Expect::Value => token.push(char::from(b)),
            b if is_token_byte(b) && !token.is_empty() => token.push(char::from(b)),
            _ => return None,
        }
        closed = stack.is_empty() && expect == Expect::Next;
    }
    if closed {
        return Some(String::new());
    }
    let mut suffix = String::new();
    if let Some(is_key) = string {
        match escape {
            1 => suffix.push('\\'),
            2..=5 => {
                // `\u` with n digits so far: pad with zeros, unless that
                // makes a surrogate (which JSON text may not hold alone).
                let digits = usize::from(escape - 2);
                let cut = &text[text.len() - digits..];
                let mut code = String::from(cut);
                code.push_str(&"0".repeat(4 - digits));
                let value = u32::from_str_radix(&code, 16).ok()?;
                if (0xD800..0xE000).contains(&value) {
                    return None;
                }
                suffix.push_str(&"0".repeat(4 - digits));
            }
            _ => {}
        }
        suffix.push('"');
        expect = if is_key { Expect::Colon } else { Expect::Next };
    } else if !token.is_empty() {
        suffix.push_str(finish_token(&token)?);
        expect = Expect::Next;
    }
    match expect {
        Expect::Colon => suffix.push_str(":null"),
        Expect::Key => suffix.push_str("\"\":null"),
        Expect::Value if stack.last() == Some(&b'{') => suffix.push_str("null"),
        Expect::Value if stack.last() == Some(&b'[') && !text.ends_with('[') => {
            suffix.push_str("null");
        }
        _ => {}
    }
    for open in stack.iter().rev() {
        suffix.push(if *open == b'{' { '}' } else { ']' });
    }
    Some(suffix)
}

/// The suffix that completes the argument text of a tool call the provider
/// cut off, or `None` when it needs none (blank text means `{}`, and text
/// that already parses is whole) or has none (it is not the start of a
/// JSON object: the call's end then fails as usual). Every projector's
/// `length` path goes through here.
pub(crate) fn cut_completion(args: &str) -> Option<String> {
    if crate::json::is_json_blank(args) || crate::json::parse_arguments(args).is_ok() {
        return None;
    }
    completion(args).filter(|suffix| !suffix.is_empty())
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

fn token_complete(token: &str) -> bool {
    matches!(token, "true" | "false" | "null") || serde_json::from_str::<f64>(token).is_ok()
}

/// What finishes a cut scalar token, or `None` when it cannot start one.
fn finish_token(token: &str) -> Option<&'static str> {
    for literal in ["true", "false", "null"] {
        if let Some(rest) = literal.strip_prefix(token) {
            return Some(rest);
        }
    }
    if token_complete(token) {
        return Some("");
    }
    let mut padded = String::from(token);
    padded.push('0');
    token_complete(&padded).then_some("0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn complete(prefix: &str) -> Option<Value> {
        let suffix = completion(prefix)?;
        let mut text = String::from(prefix);
        text.push_str(&suffix);
        Some(serde_json::from_str(&text).expect("the completion parses"))
    }

    #[test]
    fn every_prefix_of_an_object_completes_to_an_object() {
        let whole =
            r#"{"city": "Pa\"ri\u00e9s", "n": [1, -2.5e+3, true, null, {"x": false}], "ok": {}}"#;
        for cut in 1..=whole.len() {
            if !whole.is_char_boundary(cut) {
                continue;
            }
            let value = complete(&whole[..cut]).unwrap_or_else(|| panic!("{}", &whole[..cut]));
            assert!(value.is_object(), "{}", &whole[..cut]);
        }
        assert_eq!(complete(whole), serde_json::from_str(whole).ok());
    }

    #[test]
    fn the_completion_keeps_what_arrived() {
        assert_eq!(complete(r#"{"city":"Par"#).unwrap()["city"], "Par");
        assert_eq!(complete(r#"{"a":1,"b":"#).unwrap()["b"], Value::Null);
        assert_eq!(complete(r#"{"a":[1,tr"#).unwrap()["a"][1], true);
        assert_eq!(complete(r#"{"a":1,"#).unwrap()[""], Value::Null);
        assert_eq!(complete(r#"{"a":"x\"#).unwrap()["a"], "x\\");
    }

    #[test]
    fn what_is_not_an_object_prefix_has_no_completion() {
        for text in [
            "",
            "[1",
            "\"a",
            "{\"a\" 1",
            "{}x",
            "{\"a\":1}}",
            "{\"a\":tx",
            "{\"a\":\"\\ud8",
        ] {
            assert_eq!(completion(text), None, "{text}");
        }
    }
}
