//! Writing Pi session files with Pi's policy (`SessionManager` 0.73.1).
//!
//! - A new session gets a UUIDv7 id and the file
//!   `<ISO time with ':' and '.' as '-'>_<id>.jsonl` in its sessions
//!   directory (by default `$PI_CODING_AGENT_DIR/sessions/--<cwd>--/`, with
//!   `~/.pi/agent` when the variable is unset, `/`, `\` and `:` of the cwd
//!   as `-`).
//! - Nothing is written until the session holds an assistant message; then
//!   every entry so far, then one line per new entry.
//! - Entry ids are 8 hex characters, redrawn on a collision.
//! - `branch` moves the leaf; `branch_with_summary` moves it and appends a
//!   `branch_summary`; `create_branched_session` copies the path to a leaf
//!   into a new file whose header names this one as `parentSession`, with
//!   the labels of the copied entries re-created after them.
//!
//! Safety, beyond Pi: a file is never written through a symlink (a new
//! file is created with `create_new`; an existing one must be a regular
//! file, checked before and after opening), and each line goes out in one
//! `write` on a file opened for appending, so concurrent writers never
//! interleave half lines. A file without a session header is refused
//! (Pi would truncate it and start over).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::message::Message;
use crate::session::{
    write_session, AgentMessage, BranchSummaryEntry, EntryBase, FileLists, LabelEntry,
    MessageEntry, ParsedSession, SessionEntry, SessionHeader, SessionTree, CURRENT_SESSION_VERSION,
};
use serde_json::{Map, Value};

/// Why a session file could not be read or written: the message names
/// the file or entry and the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionWriteError(pub String);

impl fmt::Display for SessionWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SessionWriteError {}

impl From<SessionWriteError> for String {
    fn from(error: SessionWriteError) -> Self {
        error.0
    }
}

/// A [`SessionWriteError`] with a formatted message.
macro_rules! werr {
    ($($arg:tt)*) => {
        SessionWriteError(alloc::format!($($arg)*))
    };
}

/// A session file being written.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    dir: PathBuf,
    cwd: String,
    entries: Vec<SessionEntry>,
    leaf: Option<String>,
    flushed: bool,
}

impl SessionWriter {
    /// A new session in `dir` (Pi's file name); nothing is written yet.
    pub fn create(dir: &Path, cwd: &str) -> Self {
        let mut w = Self::empty(PathBuf::new(), dir, cwd, None);
        let header = w.header().cloned();
        if let Some(h) = header {
            w.path = dir.join(format!(
                "{}_{}.jsonl",
                h.timestamp.replace([':', '.'], "-"),
                h.id
            ));
        }
        w
    }

