//! The `agent` tools' file access, confined to a root directory: resolving
//! a path the model gave, reading a file (cut at [`MAX_READ_BYTES`]) and
//! listing a directory (cut at [`MAX_LS_ENTRIES`]).

use std::fs;
use std::path::{Component, Path, PathBuf};

/// The most bytes `read` returns of a file; the rest is cut with a note.
pub const MAX_READ_BYTES: usize = 64 * 1024;
/// The most entries `ls` lists; the rest is cut with a note.
pub const MAX_LS_ENTRIES: usize = 1000;

/// The directory the tools are confined to, canonicalized.
#[derive(Debug, Clone)]
pub struct Sandbox(PathBuf);

impl Sandbox {
    /// The sandbox of `dir` (default: the current directory).
    pub fn new(dir: Option<&Path>) -> Result<Self, String> {
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
        };
        let canonical = dir
            .canonicalize()
            .map_err(|e| format!("--root {}: {e}", dir.display()))?;
        if !canonical.is_dir() {
            return Err(format!("--root {}: not a directory", dir.display()));
        }
        Ok(Self(canonical))
    }

    /// The text of the file at `relative`, cut at [`MAX_READ_BYTES`].
    pub async fn read(&self, relative: &str) -> Result<String, String> {
        let path = self.resolve(relative)?;
        if !path.is_file() {
            return Err(format!("{relative}: not a file"));
        }
        read_capped(&path, relative)
    }

    /// The entries of the directory at `relative`, sorted, one a line;
    /// directories end in `/`, symlinks in `@` (never followed).
    pub async fn list(&self, relative: &str) -> Result<String, String> {
        let path = self.resolve(relative)?;
        let entries = fs::read_dir(&path).map_err(|e| format!("{relative}: {e}"))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("{relative}: {e}"))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_symlink() => name.push('@'),
                Ok(kind) if kind.is_dir() => name.push('/'),
                _ => {}
            }
            names.push(name);
        }
        names.sort();
        let total = names.len();
        names.truncate(MAX_LS_ENTRIES);
        let mut text = names.join("\n");
        if total > MAX_LS_ENTRIES {
            text.push_str(&format!(
                "\n[cut: showing {MAX_LS_ENTRIES} of {total} entries]"
            ));
        }
        Ok(text)
    }

    /// The canonical path of `relative` inside the root, or why it is
    /// refused: an absolute path, a `..` component, or a path that
    /// resolves (through a symlink) outside the root. Nothing outside the
    /// root is ever opened.
    fn resolve(&self, relative: &str) -> Result<PathBuf, String> {
        let path = Path::new(relative);
        if relative.is_empty() {
            return Err("empty path".into());
        }
        for component in path.components() {
            match component {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!("refused: {relative}: \"..\" leaves the root"))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "refused: {relative}: absolute paths are not allowed; give a path relative to the root"
                    ))
                }
            }
        }
        let canonical = self
            .0
            .join(path)
            .canonicalize()
            .map_err(|e| format!("{relative}: {e}"))?;
        if !canonical.starts_with(&self.0) {
            return Err(format!(
                "refused: {relative}: resolves outside the root (through a symlink)"
            ));
        }
        Ok(canonical)
    }
}

fn read_capped(path: &Path, relative: &str) -> Result<String, String> {
    use std::io::Read;
    let file = fs::File::open(path).map_err(|e| format!("{relative}: {e}"))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{relative}: {e}"))?;
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
