//! The sandbox against a real temporary tree, with both resolvers: the
//! paths a model might try, what a race with another process swapping
//! links can reach, FIFOs, and the time limit.
//!
//! Test code only: `sandbox.rs` declares this module under `#[cfg(test)]`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::beneath::Resolver;
use super::*;

/// How many times the race test runs each of its calls, per resolver.
const RACE_ATTEMPTS: usize = 2000;
/// The time limit of the tests' calls: far above what a call takes, so
/// only a hang reaches it.
const LIMIT: Duration = Duration::from_secs(20);

/// Every resolver this system has.
fn resolvers() -> Vec<Resolver> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    return vec![Resolver::Openat2, Resolver::Walk];
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    return vec![Resolver::Walk];
}

fn sandbox(root: &Path, resolver: Resolver) -> Sandbox {
    Sandbox {
        resolver,
        ..Sandbox::new(Some(root), LIMIT).expect("the root opens")
    }
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("agentstream-sandbox-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// What the outside holds: a secret under the same names as inside.
fn is_outside(text: &str) -> bool {
    text.contains("SECRET") || text.contains("outside-only")
}

/// How one kind of call fared in the race.
#[derive(Debug, Default)]
struct Tally {
    inside: usize,
    refused: usize,
    leaked: usize,
}

impl Tally {
    fn add(&mut self, result: &Result<String, String>) {
        match result {
            Ok(text) if is_outside(text) => self.leaked += 1,
            Ok(_) => self.inside += 1,
            Err(e) if is_outside(e) => self.leaked += 1,
            Err(_) => self.refused += 1,
        }
    }
}

/// A root whose entries another thread swaps, with `renameat2`'s
/// `RENAME_EXCHANGE`, between an inside target and an outside one:
/// `dir` (a directory) with `dir-swap` (a symlink to `outside`),
/// `file.txt` (a file) with `file-swap` (a symlink to a secret), and
/// `link` (a symlink to `inner`) with `link-swap` (a symlink to
/// `outside`). `outside` holds the same names as `dir`, with secrets.
#[cfg(target_os = "linux")]
#[test]
fn a_link_swapped_during_the_call_never_reaches_outside_the_root() {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let base = scratch("race");
    let (root, outside) = (base.join("root"), base.join("outside"));
    for dir in [root.join("dir"), root.join("inner"), outside.clone()] {
        std::fs::create_dir_all(&dir).unwrap();
    }
    std::fs::write(outside.join("inside.txt"), "SECRET").unwrap();
    std::fs::write(outside.join("outside-only.txt"), "").unwrap();
    for dir in ["dir", "inner"] {
        std::fs::write(root.join(dir).join("inside.txt"), "inside").unwrap();
        std::fs::write(root.join(dir).join("inside-only.txt"), "").unwrap();
    }
    std::fs::write(root.join("file.txt"), "inside").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dir-swap")).unwrap();
    std::os::unix::fs::symlink(outside.join("inside.txt"), root.join("file-swap")).unwrap();
    std::os::unix::fs::symlink("inner", root.join("link")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link-swap")).unwrap();

    for resolver in resolvers() {
        let sandbox = sandbox(&root, resolver);
        let (mut reads, mut lists) = (Tally::default(), Tally::default());
        let mut swaps = 0;
        // One pair at a time, so each is swapped as often as the machine can.
        for (name, swap, read, list) in [
            ("dir", "dir-swap", Some("dir/inside.txt"), Some("dir")),
            ("file.txt", "file-swap", Some("file.txt"), None),
            ("link", "link-swap", Some("link/inside.txt"), Some("link")),
        ] {
            let stop = Arc::new(AtomicBool::new(false));
            // Two swappers, so one runs whichever core the tool is on.
            let swappers: Vec<_> = (0..2)
                .map(|_| {
                    let (stop, name, swap) = (stop.clone(), root.join(name), root.join(swap));
                    std::thread::spawn(move || {
                        let mut swaps = 0;
                        while !stop.load(Ordering::Relaxed) {
                            renameat_with(CWD, &name, CWD, &swap, RenameFlags::EXCHANGE)
                                .expect("RENAME_EXCHANGE");
                            swaps += 1;
                        }
                        swaps
                    })
                })
                .collect();
            block_on(async {
                for _ in 0..RACE_ATTEMPTS {
                    if let Some(path) = read {
                        reads.add(&sandbox.read(path).await);
                    }
                    if let Some(path) = list {
                        lists.add(&sandbox.list(path).await);
                    }
                }
            });
            stop.store(true, Ordering::Relaxed);
            for swapper in swappers {
                swaps += swapper.join().unwrap();
            }
        }
        let report = format!(
            "{resolver:?}: {} reads: {reads:?}; {} ls: {lists:?}; {swaps} swaps",
            3 * RACE_ATTEMPTS,
            2 * RACE_ATTEMPTS,
        );
        eprintln!("race: {report}");
        assert_eq!((reads.leaked, lists.leaked), (0, 0), "{report}");
        assert!(
            reads.inside > 0 && lists.inside > 0,
            "some calls see the inside: {report}"
        );
    }
}

/// A root with files, a subdirectory, links that stay inside and links
/// that leave (to a secret beside the root, `/proc`, `/dev/zero`), link
/// loops, a FIFO, a 10 GB sparse file and invalid UTF-8.
fn hostile_tree(name: &str) -> PathBuf {
    let base = scratch(name);
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(base.join("secret.txt"), "TOP SECRET").unwrap();
    std::fs::write(root.join("README.md"), "# inside\n").unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inner").unwrap();
    std::fs::write(root.join("bad-utf8.txt"), b"ok \xff\xfe end").unwrap();
    std::fs::write(root.join("ansi.txt"), "\x1b]0;pwned\x07\x1b[2J").unwrap();
    std::fs::File::create(root.join("sparse.bin"))
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    };
    link(base.join("secret.txt").to_str().unwrap(), "escape");
    link("../secret.txt", "climb");
    link("sub/../../secret.txt", "climb-late");
    link("/proc/self/root/etc/passwd", "proc-root");
    link("/proc/self/fd/0", "proc-fd");
    link("/dev/zero", "zero");
    link("/", "slash");
    link("sub/inner.txt", "inner-link");
    link("../README.md", "sub/back");
    link("sub", "sub-link");
    link(root.to_str().unwrap(), "self-absolute");
    link("loop-b", "loop-a");
    link("loop-a", "loop-b");
    link("itself", "itself");
    root
}

#[test]
fn paths_that_leave_the_root_are_refused_by_both_resolvers() {
    let root = hostile_tree("hostile");
    for resolver in resolvers() {
        let sandbox = sandbox(&root, resolver);
        let read = |path: &str| block_on(sandbox.read(path));
        let list = |path: &str| block_on(sandbox.list(path));
        let refused = |result: Result<String, String>, wanted: &str, path: &str| {
            let error = result.expect_err(path);
            assert!(
                !error.contains("TOP SECRET"),
                "{resolver:?} {path}: {error}"
            );
            assert!(error.contains(wanted), "{resolver:?} {path}: {error}");
        };
        for path in ["../secret.txt", "sub/../../secret.txt", "sub/..", "./.."] {
            refused(read(path), "\"..\" leaves the root", path);
        }
        let absolute = root.parent().unwrap().join("secret.txt");
        for path in [absolute.to_str().unwrap(), "/etc/passwd", "//etc/passwd"] {
            refused(read(path), "absolute paths are not allowed", path);
        }
        for path in [
            "escape",
            "climb",
            "climb-late",
            "proc-root",
            "proc-fd",
            "zero",
            "slash/etc/passwd",
            "self-absolute/README.md",
        ] {
            refused(read(path), "resolves outside the root", path);
        }
        for path in ["slash", "climb", "self-absolute"] {
            refused(list(path), "resolves outside the root", path);
        }
        refused(read("with\0nul"), "NUL byte", "nul");
        refused(read(""), "empty path", "empty");
        let long = "a/".repeat(3000);
        refused(read(&long), "the longest taken is 4095", "long");
        let long_name = "n".repeat(300);
        refused(read(&long_name), "too long", "a 300-byte name");
        for path in ["loop-a", "itself"] {
            refused(read(path), "symbolic links", path);
        }
        // `..\` is a name on unix, not a way up.
        refused(read("..\\secret.txt"), "No such file", "..\\");
        refused(read("missing.txt"), "No such file", "missing");
        refused(read("README.md/"), "Not a directory", "README.md/");
        refused(read("sub"), "not a file (a directory)", "sub");
        refused(read("fifo"), "not a file (a FIFO)", "fifo");
        refused(list("fifo"), "Not a directory", "fifo");
        refused(list("README.md"), "Not a directory", "README.md");

        assert_eq!(read("inner-link").as_deref(), Ok("inner"), "{resolver:?}");
        assert_eq!(
            read("sub/back").as_deref(),
            Ok("# inside\n"),
            "{resolver:?}"
        );
        assert_eq!(read("./sub//inner.txt").as_deref(), Ok("inner"));
        assert_eq!(read("sub-link/inner.txt").as_deref(), Ok("inner"));
        assert_eq!(list("sub-link").as_deref(), Ok("back@\ndeeper/\ninner.txt"));
        assert_eq!(list("sub/").as_deref(), Ok("back@\ndeeper/\ninner.txt"));
        assert_eq!(list("sub/deeper/.").as_deref(), Ok(""));
        assert_eq!(
            read("bad-utf8.txt").as_deref(),
            Ok("ok \u{fffd}\u{fffd} end")
        );
        // Escape sequences come back as they are; the printer escapes them.
        assert_eq!(read("ansi.txt").as_deref(), Ok("\x1b]0;pwned\x07\x1b[2J"));
        let sparse = read("sparse.bin").unwrap();
        let note = "\n[cut: showing the first 65536 of 10737418240 bytes]";
        assert!(sparse.ends_with(note), "{resolver:?}");
        assert_eq!(sparse.len(), MAX_READ_BYTES + note.len());
        let listing = list(".").unwrap();
        assert!(listing.starts_with("README.md\nansi.txt\nbad-utf8.txt\n"));
        assert!(listing.contains("\nescape@\n") && listing.contains("\nfifo\n"));
        assert!(listing.contains("\nsub/\n") && listing.contains("\nzero@"));
    }
}

#[test]
fn the_walk_holds_a_bounded_number_of_directories() {
    let root = scratch("deep");
    let deep: PathBuf = std::iter::repeat_n("d", 300).collect();
    std::fs::create_dir_all(root.join(&deep)).unwrap();
    let sandbox = sandbox(&root, Resolver::Walk);
    let error = block_on(sandbox.list(deep.to_str().unwrap())).unwrap_err();
    assert!(
        error.ends_with("more than 256 nested directories"),
        "{error}"
    );
    let shallow: PathBuf = std::iter::repeat_n("d", 200).collect();
    assert_eq!(
        block_on(sandbox.list(shallow.to_str().unwrap())).as_deref(),
        Ok("d/")
    );
}

#[test]
fn a_long_listing_is_cut_at_the_first_entries_in_order() {
    let root = scratch("many");
    let mut names: Vec<String> = (0..1500)
        .map(|i| format!("f{:04}", (i * 7919) % 1500))
        .collect();
    for name in &names {
        std::fs::write(root.join(name), "").unwrap();
    }
    names.sort();
    for resolver in resolvers() {
        let listing = block_on(sandbox(&root, resolver).list(".")).unwrap();
        let (entries, note) = listing.rsplit_once('\n').unwrap();
        assert_eq!(entries.lines().collect::<Vec<_>>(), names[..MAX_LS_ENTRIES]);
        assert_eq!(note, "[cut: showing 1000 of 1500 entries]");
    }
}

/// A FIFO swapped with a file (`RENAME_EXCHANGE`) in a loop while `read`
/// runs: every call ends, with the file's text or a refusal, never by
/// reaching the time limit (the open does not block).
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_swapped_in_is_refused_without_blocking() {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let root = scratch("fifo-race");
    std::fs::write(root.join("file.txt"), "inside").unwrap();
    rustix::fs::mknodat(
        CWD,
        root.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    for resolver in resolvers() {
        let sandbox = sandbox(&root, resolver);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, a, b) = (stop.clone(), root.join("file.txt"), root.join("fifo"));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("exchange");
                }
            })
        };
        let (mut texts, mut fifos, mut others) = (0, 0, Vec::new());
        block_on(async {
            for _ in 0..RACE_ATTEMPTS {
                match sandbox.read("file.txt").await {
                    Ok(text) if text == "inside" => texts += 1,
                    Err(e) if e == "file.txt: not a file (a FIFO)" => fifos += 1,
                    other => others.push(other),
                }
            }
        });
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        eprintln!("fifo race: {resolver:?}: {texts} texts, {fifos} FIFOs refused, {others:?}");
        assert!(others.is_empty(), "{resolver:?}: {others:?}");
    }
}

