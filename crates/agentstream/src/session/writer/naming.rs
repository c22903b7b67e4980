//! Where Pi keeps sessions and what it calls them: the sessions directory
//! of a working directory, the newest session in it (`pi -c`), the file
//! name's ISO time and the UUIDv7 session id.

use std::collections::hash_map::RandomState;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use alloc::format;
use alloc::string::String;
use serde_json::Value;

/// 64 bits from the standard library's per-process random hash keys, a
/// counter and the clock: not for secrets, enough for ids.
pub(super) fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// The clock in Unix milliseconds (0 before 1970).
pub(super) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `new Date(millis).toISOString()` for times after 1970.
pub fn iso_time(millis: u64) -> String {
    let days = (millis / 86_400_000) as i64;
    let ms = millis % 86_400_000;
    // Civil from days (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A UUIDv7: 48 bits of Unix milliseconds, then random bits with the
/// version and variant set.
pub fn uuid_v7(millis: u64) -> String {
    let (a, b) = (random_u64(), random_u64());
    let hi = ((millis & 0xffff_ffff_ffff) << 16) | 0x7000 | (a & 0x0fff);
    let lo = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    let hex = format!("{hi:016x}{lo:016x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The directory Pi keeps a working directory's sessions in.
pub fn default_session_dir(cwd: &str) -> Option<PathBuf> {
    let agent_dir = match std::env::var_os("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            match (dir.strip_prefix("~"), std::env::var_os("HOME")) {
                (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
                _ => dir,
            }
        }
        None => PathBuf::from(std::env::var_os("HOME")?)
            .join(".pi")
            .join("agent"),
    };
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    Some(agent_dir.join("sessions").join(format!("--{safe}--")))
}

/// The newest session of a directory as `pi -c` picks it: the `.jsonl`
/// file whose first line is a session header, with the latest
/// modification time.
pub fn most_recent_session(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.extension().map_or(true, |e| e != "jsonl") {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || !has_header(&path) {
            continue;
        }
        let Ok(mtime) = meta.modified() else { continue };
        if best.as_ref().map_or(true, |(t, _)| mtime > *t) {
            best = Some((mtime, path));
        }
    }
    best.map(|(_, p)| p)
}

/// Whether the first line (of the first 512 bytes, as Pi reads it) is a
/// session header with a string id.
fn has_header(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 512];
    let Ok(mut f) = File::open(path) else {
        return false;
    };
    let Ok(n) = f.read(&mut buf) else {
        return false;
    };
    let text = String::from_utf8_lossy(&buf[..n]);
    let first = text.split('\n').next().unwrap_or("");
    serde_json::from_str::<Value>(first).is_ok_and(|v| {
        v.get("type").and_then(Value::as_str) == Some("session")
            && v.get("id").is_some_and(Value::is_string)
    })
}
