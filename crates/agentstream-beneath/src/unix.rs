//! Opening a path beneath a directory handle, in one step, on unix.
//!
//! Resolution and opening are one operation, so no link or directory
//! swapped in between a check and the open can lead outside the root:
//!
//! - On Linux, `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`:
//!   the kernel follows relative symlinks as long as they stay beneath
//!   the root and fails with `EXDEV` on an absolute one or on a `..` that
//!   would leave it; `/proc` magic links are refused.
//! - Elsewhere (or where `openat2` is missing or filtered), a walk from the
//!   root's handle, one component at a time, each opened with `openat` and
//!   `O_NOFOLLOW` relative to the directory handle before it. A component
//!   that turns out to be a symlink is read with `readlinkat` and its
//!   target resolved the same way from the directory holding it: an
//!   absolute target is refused, `..` steps back to a handle already held
//!   (never to the kernel's `..`), and a `..` above the root is refused.
//!   At most [`MAX_LINKS`] links are followed per path and [`MAX_DEPTH`]
//!   directories held, so the walk's cost is bounded.
//!
//! Both follow the same rule: a symlink is followed when what it names
//! stays beneath the root, and refused when it is absolute or climbs out.
//! (So an absolute link that happens to point back into the root is
//! refused too: whether it stays inside cannot be known without resolving
//! the root's own path, which could change meanwhile.)
//!
//! Every open is non-blocking (`O_NONBLOCK`) and makes no controlling
//! terminal (`O_NOCTTY`), and what was opened is checked on the handle
//! (`fstat`), never by name: a FIFO, a device or a socket is refused
//! without blocking, whenever it was swapped in.
//!
//! What this does not cover: a hard link inside the root to a file
//! elsewhere is inside the root by every path-based rule (the kernel's
//! too), and a directory another process moves out of the root while the
//! walk holds it keeps the contents that process put there.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{fcntl_getfl, fcntl_setfl, fstat, openat, readlinkat, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Refusal;

/// The most symlinks the walk follows in one path (Linux's limit).
pub const MAX_LINKS: usize = 40;
/// The most nested directories the walk holds open at once.
pub const MAX_DEPTH: usize = 256;

/// How a path is resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` with `RESOLVE_BENEATH` (Linux 5.6 and later), falling
    /// back to [`Resolver::Walk`] where the kernel lacks it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    Openat2,
    /// One component at a time with `openat` and `O_NOFOLLOW`.
    // On Linux the walk runs as `openat2`'s fallback, reached without this
    // variant; the tests choose it to run every case through both.
    Walk,
}

impl Resolver {
    /// The best this system offers.
    pub fn best() -> Self {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        return Self::Openat2;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        return Self::Walk;
    }
}

impl From<Errno> for Refusal {
    fn from(errno: Errno) -> Self {
        Self::Io(errno.into())
    }
}

/// The handle of the directory the tools are confined to.
#[derive(Debug)]
pub struct RootDir(OwnedFd);

impl RootDir {
    /// Opens `dir` (following symlinks: the user chose it).
    pub fn open(dir: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOCTTY;
        Ok(Self(rustix::fs::open(dir, flags, Mode::empty())?))
    }
}

/// The regular file at `relative` beneath `root`, opened for reading,
/// with its size.
pub fn open_file(
    root: &RootDir,
    relative: &str,
    resolver: Resolver,
) -> Result<(File, u64), Refusal> {
    let fd = open(root, relative, OFlags::empty(), resolver)?;
    let stat = fstat(&fd)?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        other => return Err(Refusal::NotAFile(kind_name(other))),
    }
    // A regular file's reads do not block; clear the flag all the same.
    let flags = fcntl_getfl(&fd)?;
    fcntl_setfl(&fd, flags - OFlags::NONBLOCK)?;
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    Ok((File::from(fd), size))
}

/// Calls `entry` with the name of every entry of the directory at
/// `relative` beneath `root` (not `.` and `..`), suffixed `/` for a
/// directory and `@` for a symlink (never followed).
pub fn list_dir(
    root: &RootDir,
    relative: &str,
    resolver: Resolver,
    mut entry: impl FnMut(String),
) -> Result<(), Refusal> {
    let fd = open(root, relative, OFlags::DIRECTORY, resolver)?;
    let stat = fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return Err(Errno::NOTDIR.into());
    }
    let dir = rustix::fs::Dir::read_from(&fd)?;
    for item in dir {
        let item = item?;
        let bytes = item.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let kind = match item.file_type() {
            FileType::Unknown => {
                rustix::fs::statat(&fd, item.file_name(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.st_mode))
            }
            known => known,
        };
        let mut name = String::from_utf8_lossy(bytes).into_owned();
        match kind {
            FileType::Symlink => name.push('@'),
            FileType::Directory => name.push('/'),
            _ => {}
        }
        entry(name);
    }
    Ok(())
}

fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        FileType::Symlink => "a symlink",
        _ => "not a regular file",
    }
}

/// Creates the directory `name` (one component, not `.` or `..`) in
/// `dir` and opens it: fails when anything is there already, a symlink
/// included (never followed), so two processes never both get it.
pub fn create_dir(dir: &RootDir, name: &str) -> Result<RootDir, Refusal> {
    one_name(name)?;
    rustix::fs::mkdirat(&dir.0, name, Mode::RWXU | Mode::RWXG | Mode::RWXO)?;
    let flags =
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
    Ok(RootDir(openat(&dir.0, name, flags, Mode::empty())?))
}

