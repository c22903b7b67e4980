//! What a rule's `match` reads of a request and how its keys hold: the
//! request's facts, gathered once per call, and the patterns (a substring
//! or a size-limited regular expression). See [`crate::rules`] for the
//! format.

use std::borrow::Cow;

use agentstream::message::{ContentBlock, Context, DecodeError, Message, UserContent};
use memchr::arch::all::twoway::Finder as TwoWay;
use regex::{Regex, RegexBuilder};
use serde_json::Value;

use agentstream_wire::server::DecodedRequest;

/// The most memory one `{"regex": …}` pattern may compile to (its
/// program, and separately its lazy DFA's cache): 256 KiB. A pattern past
/// it is an error when the script loads.
pub const MAX_REGEX_BYTES: usize = 256 << 10;

/// The longest `{"regex": …}` pattern accepted, in bytes.
const MAX_PATTERN_LEN: usize = 4 << 10;

/// The keys a rule's `match` knows, in the order their differences are
/// reported.
const MATCH_KEYS: [&str; 8] = [
    "model",
    "lastUserText",
    "system",
    "tool",
    "toolResult",
    "turn",
    "hasToolResult",
    "nth",
];

/// A text key's value: a substring or a regular expression.
#[derive(Debug, Clone)]
pub(crate) enum Pattern {
    /// A substring, with its Two-Way factorization made once when the
    /// script loads (`str::contains` makes it on every search: on the
    /// short texts rules read, most of the search's instructions).
    Contains {
        part: Box<str>,
        finder: TwoWay,
    },
    Regex(Regex),
}

impl Pattern {
    fn holds(&self, text: &str) -> bool {
        match self {
            Pattern::Contains { part, finder } => {
                finder.find(text.as_bytes(), part.as_bytes()).is_some()
            }
            Pattern::Regex(regex) => regex.is_match(text),
        }
    }

    /// How a text that does not hold is told: `does not contain "…"`.
    fn describe(&self) -> String {
        match self {
            Pattern::Contains { part, .. } => format!("does not contain {}", quoted(part)),
            Pattern::Regex(regex) => format!("does not match /{}/", regex.as_str()),
        }
    }

    fn parse(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::String(part) => Ok(Pattern::Contains {
                finder: TwoWay::new(part.as_bytes()),
                part: part.into(),
            }),
            Value::Object(mut object) => {
                let Some(pattern) = object.remove("regex") else {
                    return Err(DecodeError::new(
                        "expected a string or {\"regex\": PATTERN}",
                    ));
                };
                if let Some(key) = object.keys().next() {
                    return Err(DecodeError::new(format!(
                        "unknown key {} beside \"regex\"",
                        quoted(key)
                    ))
                    .within_key(key));
                }
                let Value::String(pattern) = pattern else {
                    return Err(DecodeError::new(format!(
                        "expected a pattern string, found {pattern}"
                    ))
                    .within_key("regex"));
                };
                compile(&pattern).map_err(|e| e.within_key("regex"))
            }
            other => Err(DecodeError::new(format!(
                "expected a string or {{\"regex\": PATTERN}}, found {other}"
            ))),
        }
    }
}

/// `pattern` compiled within the size limits.
fn compile(pattern: &str) -> Result<Pattern, DecodeError> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(DecodeError::new(format!(
            "the pattern is {} bytes long, past the limit of {MAX_PATTERN_LEN}",
            pattern.len()
        )));
    }
    RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_REGEX_BYTES)
        .build()
        .map(Pattern::Regex)
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => DecodeError::new(format!(
                "the pattern compiles to more than {limit} bytes (the limit); simplify it"
            )),
            other => DecodeError::new(format!("invalid regular expression: {other}")),
        })
}

/// What a rule's keys read of a request, gathered once per call.
pub(crate) struct Facts<'a> {
    model: &'a str,
    last_user_text: Option<Cow<'a, str>>,
    system: Option<&'a str>,
    tools: Vec<&'a str>,
    tool_result: Option<String>,
    turn: usize,
    has_tool_result: bool,
}

