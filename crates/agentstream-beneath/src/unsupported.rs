//! Where there is no unix `openat`: no root can be opened, so `agent`
//! and `serve`'s cassette directories refuse to start with this message
//! rather than read or write files they cannot confine.

use std::convert::Infallible;
use std::fs::File;
use std::io;
use std::path::Path;

use super::Refusal;

/// How a path is resolved beneath the root: nowhere, here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// No resolution is possible.
    Unsupported,
}

impl Resolver {
    /// The best this system offers.
    pub fn best() -> Self {
        Self::Unsupported
    }
}

/// A root that cannot be made.
#[derive(Debug)]
pub struct RootDir(Infallible);

impl RootDir {
    /// Always fails.
    pub fn open(_: &Path) -> io::Result<Self> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "confining files to a directory needs a unix system (paths beneath it are opened with openat)",
        ))
    }
}

/// Never called: there is no root.
pub fn open_file(root: &RootDir, _: &str, _: Resolver) -> Result<(File, u64), Refusal> {
    match root.0 {}
}

/// Never called: there is no root.
pub fn list_dir(
    root: &RootDir,
    _: &str,
    _: Resolver,
    _: impl FnMut(String),
) -> Result<(), Refusal> {
    match root.0 {}
}

/// Never called: there is no root.
pub fn create_dir(dir: &RootDir, _: &str) -> Result<RootDir, Refusal> {
    match dir.0 {}
}

/// Never called: there is no root.
pub fn create_file(dir: &RootDir, _: &str) -> Result<File, Refusal> {
    match dir.0 {}
}
