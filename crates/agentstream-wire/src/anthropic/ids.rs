//! Tool-call ids Anthropic accepts.
//!
//! The Messages API requires every `tool_use` id to match
//! `^[a-zA-Z0-9_-]+$` and to be at most 64 characters long. Ids from other
//! providers may not: OpenAI Responses ids are longer, some servers put
//! `.` or `:` in theirs, and an interrupted stream may leave one empty.
//! [`ToolIds`] maps each id of a request to one that fits:
//!
//! - an id that already fits is kept as it is;
//! - any other becomes its fitting characters (others replaced by `_`),
//!   cut to 40, then `_` and a 64-bit FNV-1a hash of the whole original id
//!   in hex: deterministic, so the same history always gives the same
//!   request;
//! - the result never equals another id of the request: on a clash (a
//!   kept id that looks like a rewritten one, or a hash collision) `_2`,
//!   `_3`, … is appended.
//!
//! A tool result uses the mapping of its call, so the pairs stay intact.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;

/// The longest id Anthropic accepts.
pub const MAX_TOOL_ID_LEN: usize = 64;

/// How many characters of the original a rewritten id keeps.
const PREFIX_LEN: usize = 40;

/// Whether Anthropic accepts `id` as a tool-call id.
///
/// ```
/// use agentstream_wire::anthropic::is_valid_tool_id;
///
/// assert!(is_valid_tool_id("toolu_01A09q90qw90lq917835lq9"));
/// assert!(!is_valid_tool_id("call.1"));
/// assert!(!is_valid_tool_id(""));
/// assert!(!is_valid_tool_id(&"a".repeat(65)));
/// ```
pub fn is_valid_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_TOOL_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The id mapping of one request; see the module documentation.
///
/// ```
/// use agentstream_wire::anthropic::{is_valid_tool_id, ToolIds};
///
/// let long = format!("fc_{}", "9".repeat(80));
/// let ids = ToolIds::new([long.as_str(), "call:1", "toolu_ok"]);
/// assert_eq!(ids.get("toolu_ok"), "toolu_ok");
/// let rewritten = ids.get(&long);
/// assert!(is_valid_tool_id(&rewritten) && rewritten.starts_with("fc_999"));
/// assert_eq!(ids.get("call:1"), ToolIds::new(["call:1"]).get("call:1"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolIds {
    rewritten: BTreeMap<String, String>,
}

impl ToolIds {
    /// The mapping for a request whose tool calls (and results) carry
    /// `ids`, in the order they appear.
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str> + Clone) -> Self {
        let mut used: BTreeSet<String> = ids
            .clone()
            .into_iter()
            .filter(|id| is_valid_tool_id(id))
            .map(String::from)
            .collect();
        let mut rewritten = BTreeMap::new();
        for id in ids {
            if is_valid_tool_id(id) || rewritten.contains_key(id) {
                continue;
            }
            let prefix: String = id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(PREFIX_LEN)
                .collect();
            let base = format!("{prefix}_{:016x}", fnv1a(id));
            let mut candidate = base.clone();
            let mut n = 2u32;
            while used.contains(&candidate) {
                candidate = format!("{base}_{n}");
                n += 1;
            }
            used.insert(candidate.clone());
            rewritten.insert(String::from(id), candidate);
        }
        Self { rewritten }
    }

    /// The id to send for `id`. An id the mapping was not built with is
    /// sent as it is if it fits, or rewritten the same way on its own.
    pub fn get(&self, id: &str) -> String {
        match self.rewritten.get(id) {
            Some(new) => new.clone(),
            None if is_valid_tool_id(id) => String::from(id),
            None => Self::new([id]).get(id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn rewritten_ids_fit_and_never_clash() {
        let long_a = format!("fc_{}", "a".repeat(100));
        let long_b = format!("fc_{}b", "a".repeat(99));
        let ids = [
            "",
            "x.y",
            "x_y",
            "x:y",
            long_a.as_str(),
            long_b.as_str(),
            "ok-1",
        ];
        let map = ToolIds::new(ids.iter().copied());
        let sent: Vec<String> = ids.iter().map(|id| map.get(id)).collect();
        for id in &sent {
            assert!(is_valid_tool_id(id), "{id}");
        }
        let distinct: BTreeSet<&String> = sent.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "{sent:?}");
        assert_eq!(map.get("x_y"), "x_y");
        assert_eq!(map.get("ok-1"), "ok-1");
        // Deterministic: a second mapping gives the same ids.
        let again = ToolIds::new(ids.iter().copied());
        assert!(ids.iter().all(|id| again.get(id) == map.get(id)));
    }

    #[test]
    fn a_kept_id_that_looks_rewritten_forces_a_suffix() {
        let rewritten = ToolIds::new(["a.b"]).get("a.b");
        let map = ToolIds::new([rewritten.as_str(), "a.b"]);
        assert_eq!(map.get(&rewritten), rewritten);
        assert_eq!(map.get("a.b"), format!("{rewritten}_2"));
    }
}