impl<'a> Facts<'a> {
    /// The facts of `request`: one pass over its messages.
    pub(crate) fn of(request: &'a DecodedRequest) -> Self {
        let context: &Context = &request.context;
        let mut turn = 0;
        let (mut last_user, mut last_result) = (None, None);
        for message in &context.messages {
            match message {
                Message::User(user) => last_user = Some(&user.content),
                Message::ToolResult(result) => last_result = Some(&result.content),
                Message::Assistant(_) => turn += 1,
                _ => {}
            }
        }
        let last_user_text = last_user.map(|content| match content {
            UserContent::Text(text) => Cow::Borrowed(text.as_str()),
            UserContent::Blocks(blocks) => Cow::Owned(texts(blocks)),
        });
        Facts {
            model: &request.model,
            last_user_text,
            system: context.system_prompt.as_deref(),
            tools: context
                .tools
                .iter()
                .flatten()
                .map(|tool| tool.name.as_str())
                .collect(),
            tool_result: last_result.map(|blocks| texts(blocks)),
            turn,
            has_tool_result: last_result.is_some(),
        }
    }
}

/// The text blocks of `blocks`, joined by `\n`.
fn texts(blocks: &[ContentBlock]) -> String {
    let mut joined = String::new();
    for block in blocks {
        if let ContentBlock::Text(text) = block {
            if !joined.is_empty() {
                joined.push('\n');
            }
            joined.push_str(&text.text);
        }
    }
    joined
}

/// A rule's `match`: the keys it gives, in [`MATCH_KEYS`] order (a rule
/// holds only those, most give one or two).
#[derive(Debug, Clone, Default)]
pub(crate) struct Matcher {
    keys: Box<[Key]>,
}

/// One key of a rule's `match`.
#[derive(Debug, Clone)]
enum Key {
    /// `model`, `lastUserText`, `system`, `tool` or `toolResult`.
    Text(Field, Pattern),
    Turn(usize),
    HasToolResult(bool),
    Nth(usize),
}

/// The text keys, in [`MATCH_KEYS`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    Model,
    LastUserText,
    System,
    Tool,
    ToolResult,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Model => "model",
            Field::LastUserText => "lastUserText",
            Field::System => "system",
            Field::Tool => "tool",
            Field::ToolResult => "toolResult",
        }
    }
}

impl Key {
    /// Where the key stands in [`MATCH_KEYS`].
    fn rank(&self) -> usize {
        match self {
            Key::Text(text, _) => *text as usize,
            Key::Turn(_) => 5,
            Key::HasToolResult(_) => 6,
            Key::Nth(_) => 7,
        }
    }

    /// How the key does not hold for `facts`, told as `key "request's
    /// value" does not contain "…"`; `None` when it holds (`nth` always
    /// does here).
    fn difference(&self, facts: &Facts<'_>) -> Option<String> {
        match self {
            Key::Text(Field::Tool, pattern) => {
                if facts.tools.iter().any(|name| pattern.holds(name)) {
                    return None;
                }
                let offered = if facts.tools.is_empty() {
                    "the request offers no tools".to_owned()
                } else {
                    let names: Vec<String> = facts.tools.iter().map(|n| quoted(n)).collect();
                    format!(
                        "no tool offered ({}) {}",
                        names.join(", "),
                        pattern.describe()
                    )
                };
                Some(format!("tool: {offered}"))
            }
            Key::Text(text, pattern) => {
                let key = text.name();
                match facts.text(*text) {
                    Some(value) if pattern.holds(value) => None,
                    Some(value) => Some(format!(
                        "{key} {} {}",
                        quoted(&shortened(value)),
                        pattern.describe()
                    )),
                    None => Some(format!("{key}: the request has none")),
                }
            }
            &Key::Turn(want) => (want != facts.turn).then(|| {
                format!(
                    "turn: the conversation has {} assistant messages, not {want}",
                    facts.turn
                )
            }),
            &Key::HasToolResult(want) => (want != facts.has_tool_result).then(|| {
                format!(
                    "hasToolResult: the conversation {} a tool result",
                    if facts.has_tool_result {
                        "has"
                    } else {
                        "has no"
                    }
                )
            }),
            Key::Nth(_) => None,
        }
    }

    /// Whether the key (not `nth`) holds for `facts`.
    fn holds(&self, facts: &Facts<'_>) -> bool {
        match self {
            Key::Text(Field::Tool, pattern) => facts.tools.iter().any(|n| pattern.holds(n)),
            Key::Text(text, pattern) => facts.text(*text).is_some_and(|v| pattern.holds(v)),
            &Key::Turn(want) => want == facts.turn,
            &Key::HasToolResult(want) => want == facts.has_tool_result,
            Key::Nth(_) => false,
        }
    }
}

