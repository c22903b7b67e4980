//! Rules: replies picked by what a request says, not by when it comes.
//!
//! A script given as an object, `{"rules": [RULE, …], "turns": [ELEMENT,
//! …]}`, tries its rules in order before its ordered turns (the turns are
//! the list form's elements, played as that form plays them). A rule:
//!
//! ```json
//! {"name": "weather", "match": {"lastUserText": "weather", "tool": {"regex": "^get_"}},
//!  "reply": ["Let me check.", "It is 18C."], "times": 2}
//! ```
//!
//! - **`match`** (every key optional; all must hold; none: every request):
//!   - `model`: the request's model (the body's `model`, Gemini's from
//!     its path);
//!   - `lastUserText`: the text of the conversation's last user message
//!     (its text blocks, joined by `\n`);
//!   - `system`: the system prompt;
//!   - `tool`: the name of a tool the request offers (any one of them);
//!   - `toolResult`: the text of the conversation's latest tool result;
//!   - `turn`: how many assistant messages the conversation already has;
//!   - `hasToolResult`: whether the conversation holds a tool result;
//!   - `nth`: this is the n-th request (1-based) that reached the rule
//!     (no earlier rule answered it) with its other keys holding.
//!
//!   A text key (the first five) takes a string, held when the text
//!   contains it, or `{"regex": PATTERN}` (the `regex` crate's syntax,
//!   searched anywhere in the text unless anchored; compiled within
//!   [`MAX_REGEX_BYTES`], so no pattern can take unbounded memory or
//!   time). A text the request lacks (no system prompt, no tool result,
//!   no user message) holds for no pattern.
//! - **`reply`**: a turn or a list of turns, each any element of the list
//!   form but `byRequest` (a message, a text, a failure, `httpError`,
//!   `streamError`, `cutAfterEvents`). A list is played in order, one per
//!   answer; **its last turn then repeats** (use `times` to stop there).
//! - **`times`** (optional, default unlimited): how many requests the rule
//!   answers; then it is passed over as if it did not match.
//! - **`name`** (optional): named in `--strict`'s errors and in
//!   `GET /v1/unused`.
//!
//! Any other key, in a rule or in its `match`, is an error when the
//! script loads, naming the rule's index and the key.
//!
//! A rule's state is two counters, whatever the number of calls it
//! answers. Its turns are held compactly until they answer a second time
//! (see `src/held.rs`), then shared by every call they answer (a
//! turn whose tool calls have no `id` is copied to give them one per
//! call, as the ordered turns are).

use std::sync::Arc;

use agentstream::message::{ContentBlock, DecodeError};
use agentstream::model::{ScriptedReply, ScriptedTurn};
use serde_json::{Map, Value};

use crate::held::Held;
pub(crate) use crate::matching::Facts;
/// The size limit of a `{"regex": …}` pattern, kept where the format is
/// described (it lives with the patterns, in `matching.rs`).
pub use crate::matching::MAX_REGEX_BYTES;
use crate::matching::{count, quoted, Matcher};
use crate::script::{ServeTurn, Step};

/// One reply of a rule: the model's turn (none for an HTTP error), held
/// compactly until it answers again (see [`Held`]), and the server's step.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) turn: Option<Held>,
    /// The step when it is not [`Step::Model`] (a `Step` is about 190
    /// bytes; most replies are plain turns).
    pub(crate) step: Option<Box<Step>>,
    /// Its timing and quirks, when it has any (most replies have none).
    manner: Option<Box<crate::manner::Manner>>,
}

impl Reply {
    /// Its timing and quirks.
    pub(crate) fn manner(&self) -> crate::manner::Manner {
        self.manner.as_deref().cloned().unwrap_or_default()
    }
}

/// One rule of a script (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Rule {
    name: Option<Box<str>>,
    matcher: Matcher,
    replies: Box<[Reply]>,
    times: Option<usize>,
}

impl Rule {
    /// Parses one rule (see the [module documentation](self)).
    ///
    /// ```
    /// use agentstream_serve::Rule;
    /// use serde_json::json;
    ///
    /// let rule = Rule::from_value(json!({"name": "greet", "match": {"lastUserText": "hi"},
    ///     "reply": "hello"})).unwrap();
    /// assert_eq!(rule.name(), Some("greet"));
    /// let error = Rule::from_value(json!({"match": {"lastUser": "hi"}, "reply": "x"})).unwrap_err();
    /// assert_eq!(error.path(), "$.match.lastUser");
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] naming the JSON path of the bad value: an unknown
    /// key, a value of the wrong type, a regular expression that does not
    /// compile or is too large, a reply that is not a turn.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(mut object) = value else {
            return Err(DecodeError::new(format!(
                "expected a rule {{\"match\", \"reply\", \"times\"?, \"name\"?}}, found {value}"
            )));
        };
        let name = match object.remove("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.into()),
            Some(other) => {
                return Err(
                    DecodeError::new(format!("expected a string, found {other}"))
                        .within_key("name"),
                )
            }
        };
        let matcher = match object.remove("match") {
            None => Matcher::default(),
            Some(value) => Matcher::parse(value).map_err(|e| e.within_key("match"))?,
        };
        let reply = object
            .remove("reply")
            .ok_or_else(|| DecodeError::new("missing field \"reply\""))?;
        let replies = replies(reply).map_err(|e| e.within_key("reply"))?.into();
        let times = match object.remove("times") {
            None | Some(Value::Null) => None,
            Some(value) => Some(count(value).map_err(|e| e.within_key("times"))?),
        };
        if let Some(key) = object.keys().next() {
            return Err(DecodeError::new(format!(
                "unknown rule key {} (known: match, reply, times, name)",
                quoted(key)
            ))
            .within_key(key));
        }
        Ok(Rule {
            name,
            matcher,
            replies,
            times,
        })
    }

    /// The rule's `name`, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The model its first message reply names (for the server's model
    /// name).
    pub(crate) fn model(&self) -> Option<String> {
        self.replies
            .iter()
            .find_map(|reply| reply.turn.as_ref()?.model())
    }

    /// `rules[i] ("name")`.
    fn label(&self, index: usize) -> String {
        match &self.name {
            Some(name) => format!("rules[{index}] ({})", quoted(name)),
            None => format!("rules[{index}]"),
        }
    }
}

