//! The tree of a session: entries linked by `id` and `parentId`.
//!
//! Everything here is iterative and linear in the number of entries: a
//! hostile file (a `parentId` cycle, a missing parent, a duplicated id, a
//! chain a million entries deep) gives an error or an orphan, never a panic
//! or a deep recursion.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use super::date::parse_iso;
use super::entry::SessionEntry;

/// An error from walking a session tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeError {
    /// Following `parentId` from an entry came back to an entry already on
    /// the path. Pi's `buildSessionContext` never returns on such a file.
    Cycle {
        /// The id found twice on the walk.
        id: String,
    },
    /// No entry has this id.
    UnknownId(String),
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::Cycle { id } => write!(f, "the parentId chain loops back to entry `{id}`"),
            TreeError::UnknownId(id) => write!(f, "no entry has the id `{id}`"),
        }
    }
}

impl core::error::Error for TreeError {}

/// An index over a session's entries (header lines are skipped).
///
/// Like Pi's `byId` map, a duplicated id refers to the last entry that has
/// it.
#[derive(Debug)]
pub struct SessionTree<'a> {
    entries: &'a [SessionEntry],
    by_id: BTreeMap<&'a str, usize>,
}

impl<'a> SessionTree<'a> {
    /// Indexes `entries` by id.
    pub fn new(entries: &'a [SessionEntry]) -> Self {
        let mut by_id = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            if let Some(id) = e.id() {
                by_id.insert(id, i);
            }
        }
        SessionTree { entries, by_id }
    }

    /// The entries, as given.
    pub fn entries(&self) -> &'a [SessionEntry] {
        self.entries
    }

    /// The index of the entry with this id (the last one, if duplicated).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The index of the last entry that is not a header.
    pub fn last(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| !matches!(e, SessionEntry::Session(_)))
    }

    /// The parent of entry `index`, as Pi follows it: a non-empty `parentId`
    /// that names an entry.
    pub fn parent(&self, index: usize) -> Option<usize> {
        let parent = self.entries.get(index)?.parent_id()?;
        if parent.is_empty() {
            return None;
        }
        self.index_of(parent)
    }

    /// The path from the root to entry `leaf` (indexes, root first).
    pub fn path(&self, leaf: usize) -> Result<Vec<usize>, TreeError> {
        let mut seen = vec![false; self.entries.len()];
        let mut path = Vec::new();
        let mut current = Some(leaf).filter(|&i| i < self.entries.len());
        while let Some(i) = current {
            if core::mem::replace(&mut seen[i], true) {
                return Err(TreeError::Cycle {
                    id: self.entries[i].id().unwrap_or_default().into(),
                });
            }
            path.push(i);
            current = self.parent(i);
        }
        path.reverse();
        Ok(path)
    }

    /// The entries no other entry names as its parent (the tips of the
    /// branches), in file order. Header lines are not leaves.
    pub fn leaves(&self) -> Vec<usize> {
        let mut has_child = vec![false; self.entries.len()];
        for i in 0..self.entries.len() {
            if let Some(p) = self.parent(i) {
                if p != i {
                    has_child[p] = true;
                }
            }
        }
        (0..self.entries.len())
            .filter(|&i| !has_child[i] && !matches!(self.entries[i], SessionEntry::Session(_)))
            .collect()
    }

    /// The tree as Pi's `getTree` shapes it: roots (entries whose
    /// `parentId` is `null`, their own id, or names no entry) and each
    /// entry's children, sorted by `timestamp` (oldest first, stable).
    /// Entries on a `parentId` cycle are reachable from no root; they are
    /// returned in the third list.
    pub fn shape(&self) -> TreeShape {
        let n = self.entries.len();
        // Pi keys its nodes by id: entries sharing an id share the node of
        // the last of them (which then appears once per entry); entries
        // without an id share one node too.
        let no_id = self
            .entries
            .iter()
            .rposition(|e| e.id().is_none() && !matches!(e, SessionEntry::Session(_)));
        let node = |i: usize| match self.entries[i].id() {
            Some(id) => self.index_of(id).unwrap_or(i),
            None => no_id.unwrap_or(i),
        };
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if matches!(e, SessionEntry::Session(_)) {
                continue;
            }
            let parent = e.parent_id();
            match parent.and_then(|p| self.index_of(p)) {
                Some(p) if parent != e.id() => children[p].push(node(i)),
                _ => roots.push(node(i)),
            }
        }
        let time = |i: usize| self.entries[i].timestamp().and_then(parse_iso);
        for list in &mut children {
            // Pi sorts by `getTime()` difference; an unparsable time is NaN,
            // which leaves the pair's order to the sort: keep it.
            list.sort_by(|&a, &b| match (time(a), time(b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => core::cmp::Ordering::Equal,
            });
        }
        let mut reached = vec![false; n];
        let mut stack: Vec<usize> = roots.clone();
        while let Some(i) = stack.pop() {
            if core::mem::replace(&mut reached[i], true) {
                continue;
            }
            stack.extend(children[i].iter().copied());
        }
        // An entry whose id a later entry shares is no node of its own.
        let unreachable = (0..n)
            .filter(|&i| {
                !reached[i] && node(i) == i && !matches!(self.entries[i], SessionEntry::Session(_))
            })
            .collect();
        TreeShape {
            roots,
            children,
            unreachable,
        }
    }
}

impl SessionTree<'_> {
    /// The labels in effect, by target id: each `label` entry in file order
    /// sets its target's label, or clears it when `label` is empty or
    /// absent.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::new();
        for e in self.entries {
            if let SessionEntry::Label(l) = e {
                match l.label.as_deref() {
                    Some(text) if !text.is_empty() => {
                        labels.insert(l.target_id.clone(), text.into());
                    }
                    _ => {
                        labels.remove(&l.target_id);
                    }
                }
            }
        }
        labels
    }
}

/// The shape of a session tree, by entry index (see [`SessionTree::shape`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    /// The roots, in file order.
    pub roots: Vec<usize>,
    /// Each entry's children, oldest first.
    pub children: Vec<Vec<usize>>,
    /// Entries on a `parentId` cycle, reachable from no root.
    pub unreachable: Vec<usize>,
}
