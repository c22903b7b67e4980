//! The differential test of request bodies against pi-ai 0.73.1, without
//! node: `oracle/pi-ai/golden/payloads.json` holds the requests pi-ai
//! sends for the matrices of `oracle/pi-ai/payloads.mjs` (catalogue models ×
//! cache retentions, and thinking models × thinking levels, one context
//! with a system prompt, a tool, an image and a tool result), captured
//! offline; `agentstream chat --dry-run` must
//! print the same method, URL, headers and body, except where
//! `oracle/pi-ai/payloads-deliberate.json` lists a difference with its
//! reason. A listed difference that no case shows any more fails too.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn oracle() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../oracle/pi-ai")
}

fn read(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Every leaf path where `a` and `b` differ, as `/a/b/0/c`.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (l, r) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if x.contains_key(k) != y.contains_key(k) {
                    out.push(format!("{path}/{k}"));
                } else {
                    differences(l, r, &format!("{path}/{k}"), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                match (x.get(i), y.get(i)) {
                    (Some(l), Some(r)) => differences(l, r, &format!("{path}/{i}"), out),
                    _ => out.push(format!("{path}/{i}")),
                }
            }
        }
        _ if a != b => out.push(path.to_owned()),
        _ => {}
    }
}

/// Whether the listed `pattern` covers `path`: segment by segment, `*`
/// matching any one segment and `x*` any segment starting with `x`; the
/// pattern may stop early (it covers what lies below).
fn covers(pattern: &str, path: &str) -> bool {
    let mut segments = path.split('/');
    pattern.split('/').all(|p| {
        segments.next().is_some_and(|s| match p.strip_suffix('*') {
            Some(prefix) => s.starts_with(prefix),
            None => p == s,
        })
    })
}

#[test]
fn dry_run_requests_equal_pi_ai_s_or_differ_as_listed() {
    let golden = read(oracle().join("golden/payloads.json"));
    let deliberate = read(oracle().join("payloads-deliberate.json"));
    let entries = deliberate["entries"].as_array().unwrap();
    let mut used = vec![false; entries.len()];
    let context = oracle().join("golden/context.json");
    let cases = golden.as_array().unwrap();
    assert_eq!(
        cases.len(),
        114,
        "12 models × 3 retentions + 13 thinking models × 6 levels"
    );
    let (mut equal, mut bodies_equal, mut unexplained) = (0, 0, Vec::new());
    let (mut thinking_cases, mut thinking_bodies_equal) = (0, 0);
    for case in cases {
        let c = &case["case"];
        let provider = c["provider"].as_str().unwrap();
        let spec = format!("{provider}/{}", c["id"].as_str().unwrap());
        let mut command = Command::new(env!("CARGO_BIN_EXE_agentstream"));
        command
            .args([
                "chat",
                "--model",
                &spec,
                "--dry-run",
                "--max-tokens",
                "1024",
            ])
            .args(["--cache-retention", c["cacheRetention"].as_str().unwrap()])
            .args(["--session-id", "session-0001", "--context"])
            .arg(&context);
        // payloads.mjs's Azure resource (Azure's models have no base URL).
        command.env("AZURE_OPENAI_RESOURCE_NAME", "agentstream-test");
        if let Some(level) = c["thinking"].as_str() {
            command.args(["--thinking", level]);
        }
        for name in agentstream_models::api_key_env_vars(provider) {
            command.env(name, "test-key");
        }
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "{spec}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let ours: Value = serde_json::from_slice(&output.stdout).unwrap();
        let mut found = Vec::new();
        differences(&case["request"], &ours, "", &mut found);
        if found.is_empty() {
            equal += 1;
        }
        let body_equal = !found.iter().any(|p| p.starts_with("/body"));
        bodies_equal += usize::from(body_equal);
        if c.get("thinking").is_some() {
            thinking_cases += 1;
            thinking_bodies_equal += usize::from(body_equal);
        }
        for path in found {
            let listed = entries.iter().position(|e| {
                !matches!(e["provider"].as_str(), Some(p) if p != provider)
                    && covers(e["path"].as_str().unwrap(), &path)
            });
            match listed {
                Some(i) => used[i] = true,
                None => unexplained.push(format!("{c}: {path}")),
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "differences from pi-ai not listed:\n{}",
        unexplained.join("\n")
    );
    let stale: Vec<&Value> = entries
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(e, _)| &e["path"])
        .collect();
    assert!(
        stale.is_empty(),
        "listed differences no case shows any more: {stale:?}"
    );
    eprintln!(
        "{equal} of {n} requests and {bodies_equal} of {n} bodies ({thinking_bodies_equal} of the {thinking_cases} with a thinking level) equal pi-ai's; the rest differ only as listed",
        n = cases.len()
    );
}

#[test]
fn the_cache_markers_are_compared_not_listed() {
    // No listed difference may cover a cache marker or cache key: those
    // must equal pi-ai's in every case.
    let deliberate = read(oracle().join("payloads-deliberate.json"));
    for e in deliberate["entries"].as_array().unwrap() {
        let path = e["path"].as_str().unwrap();
        for cache_path in [
            "/body/system/0/cache_control",
            "/body/tools/0/cache_control",
            "/body/messages/2/content/0/cache_control",
            "/body/prompt_cache_key",
            "/body/prompt_cache_retention",
            "/headers/session_id",
            "/headers/x-client-request-id",
        ] {
            assert!(!covers(path, cache_path), "{path} hides {cache_path}");
        }
    }
}
