//! The `agent` tools' file access, confined to a root directory: reading a
//! file (cut at [`MAX_READ_BYTES`]) and listing a directory (cut at
//! [`MAX_LS_ENTRIES`]) at a path the model gave.
//!
//! A path is resolved and opened in one step beneath a handle of the root,
//! and what was opened is checked on the handle (see the
//! `agentstream-beneath` crate for how, and which symlinks are followed): a link or directory swapped in by
//! another process can never lead outside the root, and a FIFO or device
//! is refused without blocking. The file system is touched only on
//! tokio's blocking pool, never on the runtime's thread (which, in `agent`,
//! is the only one: Ctrl-C keeps working), and a call that takes longer
//! than the time limit (`--tool-timeout`) ends in an error result.
//!
//! On a system that is not unix, [`Sandbox::new`] fails: the tools need
//! `openat` to confine themselves, and `agent` exits with that message.

use std::collections::BinaryHeap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentstream_beneath as beneath;
use beneath::{list_dir, open_file, Resolver, RootDir};

/// The most bytes `read` returns of a file; the rest is cut with a note.
pub const MAX_READ_BYTES: usize = 64 * 1024;
/// The most entries `ls` lists; the rest is cut with a note.
pub const MAX_LS_ENTRIES: usize = 1000;
/// The longest path taken, in bytes (Linux's `PATH_MAX` less the NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// The directory the tools are confined to, and their time limit.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: Arc<RootDir>,
    resolver: Resolver,
    time_limit: Duration,
}

impl Sandbox {
    /// The sandbox of `dir` (default: the current directory), whose calls
    /// give up after `time_limit`.
    pub fn new(dir: Option<&Path>, time_limit: Duration) -> Result<Self, String> {
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
        };
        let root = RootDir::open(&dir).map_err(|e| format!("--root {}: {e}", dir.display()))?;
        Ok(Self {
            root: Arc::new(root),
            resolver: Resolver::best(),
            time_limit,
        })
    }

    /// The text of the file at `relative`, cut at [`MAX_READ_BYTES`];
    /// invalid UTF-8 shows as U+FFFD.
    pub async fn read(&self, relative: &str) -> Result<String, String> {
        self.blocking(relative, read_capped).await
    }

    /// The entries of the directory at `relative`, sorted, one a line,
    /// cut at [`MAX_LS_ENTRIES`]; directories end in `/`, symlinks in `@`
    /// (never followed).
    pub async fn list(&self, relative: &str) -> Result<String, String> {
        self.blocking(relative, list_capped).await
    }

    /// Runs `work` on `relative` on the blocking pool, within the time
    /// limit. A call past the limit is left to finish on its thread; its
    /// result is dropped.
    async fn blocking<T, F>(&self, relative: &str, work: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&RootDir, &str, Resolver) -> Result<T, Refusal> + Send + 'static,
    {
        check(relative).map_err(|refusal| refusal.message(relative))?;
        let (root, resolver, path) = (self.root.clone(), self.resolver, relative.to_owned());
        let task = tokio::task::spawn_blocking(move || {
            work(&root, &path, resolver).map_err(|refusal| refusal.message(&path))
        });
        match tokio::time::timeout(self.time_limit, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(format!("{relative}: the tool failed: {e}")),
            Err(_) => Err(format!(
                "{relative}: gave up after {:?} (--tool-timeout): the file system did not answer",
                self.time_limit
            )),
        }
    }
}