impl Facts<'_> {
    /// The request's text that a text key (not `tool`) reads.
    fn text(&self, key: Field) -> Option<&str> {
        match key {
            Field::Model => Some(self.model),
            Field::LastUserText => self.last_user_text.as_deref(),
            Field::System => self.system,
            Field::ToolResult => self.tool_result.as_deref(),
            Field::Tool => None,
        }
    }
}

impl Matcher {
    pub(crate) fn parse(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(object) = value else {
            return Err(DecodeError::new(format!(
                "expected an object of match keys, found {value}"
            )));
        };
        let mut keys = Vec::with_capacity(object.len());
        for (key, value) in object {
            let within = |e: DecodeError| e.within_key(&key);
            let text = |text: Field, value: Value| {
                Ok::<_, DecodeError>(Key::Text(text, Pattern::parse(value).map_err(within)?))
            };
            keys.push(match key.as_str() {
                "model" => text(Field::Model, value)?,
                "lastUserText" => text(Field::LastUserText, value)?,
                "system" => text(Field::System, value)?,
                "tool" => text(Field::Tool, value)?,
                "toolResult" => text(Field::ToolResult, value)?,
                "turn" => Key::Turn(count(value).map_err(within)?),
                "nth" => {
                    let n = count(value).map_err(within)?;
                    if n == 0 {
                        return Err(within(DecodeError::new("nth counts from 1")));
                    }
                    Key::Nth(n)
                }
                "hasToolResult" => match value {
                    Value::Bool(b) => Key::HasToolResult(b),
                    other => {
                        return Err(within(DecodeError::new(format!(
                            "expected true or false, found {other}"
                        ))))
                    }
                },
                _ => {
                    return Err(within(DecodeError::new(format!(
                        "unknown match key {} (known: {})",
                        quoted(&key),
                        MATCH_KEYS.join(", ")
                    ))))
                }
            });
        }
        keys.sort_by_key(Key::rank);
        Ok(Matcher { keys: keys.into() })
    }

    /// The `nth` key, if given.
    pub(crate) fn nth(&self) -> Option<usize> {
        self.keys.iter().find_map(|key| match key {
            Key::Nth(n) => Some(*n),
            _ => None,
        })
    }

    /// The first key, but `nth`, that does not hold for `facts`, told as
    /// `key "request's value" does not contain "…"`; `None` when all do.
    pub(crate) fn difference(&self, facts: &Facts<'_>) -> Option<String> {
        self.keys.iter().find_map(|key| key.difference(facts))
    }

    /// Whether every key but `nth` holds for `facts`: what
    /// [`difference`](Self::difference) being `None` says, without
    /// writing a message for each key that does not hold.
    pub(crate) fn holds(&self, facts: &Facts<'_>) -> bool {
        self.keys
            .iter()
            .all(|key| matches!(key, Key::Nth(_)) || key.holds(facts))
    }

    /// How many keys (but `nth`) hold for `facts`, for the nearest rule.
    pub(crate) fn holding(&self, facts: &Facts<'_>) -> usize {
        self.keys.iter().filter(|key| key.holds(facts)).count()
    }
}

/// `text` as a JSON string.
pub(crate) fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `text`, cut to its first 80 characters (with `…`) for a message.
fn shortened(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(80) {
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
        None => Cow::Borrowed(text),
    }
}

/// A non-negative integer that fits a `usize` (a rule's `times` or
/// `turn`, a step's event count).
pub(crate) fn count(value: Value) -> Result<usize, DecodeError> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| DecodeError::new(format!("expected a count, found {value}")))
}

#[cfg(test)]
mod tests {
    use super::Pattern;
    use serde_json::Value;

    /// A substring pattern answers as `str::contains` does: empty,
    /// multi-byte, repeated and longer-than-the-text patterns included.
    #[test]
    fn a_substring_pattern_holds_where_str_contains_does() {
        let texts = ["", "a", "café au lait", "abababc", "weather in Paris?", "ü"];
        let parts = [
            "",
            "a",
            "é",
            "ababc",
            "abc",
            "Paris",
            "weather in Paris?!",
            "ü",
            "x",
        ];
        for part in parts {
            let pattern = Pattern::parse(Value::String(part.into())).unwrap();
            for text in texts {
                assert_eq!(
                    pattern.holds(text),
                    text.contains(part),
                    "{part:?} in {text:?}"
                );
            }
        }
    }
}