#[test]
fn a_call_past_the_time_limit_ends_in_an_error_result() {
    let root = scratch("stuck");
    let sandbox = Sandbox {
        time_limit: Duration::from_millis(50),
        ..sandbox(&root, Resolver::best())
    };
    let (release, stuck) = std::sync::mpsc::channel::<()>();
    // The runtime is single-threaded, as `agent`'s: the limit can only
    // fire because the stuck call is not on its thread.
    let result = block_on(async {
        let result = sandbox
            .blocking("slow.txt", move |_, _, _| {
                let _ = stuck.recv();
                Ok(())
            })
            .await;
        drop(release);
        result
    });
    assert_eq!(
        result,
        Err("slow.txt: gave up after 50ms (--tool-timeout): the file system did not answer".into())
    );
}

#[test]
fn control_characters_in_names_cannot_forge_entries() {
    let root = scratch("control");
    std::fs::write(root.join("a\nforged"), b"").unwrap();
    std::fs::write(root.join("\u{1b}[31mred"), b"").unwrap();
    for resolver in resolvers() {
        let listing = block_on(sandbox(&root, resolver).list(".")).unwrap();
        assert_eq!(
            listing.lines().collect::<Vec<_>>(),
            ["\\u{1b}[31mred", "a\\nforged"],
            "{resolver:?}"
        );
    }
}
