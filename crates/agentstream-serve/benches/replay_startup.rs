//! What `serve --replay DIR` costs to start on a large cassette
//! directory: the seconds until the server listens and the peak resident
//! set (`VmHWM`), for a generated directory of N cassettes (issue 42: 500,000
//! cassettes took 6 GB and 22 s).
//!
//! Two ways are measured, each in a fresh process (this binary runs
//! itself again), on the same directory:
//!
//! - `whole`: [`Cassette::load_dir`], every cassette read whole into
//!   memory (bodies included), what replay did at startup before it
//!   indexed the directory;
//! - `replay`: [`Server::replay`] bound to a port, what `serve --replay`
//!   does.
//!
//! It prints both and the ratio replay / whole. Run:
//! `cargo bench -p agentstream-serve --bench replay_startup` (N is
//! `AGENTSTREAM_REPLAY_BENCH_N`, default 20,000; each cassette has a
//! 1 KiB context and a 16 KiB body in 64-byte pieces). The directory is
//! kept under the system's temporary directory for the next run. Linux
//! only (it reads `/proc/self/status`).

#![allow(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use agentstream_serve::cassette::{Cassette, Match};
use agentstream_serve::Server;

const BODY: usize = 16 << 10;
const PIECE: usize = 64;

/// Writes `n` cassettes into `dir` (unless a finished run left them).
fn generate(dir: &Path, n: usize) {
    let done = dir.join(".complete");
    if done.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let filler = "lorem ipsum dolor sit amet ".repeat(30);
    let mut body = String::new();
    while body.len() < BODY {
        body.push_str(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"some words \"}}]}\n\n",
        );
    }
    let lengths = {
        let mut text = format!("{PIECE}\n").repeat(body.len() / PIECE);
        if !body.len().is_multiple_of(PIECE) {
            text.push_str(&format!("{}\n", body.len() % PIECE));
        }
        text
    };
    for k in 0..n {
        let cassette = dir.join(format!("{k:06}"));
        std::fs::create_dir(&cassette).unwrap();
        let request = serde_json::json!({
            "api": "openai-completions", "method": "POST", "path": "/v1/chat/completions",
            "query": null, "headers": {"authorization": "[redacted]"}, "model": "m", "stream": true,
            "context": {"messages": [
                {"role": "user", "content": format!("{filler} question {k}"), "timestamp": 0}
            ]},
            "options": {}
        });
        std::fs::write(cassette.join("request.json"), request.to_string()).unwrap();
        std::fs::write(cassette.join("request.body"), b"{}").unwrap();
        std::fs::write(
            cassette.join("response.json"),
            br#"{"status": 200, "headers": {"content-type": "text/event-stream"}}"#,
        )
        .unwrap();
        std::fs::write(cassette.join("response.body"), &body).unwrap();
        std::fs::write(cassette.join("response.body.lengths"), &lengths).unwrap();
    }
    std::fs::write(done, b"").unwrap();
}

/// The process's peak resident set, in KiB.
fn peak_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// In the child: starts `way` on `dir` and prints `SECONDS PEAK_KIB`.
fn child(way: &str, dir: &Path) {
    let started = Instant::now();
    match way {
        "whole" => {
            let loaded = Cassette::load_dir(dir).unwrap();
            std::hint::black_box(&loaded);
        }
        _ => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let server = Server::replay(dir, Match::Exact)
                    .unwrap()
                    .bind("127.0.0.1:0")
                    .await
                    .unwrap();
                let seconds = started.elapsed().as_secs_f64();
                println!("{seconds} {}", peak_kib());
                server.shutdown().await;
            });
            return;
        }
    }
    println!("{} {}", started.elapsed().as_secs_f64(), peak_kib());
}

/// Runs this binary again for `way`: its seconds and peak KiB.
fn measure(way: &str, dir: &Path) -> (f64, f64) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--child", way])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().last().unwrap_or_default();
    let mut fields = line
        .split_whitespace()
        .map(|f| f.parse::<f64>().unwrap_or(f64::NAN));
    assert!(
        output.status.success(),
        "{way}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        fields.next().unwrap_or(f64::NAN),
        fields.next().unwrap_or(f64::NAN),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        child(&args[at + 1], Path::new(&args[at + 2]));
        return;
    }
    let n: usize = std::env::var("AGENTSTREAM_REPLAY_BENCH_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let dir: PathBuf = std::env::temp_dir().join(format!("agentstream-replay-startup-{n}"));
    let started = Instant::now();
    generate(&dir, n);
    println!(
        "replay_startup: {n} cassettes in {} ({:.1} s to make or find)",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    let whole = measure("whole", &dir);
    let replay = measure("replay", &dir);
    println!("| way | seconds | peak RSS (MiB) |");
    println!("|---|---:|---:|");
    for (way, (seconds, kib)) in [("whole", whole), ("replay", replay)] {
        println!("| {way} | {seconds:.3} | {:.1} |", kib / 1024.0);
    }
    println!(
        "replay / whole: time {:.3}, peak RSS {:.3}",
        replay.0 / whole.0,
        replay.1 / whole.1
    );
}
