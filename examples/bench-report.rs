//! Turns criterion's saved estimates from `benches/channels.rs` into the
//! markdown report table. Run by `benches/report.sh`:
//!
//! ```text
//! bench-report CRITERION_DIR [ALLOCATIONS_TABLE.md]
//! ```
//!
//! Each cell is the median of `CRITERION_DIR/<group>/<flavour>/new/estimates.json`,
//! divided by the number of events (or rounds, or deltas) per iteration.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const PEERS: [&str; 4] = ["futures", "tokio", "async-channel", "flume"];

/// One row of the table: a criterion group and how to read it.
struct Row {
    group: &'static str,
    scenario: &'static str,
    /// What one unit is, and how many an iteration holds.
    unit: &'static str,
    per_iteration: f64,
    /// The highest acceptable ours / best-peer ratio, if the issue sets one.
    target: Option<f64>,
}

const fn row(
    group: &'static str,
    scenario: &'static str,
    unit: &'static str,
    per_iteration: f64,
    target: Option<f64>,
) -> Row {
    Row {
        group,
        scenario,
        unit,
        per_iteration,
        target,
    }
}

const ROWS: [Row; 11] = [
    row("burst-1", "burst, N = 1", "event", 1.0, Some(0.5)),
    row("burst-64", "burst, N = 64", "event", 64.0, Some(0.5)),
    row("burst-4096", "burst, N = 4,096", "event", 4096.0, Some(0.5)),
    row(
        "burst-1048576",
        "burst, N = 1,048,576",
        "event",
        1_048_576.0,
        Some(0.5),
    ),
    row(
        "pingpong-handrolled",
        "ping-pong, hand-rolled executor",
        "round",
        1.0,
        Some(1.0),
    ),
    row(
        "pingpong-tokio-ct",
        "ping-pong, tokio current-thread",
        "round",
        1.0,
        Some(1.0),
    ),
    row(
        "crossthread-tokio-mt",
        "cross-thread 100k, tokio multi-thread",
        "event",
        100_000.0,
        Some(1.0),
    ),
    row(
        "crossthread-smol",
        "cross-thread 100k, smol",
        "event",
        100_000.0,
        Some(1.0),
    ),
    row("lifecycle", "lifecycle", "call", 1.0, Some(1.0)),
    row("fanout-1", "result fan-out, 1 awaiter", "call", 1.0, None),
    row(
        "fanout-1000",
        "result fan-out, 1,000 awaiters",
        "call",
        1.0,
        None,
    ),
];

/// Rows of ours alone (ScriptedModel is built on EventStream).
const SCRIPTED: [Row; 3] = [
    row("scripted-toolcall", "one tool-call turn", "call", 1.0, None),
    row(
        "scripted-1MiB-1024",
        "1 MiB text as 1,024 deltas",
        "delta",
        1024.0,
        None,
    ),
    row(
        "scripted-1MiB-16384",
        "1 MiB text as 16,384 deltas",
        "delta",
        16384.0,
        None,
    ),
];

/// The median time of one iteration, in nanoseconds.
fn median_ns(dir: &Path, group: &str, flavour: &str) -> Result<f64, String> {
    let path: PathBuf = [dir, Path::new(group), Path::new(flavour)]
        .iter()
        .collect::<PathBuf>()
        .join("new/estimates.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("{}: {error} (run the benches first)", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
    json["median"]["point_estimate"]
        .as_f64()
        .ok_or_else(|| format!("{}: no median.point_estimate", path.display()))
}

fn time(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2} ns")
    } else if ns < 1_000.0 {
        format!("{ns:.1} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn verdict(ratio: f64, target: Option<f64>) -> String {
    match target {
        Some(target) if ratio <= target => format!("≤ {target} met"),
        Some(target) => format!("≤ {target} **MISSED**"),
        None => "–".to_string(),
    }
}

fn report(dir: &Path) -> Result<String, String> {
    let mut out = String::new();
    out += "| scenario | per | ours | futures | tokio | async-channel | flume | ours / best peer | target |\n";
    out += "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    let per_unit = |row: &Row, flavour: &str| {
        median_ns(dir, row.group, flavour).map(|ns| ns / row.per_iteration)
    };
    for row in &ROWS {
        let ours = per_unit(row, "ours")?;
        let peers = PEERS
            .iter()
            .map(|peer| per_unit(row, peer))
            .collect::<Result<Vec<_>, _>>()?;
        let best = peers.iter().copied().fold(f64::INFINITY, f64::min);
        let ratio = ours / best;
        let _ = write!(out, "| {} | {} | {} ", row.scenario, row.unit, time(ours));
        for peer in &peers {
            let _ = write!(out, "| {} ", time(*peer));
        }
        let _ = writeln!(out, "| {ratio:.2} | {} |", verdict(ratio, row.target));
    }

    let burst_4k = per_unit(&ROWS[2], "ours")?;
    let burst_1m = per_unit(&ROWS[3], "ours")?;
    let growth = burst_1m / burst_4k;
    let _ = writeln!(
        out,
        "| burst growth: 1M vs 4,096, ours | event | {} vs {} | | | | | {growth:.2} | {} |",
        time(burst_1m),
        time(burst_4k),
        verdict(growth, Some(1.5))
    );
    for row in &SCRIPTED {
        let ours = per_unit(row, "ours")?;
        let _ = writeln!(
            out,
            "| ScriptedModel: {} | {} | {} | n/a | n/a | n/a | n/a | – | – |",
            row.scenario,
            row.unit,
            time(ours)
        );
    }
    let coarse = per_unit(&SCRIPTED[1], "ours")?;
    let fine = per_unit(&SCRIPTED[2], "ours")?;
    let flatness = fine / coarse;
    let _ = writeln!(
        out,
        "| ScriptedModel flatness: 16,384 vs 1,024 deltas | delta | {} vs {} | | | | | {flatness:.2} | {} |",
        time(fine),
        time(coarse),
        verdict(flatness, Some(1.3))
    );
    Ok(out)
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: bench-report CRITERION_DIR [ALLOCATIONS_TABLE.md]");
        std::process::exit(2);
    };
    match report(Path::new(&dir)) {
        Ok(table) => print!("{table}"),
        Err(error) => {
            eprintln!("bench-report: {error}");
            std::process::exit(1);
        }
    }
    if let Some(allocations) = args.next() {
        match std::fs::read_to_string(&allocations) {
            Ok(table) => print!("\n### Allocations (counting global allocator)\n\n{table}"),
            Err(error) => {
                eprintln!(
                    "bench-report: {}: {error}",
                    Path::new(&allocations).display()
                );
                std::process::exit(1);
            }
        }
    }
}
