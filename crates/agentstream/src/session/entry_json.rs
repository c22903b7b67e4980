//! The JSON of session entries: decoding with errors that name the field,
//! and writing back the known fields, then the ones this model does not
//! know.

use alloc::string::{String, ToString};

use serde_json::{Map, Value};

use super::agent_message::AgentMessage;
use super::entry::*;
use crate::message::{json_kind, DecodeError};

/// Takes a key out of a map, keeping the other keys in their order (a
/// plain `remove` reorders them under serde_json's `preserve_order`).
fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if !map.contains_key(key) {
        return None;
    }
    let mut found = None;
    *map = core::mem::take(map)
        .into_iter()
        .filter_map(|(k, v)| {
            if k == key {
                found = Some(v);
                None
            } else {
                Some((k, v))
            }
        })
        .collect();
    found
}

fn req_string(map: &mut Map<String, Value>, key: &str) -> Result<String, DecodeError> {
    match take(map, key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(DecodeError::new(alloc::format!(
            "expected a string, found {}",
            json_kind(&other)
        ))
        .within_key(key)),
        None => Err(DecodeError::new(alloc::format!("missing field `{key}`"))),
    }
}

/// An optional string: absent is `None`; `null` is kept in `extra` so it is
/// written back.
fn opt_string(
    map: &mut Map<String, Value>,
    extra: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<String>, DecodeError> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::Null) => {
            extra.insert(key.to_string(), Value::Null);
            Ok(None)
        }
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(DecodeError::new(alloc::format!(
            "expected a string, found {}",
            json_kind(&other)
        ))
        .within_key(key)),
    }
}

impl EntryBase {
    fn take(map: &mut Map<String, Value>) -> Result<Self, DecodeError> {
        let id = req_string(map, "id")?;
        let parent_id = match take(map, "parentId") {
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                return Err(DecodeError::new(alloc::format!(
                    "expected a string or null, found {}",
                    json_kind(&other)
                ))
                .within_key("parentId"))
            }
            None => return Err(DecodeError::new("missing field `parentId`")),
        };
        let timestamp = req_string(map, "timestamp")?;
        Ok(EntryBase {
            id,
            parent_id,
            timestamp,
        })
    }

    fn write(&self, map: &mut Map<String, Value>) {
        map.insert("id".into(), Value::String(self.id.clone()));
        map.insert(
            "parentId".into(),
            self.parent_id.clone().map_or(Value::Null, Value::String),
        );
        map.insert("timestamp".into(), Value::String(self.timestamp.clone()));
    }
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