/// Creates the file `name` (one component) in `dir` for writing: fails
/// when anything is there already, a symlink included (never followed).
pub fn create_file(dir: &RootDir, name: &str) -> Result<File, Refusal> {
    one_name(name)?;
    let flags = OFlags::WRONLY
        | OFlags::CREATE
        | OFlags::EXCL
        | OFlags::NOFOLLOW
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    let mode = Mode::RUSR | Mode::WUSR | Mode::RGRP | Mode::WGRP | Mode::ROTH | Mode::WOTH;
    Ok(File::from(openat(&dir.0, name, flags, mode)?))
}

/// Refuses a name that is not one entry of a directory.
fn one_name(name: &str) -> Result<(), Refusal> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(Refusal::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not the name of one directory entry"),
        )));
    }
    Ok(())
}

/// Opens `relative` beneath `root` without blocking, with `extra` flags
/// added to `O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC`. The caller
/// may check the path's text first; confinement does not depend on it.
fn open(
    root: &RootDir,
    relative: &str,
    extra: OFlags,
    resolver: Resolver,
) -> Result<OwnedFd, Refusal> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC | extra;
    match resolver {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        Resolver::Openat2 => linux::open(root.0.as_fd(), relative, flags),
        Resolver::Walk => walk(root.0.as_fd(), relative, flags),
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;

    use super::{walk, Refusal};

    /// Set once the kernel said it has no `openat2`.
    static MISSING: AtomicBool = AtomicBool::new(false);
    /// How often an `openat2` that met a concurrent rename is retried
    /// before the walk takes over.
    const RETRIES: usize = 16;

    pub fn open(root: BorrowedFd<'_>, relative: &str, flags: OFlags) -> Result<OwnedFd, Refusal> {
        if MISSING.load(Ordering::Relaxed) {
            return walk(root, relative, flags);
        }
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        for _ in 0..RETRIES {
            match openat2(root, relative, flags, Mode::empty(), resolve) {
                Ok(fd) => return Ok(fd),
                Err(Errno::XDEV) => return Err(Refusal::Outside),
                // A rename or mount somewhere in the system during the
                // lookup: the kernel asks to try again.
                Err(Errno::AGAIN | Errno::INTR) => continue,
                // No `openat2` (before Linux 5.6), or a seccomp filter
                // that refuses it (some container runtimes).
                Err(Errno::NOSYS) => {
                    MISSING.store(true, Ordering::Relaxed);
                    return walk(root, relative, flags);
                }
                Err(Errno::PERM) => return walk(root, relative, flags),
                Err(e) => return Err(e.into()),
            }
        }
        walk(root, relative, flags)
    }
}

/// How the walk opens a directory it passes through: `O_PATH` on Linux
/// (search permission is enough, as for the kernel's own lookup), read
/// access elsewhere.
#[cfg(any(target_os = "linux", target_os = "android"))]
const PASS_THROUGH: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const PASS_THROUGH: OFlags = OFlags::RDONLY;

/// The component-by-component walk (see the module's documentation).
fn walk(root: BorrowedFd<'_>, relative: &str, flags: OFlags) -> Result<OwnedFd, Refusal> {
    // The components still to resolve, the next one last. Empty
    // components and `.` are kept: they require what precedes them to be
    // a directory, as a trailing `/` does for the kernel.
    let mut pending: Vec<Vec<u8>> = relative
        .split('/')
        .rev()
        .map(|part| part.as_bytes().to_vec())
        .collect();
    // The directories passed through, beneath the root.
    let mut held: Vec<OwnedFd> = Vec::new();
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part.is_empty() || part == b"." {
            continue;
        }
        if part == b".." {
            if held.pop().is_none() {
                return Err(Refusal::Outside);
            }
            continue;
        }
        let here = held.last().map_or(root, AsFd::as_fd);
        let last = pending.is_empty();
        let open_flags = if last {
            flags | OFlags::NOFOLLOW
        } else {
            PASS_THROUGH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        match openat(here, part.as_slice(), open_flags, Mode::empty()) {
            Ok(fd) if last => return Ok(fd),
            Ok(fd) => {
                if held.len() == MAX_DEPTH {
                    return Err(Refusal::Io(io::Error::other(format!(
                        "more than {MAX_DEPTH} nested directories"
                    ))));
                }
                held.push(fd);
            }
            // `O_NOFOLLOW` fails on a symlink (`ELOOP` on Linux, other
            // codes elsewhere): read it, from the same directory handle.
            Err(error) => {
                let target = match readlinkat(here, part.as_slice(), Vec::new()) {
                    Ok(target) => target.into_bytes(),
                    // The open saw a symlink, which is no longer one
                    // (swapped back meanwhile): try the component again,
                    // counted as a link.
                    Err(Errno::INVAL)
                        if matches!(error, Errno::LOOP | Errno::MLINK) && links < MAX_LINKS =>
                    {
                        links += 1;
                        pending.push(part);
                        continue;
                    }
                    Err(_) => return Err(error.into()),
                };
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::LOOP.into());
                }
                if target.first() == Some(&b'/') {
                    return Err(Refusal::Outside);
                }
                if target.is_empty() {
                    return Err(Errno::NOENT.into());
                }
                pending.extend(target.split(|&b| b == b'/').rev().map(<[u8]>::to_vec));
            }
        }
    }
    // The path ended in `.`, `..` or `/`: open the directory reached.
    let here = held.last().map_or(root, AsFd::as_fd);
    Ok(openat(here, ".", flags, Mode::empty())?)
}
