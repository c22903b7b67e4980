//! `build_session_context`: what Pi sends to the model for a leaf.

use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::agent_message::AgentMessage;
use super::date::js_date_millis;
use super::entry::SessionEntry;
use super::tree::{SessionTree, TreeError};
use crate::message::Message;

/// Which entry a context is built for (Pi's `leafId` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf<'a> {
    /// `undefined`: the last entry in file order.
    Last,
    /// `null`: before the first entry; the context is empty.
    BeforeFirst,
    /// The entry with this id; like Pi, an id no entry has falls back to
    /// the last entry (check with [`SessionTree::index_of`] first to treat
    /// it as an error).
    Id(&'a str),
}

/// The model a context was last using: `{"provider", "modelId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// `provider`.
    pub provider: String,
    /// `modelId`.
    pub model_id: String,
}

/// What [`build_session_context`] returns: `{"messages", "thinkingLevel",
/// "model"}`, serialized as Pi's `SessionContext`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    /// The messages for the model, before [`convert_to_llm`](super::convert_to_llm).
    pub messages: Vec<AgentMessage>,
    /// The last thinking level on the path; `"off"` if none.
    pub thinking_level: String,
    /// The last model on the path (a `model_change` or an assistant
    /// message); `None` (`null`) if none.
    pub model: Option<ModelRef>,
}

impl Serialize for SessionContext {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("messages", &self.messages)?;
        map.serialize_entry("thinkingLevel", &self.thinking_level)?;
        match &self.model {
            Some(m) => {
                let mut obj = serde_json::Map::new();
                obj.insert("provider".into(), Value::String(m.provider.clone()));
                obj.insert("modelId".into(), Value::String(m.model_id.clone()));
                map.serialize_entry("model", &obj)?;
            }
            None => map.serialize_entry("model", &Value::Null)?,
        }
        map.end()
    }
}

impl SessionContext {
    fn empty() -> Self {
        SessionContext {
            messages: Vec::new(),
            thinking_level: "off".into(),
            model: None,
        }
    }
}

/// Builds the context for `leaf` exactly as Pi's `buildSessionContext`:
///
/// 1. the path from the root to the leaf (following `parentId`);
/// 2. the last `thinking_level_change` and the last model (a `model_change`
///    or an assistant message's `provider`/`model`) on it;
/// 3. if the path holds a compaction, the last one's summary as a
///    `compactionSummary` message, then the entries from its
///    `firstKeptEntryId` up to it, then the entries after it; otherwise
///    every entry;
/// 4. of those entries, `message` entries give their message,
///    `custom_message` entries a `custom` message, and `branch_summary`
///    entries with a non-empty summary a `branchSummary` message
///    (timestamps become milliseconds as JavaScript's `Date` reads them).
///
/// Header lines in `entries` are skipped (Pi's `SessionManager` passes
/// only the other entries). Where this differs from Pi, by design:
///
/// - a `parentId` cycle on the path is [`TreeError::Cycle`] (Pi loops
///   forever);
/// - a [`SessionEntry::Malformed`] entry on the path contributes nothing
///   (Pi would read whatever fields it has), though the path goes through
///   it.
///
/// ```
/// use agentstream::session::{build_session_context, parse_session, Leaf};
///
/// let file = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
/// {"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
/// {"type":"thinking_level_change","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","thinkingLevel":"high"}
/// {"type":"message","id":"c","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"other branch","timestamp":3}}"#;
/// let session = parse_session(file).unwrap();
/// let ctx = build_session_context(&session.entries, Leaf::Id("b")).unwrap();
/// assert_eq!((ctx.messages.len(), ctx.thinking_level.as_str()), (1, "high"));
/// let ctx = build_session_context(&session.entries, Leaf::Last).unwrap();
/// assert_eq!((ctx.messages.len(), ctx.thinking_level.as_str()), (2, "off"));
/// ```
pub fn build_session_context(
    entries: &[SessionEntry],
    leaf: Leaf<'_>,
) -> Result<SessionContext, TreeError> {
    let tree = SessionTree::new(entries);
    let leaf = match leaf {
        Leaf::BeforeFirst => return Ok(SessionContext::empty()),
        Leaf::Id(id) => tree.index_of(id).or_else(|| tree.last()),
        Leaf::Last => tree.last(),
    };
    let Some(leaf) = leaf else {
        return Ok(SessionContext::empty());
    };
    let path = tree.path(leaf)?;
    build_from_path(entries, &path)
}

/// [`build_session_context`] for a path already walked (indexes into
/// `entries`, root first).
pub fn build_from_path(
    entries: &[SessionEntry],
    path: &[usize],
) -> Result<SessionContext, TreeError> {
    let mut ctx = SessionContext::empty();
    let mut compaction = None;
    for (pos, &i) in path.iter().enumerate() {
        match &entries[i] {
            SessionEntry::ThinkingLevelChange(e) => ctx.thinking_level = e.thinking_level.clone(),
            SessionEntry::ModelChange(e) => {
                ctx.model = Some(ModelRef {
                    provider: e.provider.clone(),
                    model_id: e.model_id.clone(),
                })
            }
            SessionEntry::Message(e) => {
                if let AgentMessage::Llm(Message::Assistant(a)) = &e.message {
                    ctx.model = Some(ModelRef {
                        provider: a.provider.clone(),
                        model_id: a.model.clone(),
                    });
                }
            }
            SessionEntry::Compaction(c) => compaction = Some((pos, c)),
            _ => {}
        }
    }
    match compaction {
        None => path
            .iter()
            .for_each(|&i| append(&mut ctx.messages, &entries[i])),
        Some((_, c)) => {
            ctx.messages.push(AgentMessage::compaction_summary(
                &c.summary,
                c.tokens_before.as_ref(),
                js_date_millis(Some(&Value::String(c.base.timestamp.clone()))),
            ));
            // Pi finds the compaction again by id: the first compaction on
            // the path with that id.
            let at = path
                .iter()
                .position(|&i| {
                    matches!(&entries[i], SessionEntry::Compaction(x) if x.base.id == c.base.id)
                })
                .unwrap_or(0);
            // A `null` firstKeptEntryId matches no entry; an absent one
            // (`undefined`) matches an entry without an id, as `===` does.
            let null_first = c.extra.get("firstKeptEntryId").is_some_and(Value::is_null);
            let mut found = false;
            for &i in &path[..at] {
                if !found && !null_first {
                    found = entries[i].id() == c.first_kept_entry_id.as_deref();
                }
                if found {
                    append(&mut ctx.messages, &entries[i]);
                }
            }
            for &i in &path[at + 1..] {
                append(&mut ctx.messages, &entries[i]);
            }
        }
    }
    Ok(ctx)
}

/// Adds the message an entry contributes to a context, if any.
fn append(messages: &mut Vec<AgentMessage>, entry: &SessionEntry) {
    match entry {
        SessionEntry::Message(e) => messages.push(e.message.clone()),
        SessionEntry::CustomMessage(e) => messages.push(AgentMessage::custom(
            &e.custom_type,
            &e.content,
            e.display.as_ref(),
            e.details.as_ref(),
            js_date_millis(Some(&Value::String(e.base.timestamp.clone()))),
        )),
        SessionEntry::BranchSummary(e) if !e.summary.is_empty() => {
            messages.push(AgentMessage::branch_summary(
                &e.summary,
                e.from_id.as_ref(),
                js_date_millis(Some(&Value::String(e.base.timestamp.clone()))),
            ))
        }
        _ => {}
    }
}
