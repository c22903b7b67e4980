//! Files beneath a directory handle, never outside it: the confinement
//! shared by the `agent` command's file tools and by `serve`'s cassette
//! directories (replay and the recorder).
//!
//! A [`RootDir`] is a handle of the directory. [`open_file`] and
//! [`list_dir`] resolve a relative path and open it in one step beneath
//! that handle, and check what was opened on the handle: a symlink or a
//! directory swapped in by another process can never lead outside, and a
//! FIFO, a device or a socket is refused without blocking (see the `unix`
//! module for how). [`create_dir`] and [`create_file`] make a new entry
//! directly in a directory handle, exclusively and never through a
//! symlink.
//!
//! On a system that is not unix, [`RootDir::open`] fails: confinement
//! needs `openat`.
#![forbid(unsafe_code)]

use std::fmt;
use std::io;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(not(unix))]
mod unsupported;
#[cfg(not(unix))]
pub use unsupported::*;

/// Why a path beneath the root was not opened or created.
#[derive(Debug)]
// Without unix, nothing is opened, so nothing is found outside.
#[cfg_attr(not(unix), allow(dead_code))]
pub enum Refusal {
    /// The path, through a symlink, leads outside the root.
    Outside,
    /// What was opened is not a regular file (a FIFO, a device, a socket
    /// or a directory); names the kind.
    NotAFile(&'static str),
    /// The system's answer (not found, permission, a loop, already
    /// there...).
    Io(io::Error),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Outside => {
                f.write_str("refused: resolves outside its directory (through a symlink)")
            }
            Self::NotAFile(kind) => write!(f, "refused: not a file ({kind})"),
            Self::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Refusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Refusal {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

impl From<Refusal> for io::Error {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Io(error) => error,
            refusal => io::Error::other(refusal.to_string()),
        }
    }
}
