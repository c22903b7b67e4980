//! How the process's allocator gives memory back (issue 42, High 5).
//!
//! glibc's `malloc` raises its mmap threshold each time a large mmapped
//! block is freed. After a burst of large request bodies (100 connections
//! each sending 25 MB of a body, then closing: attack F of
//! `benches/serve_attacks.py`), later buffers of that size come from the
//! worker threads' arenas, which glibc shrinks only from their top, so
//! between 27 and 142 MB stayed resident after every connection closed,
//! depending on the run. Fixing the trim threshold at glibc's own default
//! (128 KiB) turns the dynamic adjustment off: the same attack leaves
//! 25–28 MB every run (figures in `benches/RESULTS.md`, "Memory given back
//! after partial bodies").
//!
//! This is the binary's choice, not the library's: `agentstream-serve`
//! embedded in another program leaves that program's allocator alone, and
//! its documentation names the environment variable that does the same
//! (`MALLOC_TRIM_THRESHOLD_=131072`).

/// glibc's default trim threshold, made fixed.
#[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
const TRIM_THRESHOLD: libc::c_int = 128 * 1024;

/// Fixes glibc's trim threshold (and with it the mmap threshold) at their
/// defaults, so memory freed after a burst goes back to the system. Does
/// nothing on other platforms, and when the user set
/// `MALLOC_TRIM_THRESHOLD_` or `MALLOC_MMAP_THRESHOLD_` themselves.
/// Returns whether the setting was applied.
pub(crate) fn give_back_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
    {
        let chosen = ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"]
            .iter()
            .any(|name| std::env::var_os(name).is_some());
        if chosen {
            return false;
        }
        // SAFETY: `mallopt` only changes a parameter of glibc's allocator;
        // it reads no memory of ours and is safe to call from any thread at
        // any time (glibc takes its arena locks). `M_TRIM_THRESHOLD` is a
        // parameter glibc defines, and 128 KiB is its documented default,
        // inside the accepted range.
        let applied = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) };
        applied == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", not(miri))))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
    fn the_threshold_is_applied_on_glibc() {
        // glibc answers 1 when it accepted the parameter and its value; a
        // wrong constant or an out-of-range value answers 0.
        if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none()
            && std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none()
        {
            assert!(super::give_back_freed_memory());
        }
    }
}
