//! Real stream quirks, on purpose: a turn (or a rule's reply) may ask for
//! `"quirks": [NAME, …]`, and its stream is then written as some real
//! provider wrote it, each quirk a rewrite of the encoded stream taken from
//! a recorded real stream that shows it. Client code must survive these;
//! each is tested to decode, through this workspace's own projector, to the
//! same Pi message as the turn without it (or the difference noted).
//!
//! | quirk | API | what the stream does | source |
//! |---|---|---|---|
//! | `emptyDeltas` | Chat Completions | every chunk with a delta is preceded by a chunk whose delta is `{"content": ""}` | `/work/shared/fixtures/openai-sse/openai-text.sse` (its opening chunk's `content: ""`) and `crates/agentstream-wire/tests/fixtures/openai/reasoning-then-text.sse` (`content: ""` beside each reasoning delta) |
//! | `pingFlood` | Anthropic | a `ping` event before every event | `/work/shared/fixtures/anthropic-sse/anthropic-text-ping.sse` (a `ping` between events) |
//! | `splitUtf8` | every API | the first multi-byte character of the stream is split across two network writes (two body frames) | a transport property, not a payload one: every recorded stream above with non-ASCII text can arrive so, as TCP segments fall |
//!
//! A quirk named in a script that is not in this table is an error when
//! the script loads. A quirk valid for some APIs, asked of a request in
//! another, answers that request with HTTP 400 in the provider's error
//! shape naming the quirk and its API.

use agentstream::message::DecodeError;
use agentstream_wire::Api;
use bytes::Bytes;
use serde_json::Value;

/// One quirk of the catalogue (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quirk {
    EmptyDeltas,
    PingFlood,
    SplitUtf8,
}

impl Quirk {
    const ALL: [Quirk; 3] = [Quirk::EmptyDeltas, Quirk::PingFlood, Quirk::SplitUtf8];

    /// Its name in a script.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Quirk::EmptyDeltas => "emptyDeltas",
            Quirk::PingFlood => "pingFlood",
            Quirk::SplitUtf8 => "splitUtf8",
        }
    }

    /// The API it belongs to; `None`: every API.
    fn api(self) -> Option<Api> {
        match self {
            Quirk::EmptyDeltas => Some(Api::OpenAi),
            Quirk::PingFlood => Some(Api::Anthropic),
            Quirk::SplitUtf8 => None,
        }
    }

    /// Rewrites one SSE event (its text without the closing blank line)
    /// into the events written in its place.
    fn rewrite(self, event: String, out: &mut Vec<String>) {
        match self {
            Quirk::EmptyDeltas => {
                if let Some(empty) = with_data(&event, |payload| {
                    let delta = payload.pointer_mut("/choices/0/delta")?;
                    let filled = delta.as_object().is_some_and(|d| !d.is_empty());
                    filled.then(|| *delta = serde_json::json!({"content": ""}))
                }) {
                    out.push(empty);
                }
                out.push(event);
            }
            Quirk::PingFlood => {
                out.push("event: ping\ndata: {\"type\": \"ping\"}".to_owned());
                out.push(event);
            }
            Quirk::SplitUtf8 => out.push(event),
        }
    }
}

/// `event` with its `data:` payload changed by `change`; `None` when the
/// payload is not JSON or `change` changes nothing.
fn with_data(event: &str, change: impl FnOnce(&mut Value) -> Option<()>) -> Option<String> {
    let at = event.rfind("data: ")?;
    let mut payload: Value = serde_json::from_str(&event[at + 6..]).ok()?;
    change(&mut payload)?;
    Some(format!("{}data: {payload}", &event[..at]))
}

/// The quirks a turn asks for, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Quirks(Vec<Quirk>);

impl Quirks {
    /// Parses `[NAME, …]`.
    ///
    /// # Errors
    /// A [`DecodeError`] at the index of an unknown name (listing the
    /// catalogue), or of a value that is not a string.
    pub(crate) fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Array(items) = value else {
            return Err(DecodeError::new(format!(
                "expected an array of quirk names, found {value}"
            )));
        };
        let mut quirks = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let quirk = item
                .as_str()
                .and_then(|name| Quirk::ALL.into_iter().find(|q| q.name() == name))
                .ok_or_else(|| {
                    let known: Vec<&str> = Quirk::ALL.iter().map(|q| q.name()).collect();
                    DecodeError::new(format!("unknown quirk {item}; known: {}", known.join(", ")))
                        .within_index(i)
                })?;
            if !quirks.contains(&quirk) {
                quirks.push(quirk);
            }
        }
        Ok(Self(quirks))
    }

    /// No quirks.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first quirk that `api` does not have, by name with its API.
    pub(crate) fn foreign(&self, api: Api) -> Option<String> {
        self.0.iter().find_map(|quirk| match quirk.api() {
            Some(own) if own != api => Some(format!(
                "the quirk {} is a quirk of {} streams, not of {}",
                quirk.name(),
                own.pi_api(),
                api.pi_api()
            )),
            _ => None,
        })
    }

    /// Whether the stream's first multi-byte character is split in two writes.
    pub(crate) fn splits_utf8(&self) -> bool {
        self.0.contains(&Quirk::SplitUtf8)
    }

    /// Rewrites one encoded SSE event (without its closing blank line)
    /// through every quirk, in order, into `out`.
    pub(crate) fn rewrite(&self, event: String, out: &mut Vec<String>) {
        let mut events = vec![event];
        for quirk in &self.0 {
            let mut next = Vec::with_capacity(events.len() + 1);
            for event in events {
                quirk.rewrite(event, &mut next);
            }
            events = next;
        }
        out.extend(events);
    }
}

/// Where `bytes` is cut to split its first multi-byte character in two:
/// after that character's first byte; `None` when all of it is ASCII.
pub(crate) fn utf8_split(bytes: &Bytes) -> Option<usize> {
    bytes.iter().position(|b| *b >= 0xC0).map(|at| at + 1)
}