impl SessionEntry {
    /// Decodes one entry. An object of an unknown `type` becomes
    /// [`SessionEntry::Unknown`]; one of a known type whose fields do not
    /// decode becomes [`SessionEntry::Malformed`]. Only a value that is not
    /// an object is an error.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(fields) = value else {
            return Err(DecodeError::new(alloc::format!(
                "expected an object, found {}",
                json_kind(&value)
            )));
        };
        // An object without a string `type` is kept like an unknown type:
        // Pi keeps it too (it can still be the last entry, hence a leaf).
        let ty = match fields.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => return Ok(SessionEntry::Unknown(RawEntry { fields })),
        };
        if !KNOWN_TYPES.contains(&ty.as_str()) {
            return Ok(SessionEntry::Unknown(RawEntry { fields }));
        }
        match Self::typed(&ty, fields.clone()) {
            Ok(entry) => Ok(entry),
            Err(error) => Ok(SessionEntry::Malformed(RawEntry { fields }, error)),
        }
    }

    fn typed(ty: &str, mut map: Map<String, Value>) -> Result<Self, DecodeError> {
        take(&mut map, "type");
        if ty == "session" {
            let mut extra = Map::new();
            let version = match take(&mut map, "version") {
                None => None,
                Some(v) => Some(v.as_u64().ok_or_else(|| {
                    DecodeError::new("expected a non-negative integer").within_key("version")
                })?),
            };
            let id = req_string(&mut map, "id")?;
            let timestamp = req_string(&mut map, "timestamp")?;
            let cwd = req_string(&mut map, "cwd")?;
            let parent_session = opt_string(&mut map, &mut extra, "parentSession")?;
            extra.append(&mut map);
            return Ok(SessionEntry::Session(SessionHeader {
                version,
                id,
                timestamp,
                cwd,
                parent_session,
                extra,
            }));
        }
        let base = EntryBase::take(&mut map)?;
        let mut extra = Map::new();
        let entry = match ty {
            "message" => {
                let message = match take(&mut map, "message") {
                    Some(m) => AgentMessage::from_value(m).map_err(|e| e.within_key("message"))?,
                    None => return Err(DecodeError::new("missing field `message`")),
                };
                SessionEntry::Message(MessageEntry {
                    base,
                    message,
                    extra: Map::new(),
                })
            }
            "thinking_level_change" => {
                SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
                    base,
                    thinking_level: req_string(&mut map, "thinkingLevel")?,
                    extra: Map::new(),
                })
            }
            "model_change" => SessionEntry::ModelChange(ModelChangeEntry {
                base,
                provider: req_string(&mut map, "provider")?,
                model_id: req_string(&mut map, "modelId")?,
                extra: Map::new(),
            }),
            "compaction" => SessionEntry::Compaction(CompactionEntry {
                base,
                summary: req_string(&mut map, "summary")?,
                first_kept_entry_id: opt_string(&mut map, &mut extra, "firstKeptEntryId")?,
                tokens_before: take(&mut map, "tokensBefore"),
                details: take(&mut map, "details"),
                from_hook: take(&mut map, "fromHook"),
                extra: Map::new(),
            }),
            "branch_summary" => SessionEntry::BranchSummary(BranchSummaryEntry {
                base,
                from_id: take(&mut map, "fromId"),
                summary: req_string(&mut map, "summary")?,
                details: take(&mut map, "details"),
                from_hook: take(&mut map, "fromHook"),
                extra: Map::new(),
            }),
            "custom" => SessionEntry::Custom(CustomEntry {
                base,
                custom_type: req_string(&mut map, "customType")?,
                data: take(&mut map, "data"),
                extra: Map::new(),
            }),
            "custom_message" => SessionEntry::CustomMessage(CustomMessageEntry {
                base,
                custom_type: req_string(&mut map, "customType")?,
                content: match take(&mut map, "content") {
                    Some(c @ (Value::String(_) | Value::Array(_))) => c,
                    Some(other) => {
                        return Err(DecodeError::new(alloc::format!(
                            "expected a string or an array, found {}",
                            json_kind(&other)
                        ))
                        .within_key("content"))
                    }
                    None => return Err(DecodeError::new("missing field `content`")),
                },
                display: take(&mut map, "display"),
                details: take(&mut map, "details"),
                extra: Map::new(),
            }),
            "label" => SessionEntry::Label(LabelEntry {
                base,
                target_id: req_string(&mut map, "targetId")?,
                label: opt_string(&mut map, &mut extra, "label")?,
                extra: Map::new(),
            }),
            "session_info" => SessionEntry::SessionInfo(SessionInfoEntry {
                base,
                name: opt_string(&mut map, &mut extra, "name")?,
                extra: Map::new(),
            }),
            _ => return Err(DecodeError::new("unknown entry type")),
        };
        extra.append(&mut map);
        Ok(entry.with_extra(extra))
    }

    fn with_extra(mut self, extra: Map<String, Value>) -> Self {
        if let Some(slot) = self.extra_mut() {
            *slot = extra;
        }
        self
    }

    fn extra_mut(&mut self) -> Option<&mut Map<String, Value>> {
        Some(match self {
            SessionEntry::Session(e) => &mut e.extra,
            SessionEntry::Message(e) => &mut e.extra,
            SessionEntry::ThinkingLevelChange(e) => &mut e.extra,
            SessionEntry::ModelChange(e) => &mut e.extra,
            SessionEntry::Compaction(e) => &mut e.extra,
            SessionEntry::BranchSummary(e) => &mut e.extra,
            SessionEntry::Custom(e) => &mut e.extra,
            SessionEntry::CustomMessage(e) => &mut e.extra,
            SessionEntry::Label(e) => &mut e.extra,
            SessionEntry::SessionInfo(e) => &mut e.extra,
            SessionEntry::Unknown(_) | SessionEntry::Malformed(..) => return None,
        })
    }

    /// The entry as a JSON value: the known fields, then the ones this
    /// model does not know (a known field set on the typed value wins).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        let (ty, extra) = match self {
            SessionEntry::Unknown(r) | SessionEntry::Malformed(r, _) => {
                return Value::Object(r.fields.clone())
            }
            SessionEntry::Session(h) => {
                put(&mut map, "version", h.version.map(Value::from));
                map.insert("id".into(), Value::String(h.id.clone()));
                map.insert("timestamp".into(), Value::String(h.timestamp.clone()));
                map.insert("cwd".into(), Value::String(h.cwd.clone()));
                put(
                    &mut map,
                    "parentSession",
                    h.parent_session.clone().map(Value::String),
                );
                ("session", &h.extra)
            }
            SessionEntry::Message(e) => {
                e.base.write(&mut map);
                map.insert("message".into(), e.message.to_value());
                ("message", &e.extra)
            }
            SessionEntry::ThinkingLevelChange(e) => {
                e.base.write(&mut map);
                map.insert(
                    "thinkingLevel".into(),
                    Value::String(e.thinking_level.clone()),
                );
                ("thinking_level_change", &e.extra)
            }
            SessionEntry::ModelChange(e) => {
                e.base.write(&mut map);
                map.insert("provider".into(), Value::String(e.provider.clone()));
                map.insert("modelId".into(), Value::String(e.model_id.clone()));
                ("model_change", &e.extra)
            }
            SessionEntry::Compaction(e) => {
                e.base.write(&mut map);
                map.insert("summary".into(), Value::String(e.summary.clone()));
                put(
                    &mut map,
                    "firstKeptEntryId",
                    e.first_kept_entry_id.clone().map(Value::String),
                );
                put(&mut map, "tokensBefore", e.tokens_before.clone());
                put(&mut map, "details", e.details.clone());
                put(&mut map, "fromHook", e.from_hook.clone());
                ("compaction", &e.extra)
            }
            SessionEntry::BranchSummary(e) => {
                e.base.write(&mut map);
                put(&mut map, "fromId", e.from_id.clone());
                map.insert("summary".into(), Value::String(e.summary.clone()));
                put(&mut map, "details", e.details.clone());
                put(&mut map, "fromHook", e.from_hook.clone());
                ("branch_summary", &e.extra)
            }
            SessionEntry::Custom(e) => {
                e.base.write(&mut map);
                map.insert("customType".into(), Value::String(e.custom_type.clone()));
                put(&mut map, "data", e.data.clone());
                ("custom", &e.extra)
            }
            SessionEntry::CustomMessage(e) => {
                e.base.write(&mut map);
                map.insert("customType".into(), Value::String(e.custom_type.clone()));
                map.insert("content".into(), e.content.clone());
                put(&mut map, "display", e.display.clone());
                put(&mut map, "details", e.details.clone());
                ("custom_message", &e.extra)
            }
            SessionEntry::Label(e) => {
                e.base.write(&mut map);
                map.insert("targetId".into(), Value::String(e.target_id.clone()));
                put(&mut map, "label", e.label.clone().map(Value::String));
                ("label", &e.extra)
            }
            SessionEntry::SessionInfo(e) => {
                e.base.write(&mut map);
                put(&mut map, "name", e.name.clone().map(Value::String));
                ("session_info", &e.extra)
            }
        };
        map.insert("type".into(), Value::String(ty.into()));
        for (k, v) in extra {
            if !map.contains_key(k) {
                map.insert(k.clone(), v.clone());
            }
        }
        Value::Object(map)
    }
}
