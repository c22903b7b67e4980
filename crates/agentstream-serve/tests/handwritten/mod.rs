//! Cassettes written by hand, as a hostile or careless cassette
//! directory would hold them.

use std::path::{Path, PathBuf};

use serde_json::json;

/// Writes cassette `name` in `dir`: `request.json` for a streamed Chat
/// Completions call saying "Hi", `response.json` with 200, and
/// `response.body` (with `response.body.lengths` when given) unless
/// `body` is `None`. Returns the cassette's directory.
pub fn write_cassette(
    dir: &Path,
    name: &str,
    body: Option<&[u8]>,
    lengths: Option<&str>,
) -> PathBuf {
    let cassette = dir.join(name);
    std::fs::create_dir_all(&cassette).unwrap();
    let request = json!({
        "api": "openai-completions", "method": "POST", "path": "/v1/chat/completions", "query": null,
        "headers": {}, "model": "m", "stream": true,
        "context": {"messages": [{"role": "user", "content": "Hi", "timestamp": 0}]},
        "options": {},
    });
    std::fs::write(cassette.join("request.json"), request.to_string()).unwrap();
    std::fs::write(cassette.join("request.body"), b"{}").unwrap();
    std::fs::write(
        cassette.join("response.json"),
        json!({"status": 200, "headers": {}}).to_string(),
    )
    .unwrap();
    if let Some(body) = body {
        std::fs::write(cassette.join("response.body"), body).unwrap();
    }
    if let Some(lengths) = lengths {
        std::fs::write(cassette.join("response.body.lengths"), lengths).unwrap();
    }
    cassette
}

/// The process's resident set (`VmRSS`), in bytes. Linux only.
#[allow(dead_code)] // Not every test binary measures memory.
pub fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<usize>()
        .unwrap()
        * 1024
}