/// Why a path was not read or listed.
#[derive(Debug)]
pub enum Refusal {
    /// The path is empty.
    Empty,
    /// The path is absolute.
    Absolute,
    /// The path has a `..` component.
    ParentDir,
    /// The path holds a NUL byte.
    Nul,
    /// The path is longer than [`MAX_PATH_BYTES`].
    TooLong,
    /// The path, through a symlink, leads outside the root.
    Outside,
    /// `read` opened something other than a regular file (a FIFO, a
    /// device, a socket or a directory); names the kind.
    NotAFile(&'static str),
    /// The system's answer (not found, permission, a loop...).
    Io(std::io::Error),
}

impl From<beneath::Refusal> for Refusal {
    fn from(refusal: beneath::Refusal) -> Self {
        match refusal {
            beneath::Refusal::Outside => Self::Outside,
            beneath::Refusal::NotAFile(kind) => Self::NotAFile(kind),
            beneath::Refusal::Io(e) => Self::Io(e),
        }
    }
}

impl Refusal {
    /// The message for the model, naming the path it gave.
    fn message(&self, relative: &str) -> String {
        match self {
            Self::Empty => "empty path".to_owned(),
            Self::Absolute => format!(
                "refused: {relative}: absolute paths are not allowed; give a path relative to the root"
            ),
            Self::ParentDir => format!("refused: {relative}: \"..\" leaves the root"),
            Self::Nul => format!("refused: {relative:?}: the path contains a NUL byte"),
            Self::TooLong => format!(
                "refused: a path of {} bytes: the longest taken is {MAX_PATH_BYTES}",
                relative.len()
            ),
            Self::Outside => {
                format!("refused: {relative}: resolves outside the root (through a symlink)")
            }
            Self::NotAFile(kind) => format!("{relative}: not a file ({kind})"),
            Self::Io(e) => format!("{relative}: {e}"),
        }
    }
}

/// The checks made on the path's text before anything is opened.
fn check(relative: &str) -> Result<(), Refusal> {
    if relative.is_empty() {
        return Err(Refusal::Empty);
    }
    if relative.contains('\0') {
        return Err(Refusal::Nul);
    }
    if relative.len() > MAX_PATH_BYTES {
        return Err(Refusal::TooLong);
    }
    // Path::components on unix: `..\` and `C:` are names.
    for component in Path::new(relative).components() {
        match component {
            std::path::Component::Normal(_) | std::path::Component::CurDir => {}
            std::path::Component::ParentDir => return Err(Refusal::ParentDir),
            std::path::Component::RootDir | std::path::Component::Prefix(_) => {
                return Err(Refusal::Absolute)
            }
        }
    }
    Ok(())
}

fn read_capped(root: &RootDir, relative: &str, resolver: Resolver) -> Result<String, Refusal> {
    let (file, size) = open_file(root, relative, resolver)?;
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    let cut = bytes.len() > MAX_READ_BYTES;
    bytes.truncate(MAX_READ_BYTES);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        // A character split at the cut shows as U+FFFD; drop it.
        if text.ends_with('\u{fffd}') {
            text.pop();
        }
        text.push_str(&format!(
            "\n[cut: showing the first {MAX_READ_BYTES} of {size} bytes]"
        ));
    }
    Ok(text)
}

/// A name as the listing shows it: a control character (a newline that
/// would forge another entry, a terminal escape) as its Rust escape
/// (`\n`, `\u{1b}`).
fn shown(name: String) -> String {
    if !name.chars().any(char::is_control) {
        return name;
    }
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The listing, holding only the first [`MAX_LS_ENTRIES`] names in
/// order at any time, however many the directory has; control characters
/// in names escaped (see [`shown`]).
fn list_capped(root: &RootDir, relative: &str, resolver: Resolver) -> Result<String, Refusal> {
    let mut first = BinaryHeap::with_capacity(MAX_LS_ENTRIES + 1);
    let mut total = 0usize;
    list_dir(root, relative, resolver, |name| {
        total += 1;
        first.push(shown(name));
        if first.len() > MAX_LS_ENTRIES {
            first.pop();
        }
    })?;
    let mut text = first.into_sorted_vec().join("\n");
    if total > MAX_LS_ENTRIES {
        text.push_str(&format!(
            "\n[cut: showing {MAX_LS_ENTRIES} of {total} entries]"
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
