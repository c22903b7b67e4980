//! Reading Pi session logs and message arrays, item by item, with line
//! numbers.
//!
//! Two input forms are accepted:
//!
//! - **JSON Lines** (streamed line by line): Pi session entries, where an
//!   entry with `"type": "message"` carries a message under `message` and
//!   every other entry is metadata. A line that is an object with a `role`
//!   and no `type` is taken as a bare message, so the output of
//!   `normalize` on a message array can be validated again. Blank lines are
//!   skipped.
//! - **A JSON array of messages**, detected by `[` as the first non-space
//!   byte. The array is read whole; each element is reported with the line
//!   it starts on.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use agentstream::message::DecodeError;
use agentstream_serve::LineCursor;
use agentstream_wire::surrogates::replace_lone_surrogates;

/// The longest line a JSON Lines input may have: 64 MiB, room for a
/// message with several large base64 images. A longer line is refused
/// (`FILE:LINE: error: …`) instead of read into memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest input read whole (a JSON array of messages, a script, a
/// list of contexts): 256 MiB.
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 << 20;

/// What [`read_line_bounded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The end of the input: nothing was read.
    End,
    /// A line (with its `\n`, unless it is the last one) is in the buffer.
    Line,
    /// The line is longer than the limit; the buffer holds its first bytes.
    TooLong,
}

/// Reads one line into `buf` (cleared first), at most `max` bytes plus
/// the line end, so an endless line (`/dev/zero`) costs `max` bytes.
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineRead> {
    buf.clear();
    let cap = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    let read = reader.by_ref().take(cap).read_until(b'\n', buf)?;
    Ok(match read {
        0 => LineRead::End,
        _ if buf.last() == Some(&b'\n') || buf.len() <= max => LineRead::Line,
        _ => LineRead::TooLong,
    })
}

/// Reads a whole file of at most `max` bytes.
pub fn read_whole_file(path: &Path, max: u64) -> Result<String, String> {
    let file = File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("the file is larger than {} MiB", max >> 20));
    }
    String::from_utf8(bytes).map_err(|_| "the file is not valid UTF-8".to_string())
}
use serde_json::value::RawValue;
use serde_json::Value;

/// A fatal problem with an input file, at a line. Reading stops there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The 1-based line; 1 for problems with the file as a whole.
    pub line: usize,
    /// The JSON path of the offending value, where one applies.
    pub path: Option<String>,
    /// What went wrong, without the location.
    pub text: String,
}

impl InputError {
    pub fn new(line: usize, text: impl Into<String>) -> Self {
        InputError {
            line,
            path: None,
            text: text.into(),
        }
    }

    /// An error from decoding a message found at `base` (a JSON path).
    pub fn decode(line: usize, base: &str, err: &DecodeError) -> Self {
        let path = join_path(base, &err.path());
        InputError {
            line,
            text: format!("{path}: {}", err.reason()),
            path: Some(path),
        }
    }

    fn json(line: usize, err: &serde_json::Error) -> Self {
        InputError::new(line, format!("invalid JSON: {}", json_error_text(err)))
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: error: {}", self.line, self.text)
    }
}

/// serde_json's message with its own location replaced by a column only,
/// since every JSON Lines line is parsed on its own.
fn json_error_text(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match full.strip_suffix(&suffix) {
        Some(message) => format!("{message} (column {})", err.column()),
        None => full,
    }
}

/// Appends a path relative to a message (`$.content[0]`) to the path of the
/// message in its file (`$.message`).
pub fn join_path(base: &str, relative: &str) -> String {
    format!("{base}{}", relative.strip_prefix('$').unwrap_or(relative))
}

/// Where the message of an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A session entry with the message under `message`.
    Entry,
    /// The item is a message itself.
    Bare,
    /// Session metadata: no message.
    Metadata,
}

/// One JSON value of the input.
#[derive(Debug)]
pub struct Item {
    /// The 1-based line the value starts on.
    pub line: usize,
    /// The whole value (the entry, the message, or the metadata).
    pub value: Value,
    /// Where the message is.
    pub shape: Shape,
    /// The JSON path of the value in its file: `$` for a JSON Lines line,
    /// `$[3]` for an array element.
    pub root: String,
    /// The JSON paths (in the file) of the strings that held a lone UTF-16
    /// surrogate, now U+FFFD. JavaScript writes such halves; they are
    /// reported, not fatal.
    pub lone_surrogates: Vec<String>,
}

impl Item {
    /// The message value, unless this is metadata.
    pub fn message(&self) -> Option<&Value> {
        match self.shape {
            Shape::Entry => self.value.get("message"),
            Shape::Bare => Some(&self.value),
            Shape::Metadata => None,
        }
    }

    /// The JSON path of the message, for error messages.
    pub fn message_path(&self) -> String {
        match self.shape {
            Shape::Entry => format!("{}.message", self.root),
            _ => self.root.clone(),
        }
    }

