//! A cassette directory opened once, its files opened beneath it, and
//! the error naming the file that could not be read.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use agentstream_beneath::{list_dir, open_file, Refusal, Resolver, RootDir};

/// A cassette that cannot be read.
#[derive(Debug)]
pub struct CassetteError {
    pub(super) path: PathBuf,
    message: String,
    pub(super) source: Option<io::Error>,
}

impl CassetteError {
    pub(super) fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
            source: None,
        }
    }

    pub(super) fn io(path: &Path, source: io::Error) -> Self {
        Self {
            path: path.to_owned(),
            message: "cannot read".into(),
            source: Some(source),
        }
    }
}

impl std::fmt::Display for CassetteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl CassetteError {
    /// Whether the file was not there.
    pub(super) fn is_not_found(&self) -> bool {
        self.source.as_ref().map(io::Error::kind) == Some(io::ErrorKind::NotFound)
    }

    /// The error with its cause's text (`…: cannot read: No such file`).
    pub(crate) fn report(&self) -> String {
        match &self.source {
            Some(source) => format!("{self}: {source}"),
            None => self.to_string(),
        }
    }
}

impl std::error::Error for CassetteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl CassetteError {
    /// The file at `path` was not opened: outside the directory, not a
    /// regular file, or the system's error.
    pub(super) fn refused(path: &Path, refusal: Refusal) -> Self {
        match refusal {
            Refusal::Io(source) => Self::io(path, source),
            refusal => Self::new(path, refusal.to_string()),
        }
    }
}

/// A cassette directory, opened once: every file of its cassettes is
/// opened beneath this handle, never through a symlink that leads out of
/// it, and only when it is a regular file (a FIFO or a device is refused
/// without blocking).
pub(crate) struct CassetteDir {
    root: RootDir,
    pub(super) path: PathBuf,
}

impl CassetteDir {
    /// Opens `dir` (following symlinks: the user chose it).
    pub(crate) fn open(dir: &Path) -> Result<Self, CassetteError> {
        Ok(Self {
            root: RootDir::open(dir).map_err(|e| CassetteError::io(dir, e))?,
            path: dir.to_owned(),
        })
    }

    /// The regular file at `relative` beneath the directory, opened
    /// without blocking on what is not one, and its size.
    pub(super) fn file(&self, relative: &str) -> Result<(fs::File, u64), CassetteError> {
        open_file(&self.root, relative, Resolver::best())
            .map_err(|refusal| CassetteError::refused(&self.path.join(relative), refusal))
    }

    /// The bytes of the regular file at `relative` beneath the directory.
    pub(super) fn read(&self, relative: &str) -> Result<Vec<u8>, CassetteError> {
        let path = self.path.join(relative);
        let (mut file, size) = self.file(relative)?;
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| CassetteError::io(&path, e))?;
        Ok(bytes)
    }

    /// The names of the entries that may be cassettes (directories, and
    /// symlinks, which are resolved beneath the directory when opened),
    /// and those of the others (files, FIFOs, sockets, devices), which
    /// cannot be.
    pub(super) fn entries(&self) -> Result<(Vec<String>, Vec<String>), CassetteError> {
        let (mut names, mut others) = (Vec::new(), Vec::new());
        list_dir(&self.root, ".", Resolver::best(), |mut name| {
            if name.ends_with('/') || name.ends_with('@') {
                name.pop();
                names.push(name);
            } else {
                others.push(name);
            }
        })
        .map_err(|refusal| CassetteError::refused(&self.path, refusal))?;
        Ok((names, others))
    }
}

/// Whether a cassette's `request.json` was not found: the entry is not a
/// cassette (a directory without one, or a symlink to a file).
pub(super) fn not_a_cassette(error: &CassetteError) -> bool {
    error.source.as_ref().is_some_and(|e| {
        matches!(
            e.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
        )
    })
}
