//! The typed entries of a Pi session file (format version 3).

use alloc::string::String;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::agent_message::AgentMessage;
use crate::message::DecodeError;

/// The fields every entry but the header has: `id`, `parentId`, `timestamp`.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryBase {
    /// `id`: the entry's id (8 hex characters when Pi wrote it).
    pub id: String,
    /// `parentId`: the id of the entry this one follows; `None` (`null`)
    /// for a root.
    pub parent_id: Option<String>,
    /// `timestamp`: when the entry was written, an ISO 8601 string.
    pub timestamp: String,
}

/// The first line of a session file: `{"type": "session", "version"?, "id",
/// "timestamp", "cwd", "parentSession"?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader {
    /// `version`: the format version; absent in version 1 files.
    pub version: Option<u64>,
    /// `id`: the session id (a UUIDv7 in files Pi writes today).
    pub id: String,
    /// `timestamp`: when the session started, an ISO 8601 string.
    pub timestamp: String,
    /// `cwd`: the working directory the session ran in.
    pub cwd: String,
    /// `parentSession`: the file this session was branched from.
    pub parent_session: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "message", "message"}`: one message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// The message: an LLM message or one of Pi's application roles.
    pub message: AgentMessage,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "thinking_level_change", "thinkingLevel"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ThinkingLevelChangeEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `thinkingLevel`: `off`, `minimal`, `low`, `medium`, `high`, `xhigh`.
    pub thinking_level: String,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "model_change", "provider", "modelId"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChangeEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `provider`.
    pub provider: String,
    /// `modelId`.
    pub model_id: String,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "compaction", "summary", "firstKeptEntryId", "tokensBefore",
/// "details"?, "fromHook"?}`: the conversation before `firstKeptEntryId`
/// replaced by a summary.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `summary`.
    pub summary: String,
    /// `firstKeptEntryId`: the first entry kept after the summary. `None`
    /// when a version 1 file's `firstKeptEntryIndex` pointed nowhere.
    pub first_kept_entry_id: Option<String>,
    /// `tokensBefore`: the context size before compacting.
    pub tokens_before: Option<Value>,
    /// `details`: extension data (Pi's default compaction writes the read
    /// and modified file lists).
    pub details: Option<Value>,
    /// `fromHook`: whether an extension produced the summary.
    pub from_hook: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "branch_summary", "fromId", "summary", "details"?,