    fn classify(line: usize, root: String, value: Value) -> Result<Item, InputError> {
        let Value::Object(map) = &value else {
            let kind = match value {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(InputError {
                line,
                text: format!(
                    "{root}: expected an object (a session entry or a message), found {kind}"
                ),
                path: Some(root),
            });
        };
        let shape = match map.get("type") {
            Some(Value::String(t)) if t == "message" => {
                if !map.contains_key("message") {
                    return Err(InputError {
                        line,
                        text: format!("{root}: message entry without a `message` field"),
                        path: Some(root),
                    });
                }
                Shape::Entry
            }
            None if map.contains_key("role") => Shape::Bare,
            _ => Shape::Metadata,
        };
        Ok(Item {
            line,
            value,
            shape,
            root,
            lone_surrogates: Vec::new(),
        })
    }
}

/// Reads the items of one file in order. After the first error the
/// iterator ends.
pub struct Items {
    source: Source,
    done: bool,
}

enum Source {
    Lines {
        reader: Box<dyn BufRead>,
        line: usize,
        buf: Vec<u8>,
    },
    Array(std::vec::IntoIter<Result<Item, InputError>>),
}

impl Items {
    /// Opens a file and detects its form.
    pub fn open(path: &Path) -> Result<Items, InputError> {
        let file =
            File::open(path).map_err(|e| InputError::new(1, format!("cannot open file: {e}")))?;
        Items::from_reader(Box::new(BufReader::new(file)))
    }

    /// Reads from any buffered reader; see the module docs for the forms.
    pub fn from_reader(mut reader: Box<dyn BufRead>) -> Result<Items, InputError> {
        let (first, consumed_lines) = first_non_space(&mut reader)?;
        let source = if first == Some(b'[') {
            let mut bytes = Vec::new();
            reader
                .take(MAX_WHOLE_FILE_BYTES.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| {
                    InputError::new(consumed_lines + 1, format!("cannot read file: {e}"))
                })?;
            if bytes.len() as u64 > MAX_WHOLE_FILE_BYTES {
                return Err(InputError::new(
                    consumed_lines + 1,
                    format!(
                        "the JSON array is larger than {} MiB",
                        MAX_WHOLE_FILE_BYTES >> 20
                    ),
                ));
            }
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::new(consumed_lines + 1, "the file is not valid UTF-8"))?;
            Source::Array(array_items(&text, consumed_lines).into_iter())
        } else {
            Source::Lines {
                reader,
                line: consumed_lines,
                buf: Vec::new(),
            }
        };
        Ok(Items {
            source,
            done: false,
        })
    }
}

/// Peeks at the first non-whitespace byte. Whitespace-only buffers are
/// consumed on the way; returns the byte and how many newlines were consumed.
fn first_non_space(reader: &mut Box<dyn BufRead>) -> Result<(Option<u8>, usize), InputError> {
    let mut consumed_lines = 0;
    loop {
        let buf = reader
            .fill_buf()
            .map_err(|e| InputError::new(consumed_lines + 1, format!("cannot read file: {e}")))?;
        if buf.is_empty() {
            return Ok((None, consumed_lines));
        }
        if let Some(&b) = buf.iter().find(|b| !b.is_ascii_whitespace()) {
            return Ok((Some(b), consumed_lines));
        }
        let (len, newlines) = (buf.len(), buf.iter().filter(|&&b| b == b'\n').count());
        consumed_lines += newlines;
        reader.consume(len);
    }
}

/// Parses a whole JSON array and finds the line each element starts on.
/// `skipped_lines` is the number of lines consumed before `text`.
///
/// The array is split into its elements' text at once; each element is
/// parsed into a [`Value`] only when the iterator reaches it, so a caller
/// that converts and drops each value holds one element's tree at a time,
/// not the whole array's.
pub fn array_elements(
    text: &str,
    skipped_lines: usize,
) -> Result<impl Iterator<Item = Result<(usize, Value), InputError>> + '_, InputError> {
    let elements: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| InputError::json(skipped_lines + e.line().max(1), &e))?;
    let mut lines = LineCursor::new(text, skipped_lines + 1);
    Ok(elements.into_iter().map(move |raw| {
        let raw = raw.get();
        let line = lines.line_of(raw);
        let (value, _) = parse_tolerant(raw).map_err(|e| InputError::json(line, &e))?;
        Ok((line, value))
    }))
}

/// Parses `text`, first with lone UTF-16 surrogate escapes replaced by
/// U+FFFD when it has any; says whether it had.
fn parse_tolerant(text: &str) -> Result<(Value, bool), serde_json::Error> {
    match replace_lone_surrogates(text) {
        Some(fixed) => serde_json::from_str(&fixed).map(|value| (value, true)),
        None => serde_json::from_str(text).map(|value| (value, false)),
    }
}