fn replies(value: Value) -> Result<Vec<Reply>, DecodeError> {
    let items = match value {
        Value::Array(items) if items.is_empty() => {
            return Err(DecodeError::new("expected at least one turn"))
        }
        Value::Array(items) => items,
        one => return reply(one).map(|r| vec![r]),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| reply(item).map_err(|e| e.within_index(i)))
        .collect()
}

fn reply(value: Value) -> Result<Reply, DecodeError> {
    if value.get("byRequest").is_some() {
        return Err(DecodeError::new(
            "a rule's reply cannot be byRequest: give each alternative its own rule",
        ));
    }
    let element = ServeTurn::from_value(value)?;
    Ok(Reply {
        turn: element.turn.map(Held::new),
        step: match element.step {
            Step::Model => None,
            step => Some(Box::new(step)),
        },
        manner: (!element.manner.is_plain()).then(|| Box::new(element.manner)),
    })
}

/// What the server keeps of a rule between calls: two counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counts {
    /// Requests that reached the rule with its keys (but `nth`) holding.
    seen: usize,
    /// Requests it answered.
    pub(crate) answered: usize,
}

/// The rules of a server, in order.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    pub(crate) fn new(rules: Vec<Rule>) -> Self {
        Rules { rules }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// How many rules there are.
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// These rules, then `more` (`POST /v1/script?append=1`).
    pub(crate) fn appended(&self, more: Vec<Rule>) -> Self {
        let mut rules = self.rules.clone();
        rules.extend(more);
        Rules { rules }
    }

    /// Which rules' keys (but `nth`) hold for `facts`: worked out before
    /// the server's lock is taken.
    pub(crate) fn holding(&self, facts: &Facts<'_>) -> Vec<bool> {
        self.rules
            .iter()
            .map(|rule| rule.matcher.holds(facts))
            .collect()
    }

    /// The first rule that answers, given which rules' keys hold; its
    /// counters moved on. Under the server's lock.
    pub(crate) fn pick(&self, holding: &[bool], counts: &mut [Counts]) -> Option<&Reply> {
        for ((rule, &holds), count) in self.rules.iter().zip(holding).zip(counts) {
            if !holds || rule.times.is_some_and(|times| count.answered >= times) {
                continue;
            }
            count.seen += 1;
            if rule.matcher.nth().is_some_and(|n| n != count.seen) {
                continue;
            }
            let reply = rule.replies.get(count.answered).or(rule.replies.last());
            count.answered += 1;
            return reply;
        }
        None
    }

    /// Why no rule answered: the nearest rule (the most keys holding, the
    /// first of equals) and its first difference.
    pub(crate) fn nearest(&self, facts: &Facts<'_>, counts: &[Counts]) -> Option<String> {
        let (index, rule) = self
            .rules
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|(_, rule)| rule.matcher.holding(facts))?;
        let count = counts.get(index).copied().unwrap_or_default();
        let why = match rule.matcher.difference(facts) {
            Some(difference) => difference,
            None => match (rule.times, rule.matcher.nth()) {
                (Some(times), _) if count.answered >= times => {
                    format!("it already answered its {times} times")
                }
                (_, Some(n)) => format!(
                    "nth: this request was its match number {}, not {n}",
                    count.seen
                ),
                _ => "it matches, but was not reached".to_owned(),
            },
        };
        Some(format!("{}: {why}", rule.label(index)))
    }

    /// The rules that never answered, as `{"index", "name"}`.
    pub(crate) fn unused(&self, counts: &[Counts]) -> Vec<Value> {
        self.rules
            .iter()
            .enumerate()
            .filter(|(i, _)| counts.get(*i).is_none_or(|c| c.answered == 0))
            .map(|(index, rule)| {
                let mut entry = Map::new();
                entry.insert("index".into(), index.into());
                entry.insert(
                    "name".into(),
                    rule.name.as_deref().map_or(Value::Null, Value::from),
                );
                Value::Object(entry)
            })
            .collect()
    }
}

/// `held`'s turn for call `call`, with every tool call that has no id
/// given `call_<call>_<block>` (as the ordered turns get theirs); the turn
/// itself when every call has one.
pub(crate) fn with_call_ids(held: &Held, call: usize) -> Arc<ScriptedTurn> {
    let turn = held.turn();
    let ScriptedReply::Message(message) = turn.reply() else {
        return turn;
    };
    let missing =
        |block: &ContentBlock| matches!(block, ContentBlock::ToolCall(c) if c.id.is_empty());
    if !message.content.iter().any(missing) {
        return turn;
    }
    let mut copy = ScriptedTurn::clone(&turn);
    copy.fill_call_ids(call);
    Arc::new(copy)
}
