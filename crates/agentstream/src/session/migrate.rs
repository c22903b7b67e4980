//! Migration of version 1 and 2 session files to version 3, as Pi does it.
//!
//! - Version 1 → 2: every entry but the header gets an `id` and a
//!   `parentId` chaining it to the entry before (file order is the only
//!   branch), and a compaction's `firstKeptEntryIndex` (an index into the
//!   file's lines, the header being 0) becomes `firstKeptEntryId`; an index
//!   that points at the header, past the end, or at an entry not yet given
//!   an id (after the compaction) leaves no `firstKeptEntryId`, as in Pi.
//! - Version 2 → 3: a message with the role `hookMessage` is renamed
//!   `custom`.
//!
//! Every `session` entry gets the new `version`. The migration works on the
//! raw JSON objects, before they are typed.

use alloc::string::String;

use serde_json::{Map, Value};

/// The format version this module reads and writes.
pub const CURRENT_SESSION_VERSION: u64 = 3;

fn is_type(entry: &Map<String, Value>, ty: &str) -> bool {
    entry.get("type").and_then(Value::as_str) == Some(ty)
}

/// The version a file declares: its first `session` entry's `version`, 1
/// if absent (a non-numeric version counts as absent).
pub fn file_version(entries: &[Map<String, Value>]) -> u64 {
    entries
        .iter()
        .find(|e| is_type(e, "session"))
        .and_then(|h| h.get("version"))
        .and_then(Value::as_f64)
        .map_or(1, |v| {
            if v >= 3.0 {
                3
            } else if v >= 2.0 {
                2
            } else {
                1
            }
        })
}

/// Migrates raw entries in place to version 3; `new_id` gives the ids of
/// the version 1 migration (Pi uses 8 random hex characters). Returns
/// whether anything changed.
pub fn migrate_entries(
    entries: &mut [Map<String, Value>],
    new_id: &mut dyn FnMut() -> String,
) -> bool {
    let version = file_version(entries);
    if version >= CURRENT_SESSION_VERSION {
        return false;
    }
    if version < 2 {
        v1_to_v2(entries, new_id);
    }
    for entry in entries.iter_mut() {
        if is_type(entry, "session") {
            entry.insert("version".into(), Value::from(CURRENT_SESSION_VERSION));
            continue;
        }
        if is_type(entry, "message") {
            if let Some(Value::Object(message)) = entry.get_mut("message") {
                if message.get("role").and_then(Value::as_str) == Some("hookMessage") {
                    message.insert("role".into(), "custom".into());
                }
            }
        }
    }
    true
}

fn v1_to_v2(entries: &mut [Map<String, Value>], new_id: &mut dyn FnMut() -> String) {
    let mut prev: Option<String> = None;
    for i in 0..entries.len() {
        if is_type(&entries[i], "session") {
            entries[i].insert("version".into(), Value::from(2u64));
            continue;
        }
        let id = new_id();
        entries[i].insert("id".into(), Value::String(id.clone()));
        entries[i].insert("parentId".into(), prev.map_or(Value::Null, Value::String));
        prev = Some(id);
        if !is_type(&entries[i], "compaction") {
            continue;
        }
        let Some(index) = entries[i]
            .get("firstKeptEntryIndex")
            .and_then(Value::as_f64)
        else {
            continue;
        };
        let target =
            if index >= 0.0 && index == (index as usize) as f64 && (index as usize) < entries.len()
            {
                let t = &entries[index as usize];
                if is_type(t, "session") {
                    None
                } else {
                    // An entry after this one has no id yet: Pi reads `undefined`.
                    t.get("id").cloned()
                }
            } else {
                None
            };
        if let Some(target) = target {
            entries[i].insert("firstKeptEntryId".into(), target);
        }
        entries[i].retain(|k, _| k != "firstKeptEntryIndex");
    }
}