/// The paths under `root` of the strings (values or keys) of `value` that
/// hold U+FFFD: where lone surrogates were replaced.
pub fn replacement_paths(value: &Value, root: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(value, root.to_string())];
    while let Some((value, path)) = stack.pop() {
        match value {
            Value::String(s) if s.contains('\u{fffd}') => found.push(path),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, format!("{path}[{i}]")));
                }
            }
            Value::Object(map) => {
                for (key, item) in map.iter().rev() {
                    let child = format!("{path}.{key}");
                    if key.contains('\u{fffd}') {
                        found.push(child.clone());
                    }
                    stack.push((item, child));
                }
            }
            _ => {}
        }
    }
    found
}

/// The items of a whole JSON array, each classified.
fn array_items(text: &str, skipped_lines: usize) -> Vec<Result<Item, InputError>> {
    // Every element is parsed before any is classified: a JSON error
    // anywhere is the only item.
    let elements = match array_elements(text, skipped_lines).and_then(Iterator::collect) {
        Ok::<Vec<_>, _>(elements) => elements,
        Err(e) => return vec![Err(e)],
    };
    let mut items = Vec::with_capacity(elements.len());
    for (index, (line, value)) in elements.into_iter().enumerate() {
        let root = format!("$[{index}]");
        let item = Item::classify(line, root.clone(), value).map(|mut item| {
            item.lone_surrogates = replacement_paths(&item.value, &root);
            item
        });
        let failed = item.is_err();
        items.push(item);
        if failed {
            break;
        }
    }
    items
}

impl Iterator for Items {
    type Item = Result<Item, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = match &mut self.source {
            Source::Array(items) => items.next(),
            Source::Lines { reader, line, buf } => next_line_item(reader, line, buf),
        };
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}

fn next_line_item(
    reader: &mut Box<dyn BufRead>,
    line: &mut usize,
    buf: &mut Vec<u8>,
) -> Option<Result<Item, InputError>> {
    loop {
        *line += 1;
        match read_line_bounded(reader, buf, MAX_LINE_BYTES) {
            Ok(LineRead::End) => return None,
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong) => {
                let text = format!("the line is longer than {} MiB", MAX_LINE_BYTES >> 20);
                return Some(Err(InputError::new(*line, text)));
            }
            Err(e) => {
                return Some(Err(InputError::new(
                    *line,
                    format!("cannot read file: {e}"),
                )))
            }
        }
        let Ok(text) = std::str::from_utf8(buf) else {
            return Some(Err(InputError::new(*line, "the line is not valid UTF-8")));
        };
        if text.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
            continue;
        }
        return Some(
            // Without the line end, a line cut short reads as "EOF while
            // parsing", not as a control character inside a string.
            parse_tolerant(text.trim_end_matches(['\n', '\r']))
                .map_err(|e| InputError::json(*line, &e))
                .and_then(|(value, replaced)| {
                    let mut item = Item::classify(*line, "$".into(), value)?;
                    if replaced {
                        item.lone_surrogates = replacement_paths(&item.value, "$");
                    }
                    Ok(item)
                }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &'static str) -> Vec<Result<(usize, Shape, String), InputError>> {
        Items::from_reader(Box::new(text.as_bytes()))
            .unwrap()
            .map(|r| r.map(|i| (i.line, i.shape, i.message_path())))
            .collect()
    }

    #[test]
    fn jsonl_lines_are_numbered_and_classified() {
        let got = items("\n{\"type\":\"session\"}\n\n{\"type\":\"message\",\"message\":{}}\n{\"role\":\"user\"}\n");
        assert_eq!(
            got,
            [
                Ok((2, Shape::Metadata, "$".into())),
                Ok((4, Shape::Entry, "$.message".into())),
                Ok((5, Shape::Bare, "$".into())),
            ]
        );
    }

    #[test]
    fn array_elements_get_their_start_line() {
        let got = items("\n [\n  {\"role\":\"user\"},\n\n  {\"role\":\n\"x\"}, {\"type\":\"message\",\"message\":1}]\n");
        assert_eq!(
            got,
            [
                Ok((3, Shape::Bare, "$[0]".into())),
                Ok((5, Shape::Bare, "$[1]".into())),
                Ok((6, Shape::Entry, "$[2].message".into())),
            ]
        );
    }

    #[test]
    fn errors_stop_the_file() {
        let got = items("{\"type\":\"x\"}\n{\"type\":\"message\",\"mess\n{\"type\":\"x\"}\n");
        assert_eq!(got.len(), 2);
        let err = got[1].clone().unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.text
                .starts_with("invalid JSON: EOF while parsing a string (column"),
            "{}",
            err.text
        );
        let got = items("[1]");
        assert_eq!(
            got[0].clone().unwrap_err().to_string(),
            "1: error: $[0]: expected an object (a session entry or a message), found a number"
        );
    }
}
