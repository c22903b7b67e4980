//! The sandbox against a real temporary tree, with both resolvers: the
//! paths a model might try, what a race with another process swapping
//! links can reach, FIFOs, and the time limit.

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