    fn empty(path: PathBuf, dir: &Path, cwd: &str, parent: Option<String>) -> Self {
        let millis = now_millis();
        let header = SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id: uuid_v7(millis),
            timestamp: iso_time(millis),
            cwd: cwd.to_owned(),
            parent_session: parent,
            extra: Map::new(),
        };
        SessionWriter {
            path,
            dir: dir.to_owned(),
            cwd: cwd.to_owned(),
            entries: vec![SessionEntry::Session(header)],
            leaf: None,
            flushed: false,
        }
    }

    /// Resumes the session at `path`, or starts one there if no file is
    /// there (as `pi --session PATH` does). A version 1 or 2 file is
    /// migrated and rewritten, as Pi does.
    pub fn open(path: &Path, cwd: &str) -> Result<Self, SessionWriteError> {
        let dir = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_owned);
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Self::empty(path.to_owned(), &dir, cwd, None));
            }
            Err(e) => return Err(werr!("cannot read {}: {e}", path.display())),
            Ok(meta) if !meta.is_file() => {
                return Err(werr!(
                    "{} is not a regular file (symlinks are not followed)",
                    path.display()
                ))
            }
            Ok(_) => {}
        }
        let (file, _) = open_checked(path, false)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut &file, &mut bytes)
            .map_err(|e| werr!("cannot read {}: {e}", path.display()))?;
        let mut ids: HashSet<String> = HashSet::new();
        let session: ParsedSession =
            crate::session::parse_session_with_ids(&String::from_utf8_lossy(&bytes), &mut || {
                new_id(&mut ids)
            })
            .map_err(|e| werr!("{}: {e}", path.display()))?;
        let cwd = session.header().map_or(cwd.to_owned(), |h| h.cwd.clone());
        let leaf = session
            .entries
            .iter()
            .rev()
            .find(|e| !matches!(e, SessionEntry::Session(_)))
            .and_then(|e| e.id().map(str::to_owned));
        let w = SessionWriter {
            path: path.to_owned(),
            dir,
            cwd,
            entries: session.entries,
            leaf,
            flushed: true,
        };
        if session.migrated {
            w.rewrite()?;
        }
        Ok(w)
    }

    /// The file this session is (or will be) written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.entries.iter().find_map(|e| match e {
            SessionEntry::Session(h) => Some(h),
            _ => None,
        })
    }

    /// Every entry, the header first.
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entry new entries follow.
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    fn taken(&self) -> HashSet<String> {
        self.entries
            .iter()
            .filter_map(|e| e.id().map(str::to_owned))
            .collect()
    }

    fn base(&self) -> EntryBase {
        let mut taken = self.taken();
        EntryBase {
            id: new_id(&mut taken),
            parent_id: self.leaf.clone(),
            timestamp: iso_time(now_millis()),
        }
    }

    fn has(&self, id: &str) -> bool {
        SessionTree::new(&self.entries).index_of(id).is_some()
    }

    /// Appends an entry after the leaf (its `parentId` must be the leaf),
    /// makes it the leaf and writes it under Pi's policy. Returns its id.
    pub fn append(&mut self, entry: SessionEntry) -> Result<String, SessionWriteError> {
        let id = entry.id().unwrap_or_default().to_owned();
        self.entries.push(entry);
        self.leaf = Some(id.clone());
        self.persist()?;
        Ok(id)
    }

    /// Appends a message.
    pub fn append_message(&mut self, message: AgentMessage) -> Result<String, SessionWriteError> {
        let entry = SessionEntry::Message(MessageEntry {
            base: self.base(),
            message,
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// Sets (or with `None` clears) a label on an entry.
    pub fn append_label(
        &mut self,
        target: &str,
        label: Option<&str>,
    ) -> Result<String, SessionWriteError> {
        if !self.has(target) {
            return Err(werr!("entry {target} not found"));
        }
        let entry = SessionEntry::Label(LabelEntry {
            base: self.base(),
            target_id: target.to_owned(),
            label: label.map(str::to_owned),
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// Moves the leaf to `id`: the next entry starts a branch there.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionWriteError> {
        if !self.has(id) {
            return Err(werr!("entry {id} not found"));
        }
        self.leaf = Some(id.to_owned());
        Ok(())
    }

    /// Moves the leaf to `id` (`None`: before the first entry) and appends
    /// a `branch_summary` of the branch left behind.
    pub fn branch_with_summary(
        &mut self,
        id: Option<&str>,
        summary: &str,
    ) -> Result<String, SessionWriteError> {
        self.branch_with_summary_entry(id, summary, None, None)
    }

    /// [`branch_with_summary`](Self::branch_with_summary) with a summary
    /// [`generate_branch_summary`](crate::session::generate_branch_summary)
    /// made, as Pi's tree navigation writes it: `details` with its
    /// `readFiles` and `modifiedFiles`, and `fromHook: false`.
    pub fn branch_with_generated_summary(
        &mut self,
        id: Option<&str>,
        summary: &str,
        file_lists: &FileLists,
    ) -> Result<String, SessionWriteError> {
        let details = Some(file_lists.to_details());
        self.branch_with_summary_entry(id, summary, details, Some(Value::Bool(false)))
    }

    fn branch_with_summary_entry(
        &mut self,
        id: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<Value>,
    ) -> Result<String, SessionWriteError> {
        match id {
            Some(id) => self.branch(id)?,
            None => self.leaf = None,
        }
        let entry = SessionEntry::BranchSummary(BranchSummaryEntry {
            base: self.base(),
            from_id: Some(Value::String(id.unwrap_or("root").to_owned())),
            summary: summary.to_owned(),
            details,
            from_hook,
            extra: Map::new(),
        });
        self.append(entry)
    }

    /// Copies the path from the root to `leaf` into a new session file in
    /// this session's directory, whose header names this file as
    /// `parentSession`; labels on the copied entries are re-created after
    /// them. The new file is written only if it holds an assistant message
    /// (else when one is appended). Returns the new writer.
    pub fn create_branched_session(&self, leaf: &str) -> Result<SessionWriter, SessionWriteError> {
        let tree = SessionTree::new(&self.entries);
        let end = tree
            .index_of(leaf)
            .ok_or_else(|| werr!("entry {leaf} not found"))?;
        let path = tree
            .path(end)
            .map_err(|e| SessionWriteError(e.to_string()))?;
        let copied: Vec<SessionEntry> = path
            .iter()
            .map(|&i| self.entries[i].clone())
            .filter(|e| !matches!(e, SessionEntry::Label(_)))
            .collect();
        let mut new = Self::create(&self.dir, &self.cwd);
        if let Some(SessionEntry::Session(h)) = new.entries.first_mut() {
            h.parent_session = Some(self.path.display().to_string());
        }
        let mut ids: HashSet<String> = copied
            .iter()
            .filter_map(|e| e.id().map(str::to_owned))
            .collect();
        // The labels in effect, with the time each was set.
        let mut labels: Vec<(String, String, String)> = Vec::new();
        for e in &self.entries {
            if let SessionEntry::Label(l) = e {
                labels.retain(|(t, _, _)| *t != l.target_id);
                if let Some(text) = l.label.as_deref().filter(|t| !t.is_empty()) {
                    labels.push((
                        l.target_id.clone(),
                        text.to_owned(),
                        l.base.timestamp.clone(),
                    ));
                }
            }
        }
        let mut parent = copied.last().and_then(|e| e.id().map(str::to_owned));
        new.entries.extend(copied);
        for (target, text, timestamp) in labels {
            if !ids.contains(&target) {
                continue;
            }
            let id = new_id(&mut ids);
            new.entries.push(SessionEntry::Label(LabelEntry {
                base: EntryBase {
                    id: id.clone(),
                    parent_id: parent.take(),
                    timestamp,
                },
                target_id: target,
                label: Some(text),
                extra: Map::new(),
            }));
            parent = Some(id);
        }
        new.leaf = new
            .entries
            .iter()
            .rev()
            .find(|e| !matches!(e, SessionEntry::Session(_)))
            .and_then(|e| e.id().map(str::to_owned));
        if new.has_assistant() {
            new.rewrite()?;
            new.flushed = true;
        }
        Ok(new)
    }

    fn has_assistant(&self) -> bool {
        self.entries.iter().any(|e| {
            matches!(e, SessionEntry::Message(m) if matches!(m.message, AgentMessage::Llm(Message::Assistant(_))))
        })
    }

    fn persist(&mut self) -> Result<(), SessionWriteError> {
        if !self.has_assistant() {
            self.flushed = false;
            return Ok(());
        }
        let text = if self.flushed {
            write_session(&self.entries[self.entries.len() - 1..])
        } else {
            write_session(&self.entries)
        };
        append_text(&self.path, &text)?;
        self.flushed = true;
        Ok(())
    }

    /// Writes the whole file anew: into a new file beside it, then renamed
    /// over it.
    fn rewrite(&self) -> Result<(), SessionWriteError> {
        let tmp = self
            .path
            .with_extension(format!("jsonl.{:08x}.tmp", random_u64() as u32));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| werr!("cannot create {}: {e}", tmp.display()))?;
        file.write_all(write_session(&self.entries).as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| werr!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &self.path)
            .map_err(|e| werr!("cannot replace {}: {e}", self.path.display()))
    }
}

/// 8 hex characters not in `taken` (added to it); a full UUID after 100
/// collisions, as Pi does.
fn new_id(taken: &mut HashSet<String>) -> String {
    for _ in 0..100 {
        let id = format!("{:08x}", random_u64() as u32);
        if taken.insert(id.clone()) {
            return id;
        }
    }
    let id = uuid_v7(now_millis());
    taken.insert(id.clone());
    id
}

/// Opens a regular file that is not a symlink (checked before opening, and
/// after, by comparing the opened file with what was checked). With
/// `create`, a missing file is created with `create_new`, which never
/// follows a symlink.
fn open_checked(path: &Path, append: bool) -> Result<(File, bool), SessionWriteError> {
    let mut options = OpenOptions::new();
    if append {
        options.append(true);
    } else {
        options.read(true);
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && append => {
            let file = options
                .create_new(true)
                .open(path)
                .map_err(|e| werr!("cannot create {}: {e}", path.display()))?;
            Ok((file, true))
        }
        Err(e) => Err(werr!("cannot open {}: {e}", path.display())),
        Ok(meta) if !meta.is_file() => Err(werr!(
            "refusing to write {}: not a regular file (symlinks are not followed)",
            path.display()
        )),
        Ok(before) => {
            let file = options
                .open(path)
                .map_err(|e| werr!("cannot open {}: {e}", path.display()))?;
            let after = file
                .metadata()
                .map_err(|e| werr!("cannot open {}: {e}", path.display()))?;
            if !same_file(&before, &after) {
                return Err(werr!(
                    "refusing to write {}: it changed while being opened",
                    path.display()
                ));
            }
            Ok((file, false))
        }
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_file()
}

/// Appends whole lines in one `write` on a file opened for appending.
fn append_text(path: &Path, text: &str) -> Result<(), SessionWriteError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| werr!("cannot create {}: {e}", dir.display()))?;
    }
    let (mut file, _) = open_checked(path, true)?;
    file.write_all(text.as_bytes())
        .map_err(|e| werr!("cannot write {}: {e}", path.display()))
}

mod naming;
mod record;
// The tests write files: neither Miri's isolation nor WASI without a
// preopened directory has a file system (CI runs them natively).
#[cfg(all(test, not(miri), not(target_family = "wasm")))]
mod tests;

pub use naming::{default_session_dir, iso_time, most_recent_session, uuid_v7};
use naming::{now_millis, random_u64};
pub use record::SessionRecorder;