/// "fromHook"?}`: a summary of the branch the conversation came back from.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `fromId`: the entry the branch left from (`"root"` for the start).
    pub from_id: Option<Value>,
    /// `summary`.
    pub summary: String,
    /// `details`: extension data.
    pub details: Option<Value>,
    /// `fromHook`: whether an extension produced the summary.
    pub from_hook: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "custom", "customType", "data"?}`: extension state, never
/// part of the model's context.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `customType`: the extension's name for this kind of entry.
    pub custom_type: String,
    /// `data`: the extension's data.
    pub data: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "custom_message", "customType", "content", "display",
/// "details"?}`: an extension's message that enters the context as a
/// `custom` message.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessageEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `customType`.
    pub custom_type: String,
    /// `content`: a string or text and image blocks, kept as written.
    pub content: Value,
    /// `display`: whether Pi's interface shows it.
    pub display: Option<Value>,
    /// `details`: extension data.
    pub details: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "label", "targetId", "label"?}`: sets (or, without `label`,
/// clears) a bookmark on another entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `targetId`: the labelled entry.
    pub target_id: String,
    /// `label`: the label; `None` clears it.
    pub label: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// `{"type": "session_info", "name"?}`: the session's display name.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfoEntry {
    /// `id`, `parentId`, `timestamp`.
    pub base: EntryBase,
    /// `name`: the display name; empty or absent clears it.
    pub name: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// An entry kept as the JSON object it was: one of a `type` this model does
/// not know, or of a known type whose fields did not decode.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEntry {
    /// Every field, `type` included.
    pub fields: Map<String, Value>,
}

/// One line of a session file, tagged by `type`.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum SessionEntry {
    /// `session`: the header.
    Session(SessionHeader),
    /// `message`.
    Message(MessageEntry),
    /// `thinking_level_change`.
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `model_change`.
    ModelChange(ModelChangeEntry),
    /// `compaction`.
    Compaction(CompactionEntry),
    /// `branch_summary`.
    BranchSummary(BranchSummaryEntry),
    /// `custom`.
    Custom(CustomEntry),
    /// `custom_message`.
    CustomMessage(CustomMessageEntry),
    /// `label`.
    Label(LabelEntry),
    /// `session_info`.
    SessionInfo(SessionInfoEntry),
    /// An entry of a `type` this model does not know, kept verbatim.
    Unknown(RawEntry),
    /// An entry of a known `type` whose fields did not decode, kept
    /// verbatim with the reason. It stays in the tree (its `id` and
    /// `parentId` are read when they are strings) but adds nothing to a
    /// context.
    Malformed(RawEntry, DecodeError),
}

impl SessionEntry {
    /// The entry's `type` tag.
    pub fn entry_type(&self) -> &str {
        match self {
            SessionEntry::Session(_) => "session",
            SessionEntry::Message(_) => "message",
            SessionEntry::ThinkingLevelChange(_) => "thinking_level_change",
            SessionEntry::ModelChange(_) => "model_change",
            SessionEntry::Compaction(_) => "compaction",
            SessionEntry::BranchSummary(_) => "branch_summary",
            SessionEntry::Custom(_) => "custom",
            SessionEntry::CustomMessage(_) => "custom_message",
            SessionEntry::Label(_) => "label",
            SessionEntry::SessionInfo(_) => "session_info",
            SessionEntry::Unknown(r) | SessionEntry::Malformed(r, _) => {
                r.fields.get("type").and_then(Value::as_str).unwrap_or("")
            }
        }
    }

    /// `id`, `parentId` and `timestamp` of a typed entry other than the
    /// header.
    pub fn base(&self) -> Option<&EntryBase> {
        Some(match self {
            SessionEntry::Message(e) => &e.base,
            SessionEntry::ThinkingLevelChange(e) => &e.base,
            SessionEntry::ModelChange(e) => &e.base,
            SessionEntry::Compaction(e) => &e.base,
            SessionEntry::BranchSummary(e) => &e.base,
            SessionEntry::Custom(e) => &e.base,
            SessionEntry::CustomMessage(e) => &e.base,
            SessionEntry::Label(e) => &e.base,
            SessionEntry::SessionInfo(e) => &e.base,
            _ => return None,
        })
    }

    /// The entry's `id`, if it has a string one (the header's is the
    /// session id and is not returned).
    pub fn id(&self) -> Option<&str> {
        match self {
            SessionEntry::Session(_) => None,
            SessionEntry::Unknown(r) | SessionEntry::Malformed(r, _) => {
                r.fields.get("id").and_then(Value::as_str)
            }
            other => other.base().map(|b| b.id.as_str()),
        }
    }

    /// The entry's `parentId`, if it is a string.
    pub fn parent_id(&self) -> Option<&str> {
        match self {
            SessionEntry::Session(_) => None,
            SessionEntry::Unknown(r) | SessionEntry::Malformed(r, _) => {
                r.fields.get("parentId").and_then(Value::as_str)
            }
            other => other.base().and_then(|b| b.parent_id.as_deref()),
        }
    }

    /// The entry's `timestamp`, if it is a string.
    pub fn timestamp(&self) -> Option<&str> {
        match self {
            SessionEntry::Session(h) => Some(&h.timestamp),
            SessionEntry::Unknown(r) | SessionEntry::Malformed(r, _) => {
                r.fields.get("timestamp").and_then(Value::as_str)
            }
            other => other.base().map(|b| b.timestamp.as_str()),
        }
    }
}

/// The entry types of format version 3.
pub const KNOWN_TYPES: [&str; 10] = [
    "session",
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}
