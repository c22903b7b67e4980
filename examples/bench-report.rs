//! Turns criterion's saved estimates from `benches/channels.rs` into the
//! markdown report table. Run by `benches/report.sh`:
//!
//! ```text
//! bench-report CRITERION_DIR [--spin SPIN_CRITERION_DIR] [ALLOCATIONS_TABLE.md]
//! ```
//!
//! Each cell is the median of `CRITERION_DIR/<group>/<flavour>/new/estimates.json`,
//! divided by the number of events (or rounds, or deltas) per iteration.
//!
//! `CRITERION_DIR` holds the normal run, where the core uses the `std` lock
//! (the adapters enable its `std` feature): every peer and "ours (std
//! lock)" come from it. `SPIN_CRITERION_DIR` holds a second run built with
//! `--cfg agentstream_spin_lock`, which forces the core's spin-lock
//! fallback; only its `ours` estimates are read, for the "ours (spin
//! fallback)" column. Without `--spin` that column shows "–". Both ratios
//! are against the best peer of the normal run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const PEERS: [&str; 4] = ["futures", "tokio", "async-channel", "flume"];

/// The peers a row's group measures.
const ALL_PEERS: &[&str] = &PEERS;

/// One row of the table: a criterion group and how to read it.
struct Row {
    group: &'static str,
    scenario: &'static str,
    /// What one unit is, and how many an iteration holds.
    unit: &'static str,
    per_iteration: f64,
    /// The highest acceptable ours / best-peer ratio, if the issue sets one.
    target: Option<f64>,
    /// The peers the group measures (the others show "n/a").
    peers: &'static [&'static str],
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
        peers: ALL_PEERS,
    }
}

/// A row whose group measures only `peers` besides ours.
const fn row_against(
    group: &'static str,
    scenario: &'static str,
    unit: &'static str,
    per_iteration: f64,
    peers: &'static [&'static str],
) -> Row {
    Row {
        group,
        scenario,
        unit,
        per_iteration,
        target: None,
        peers,
    }
}

const ROWS: [Row; 12] = [
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
    row_against(
        "contended-16x100k-tokio-mt8",
        "contended: 16 pairs × 100k, tokio 8 workers + a busy thread",
        "event",
        1_600_000.0,
        &["tokio"],
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

fn verdict(ratio: f64, target: f64) -> &'static str {
    if ratio <= target {
        "met"
    } else {
        "**MISSED**"
    }
}

/// The target cell: the verdict for each lock column that has a figure.
fn verdicts(std: f64, spin: Option<f64>, target: Option<f64>) -> String {
    match (target, spin) {
        (None, _) => "–".to_string(),
        (Some(target), None) => format!("≤ {target} {}", verdict(std, target)),
        (Some(target), Some(spin)) => format!(
            "≤ {target}: std {}, spin {}",
            verdict(std, target),
            verdict(spin, target)
        ),
    }
}

/// A cell that may have no figure.
fn cell(value: Option<f64>, show: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "–".to_string(), show)
}

/// Where the two runs' estimates are.
struct Runs<'a> {
    /// The normal run (std lock): every flavour.
    std: &'a Path,
    /// The forced spin-lock run: ours only.
    spin: Option<&'a Path>,
}

impl Runs<'_> {
    /// Ours per unit in the normal run and, if there is one, the spin run.
    fn ours(&self, row: &Row) -> Result<(f64, Option<f64>), String> {
        let std = median_ns(self.std, row.group, "ours")? / row.per_iteration;
        let spin = match self.spin {
            Some(dir) => Some(median_ns(dir, row.group, "ours")? / row.per_iteration),
            None => None,
        };
        Ok((std, spin))
    }

    /// A peer per unit in the normal run.
    fn peer(&self, row: &Row, peer: &str) -> Result<f64, String> {
        Ok(median_ns(self.std, row.group, peer)? / row.per_iteration)
    }
}

fn report(runs: &Runs<'_>) -> Result<String, String> {
    let mut out = String::new();
    out += "| scenario | per | ours (std lock) | ours (spin fallback) | futures | tokio | async-channel | flume \
            | ours (std lock) / best peer | ours (spin fallback) / best peer | target |\n";
    out += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for row in &ROWS {
        let (std, spin) = runs.ours(row)?;
        let mut best = f64::INFINITY;
        let mut cells = Vec::new();
        for peer in PEERS {
            if row.peers.contains(&peer) {
                let ns = runs.peer(row, peer)?;
                best = best.min(ns);
                cells.push(time(ns));
            } else {
                cells.push("n/a".to_string());
            }
        }
        let (std_ratio, spin_ratio) = (std / best, spin.map(|spin| spin / best));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {std_ratio:.2} | {} | {} |",
            row.scenario,
            row.unit,
            time(std),
            cell(spin, time),
            cells.join(" | "),
            cell(spin_ratio, |ratio| format!("{ratio:.2}")),
            verdicts(std_ratio, spin_ratio, row.target)
        );
    }

    let (burst_4k, spin_4k) = runs.ours(&ROWS[2])?;
    let (burst_1m, spin_1m) = runs.ours(&ROWS[3])?;
    let growth = burst_1m / burst_4k;
    let spin_growth = spin_1m.zip(spin_4k).map(|(big, small)| big / small);
    let vs = |big: f64, small: f64| format!("{} vs {}", time(big), time(small));
    let _ = writeln!(
        out,
        "| burst growth: 1M vs 4,096, ours | event | {} | {} | | | | | {growth:.2} | {} | {} |",
        vs(burst_1m, burst_4k),
        match spin_1m.zip(spin_4k) {
            Some((big, small)) => vs(big, small),
            None => "–".to_string(),
        },
        cell(spin_growth, |ratio| format!("{ratio:.2}")),
        verdicts(growth, spin_growth, Some(1.5))
    );
    for row in &SCRIPTED {
        let (std, spin) = runs.ours(row)?;
        let _ = writeln!(
            out,
            "| ScriptedModel: {} | {} | {} | {} | n/a | n/a | n/a | n/a | – | – | – |",
            row.scenario,
            row.unit,
            time(std),
            cell(spin, time)
        );
    }
    let (coarse, spin_coarse) = runs.ours(&SCRIPTED[1])?;
    let (fine, spin_fine) = runs.ours(&SCRIPTED[2])?;
    let flatness = fine / coarse;
    let spin_flatness = spin_fine
        .zip(spin_coarse)
        .map(|(fine, coarse)| fine / coarse);
    let _ = writeln!(
        out,
        "| ScriptedModel flatness: 16,384 vs 1,024 deltas | delta | {} | {} | | | | | {flatness:.2} | {} | {} |",
        vs(fine, coarse),
        match spin_fine.zip(spin_coarse) {
            Some((fine, coarse)) => vs(fine, coarse),
            None => "–".to_string(),
        },
        cell(spin_flatness, |ratio| format!("{ratio:.2}")),
        verdicts(flatness, spin_flatness, Some(1.3))
    );
    Ok(out)
}

const USAGE: &str =
    "usage: bench-report CRITERION_DIR [--spin SPIN_CRITERION_DIR] [ALLOCATIONS_TABLE.md]";

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let mut spin = None;
    let mut allocations = None;
    while let Some(arg) = args.next() {
        if arg == "--spin" {
            let Some(dir) = args.next() else {
                eprintln!("{USAGE}");
                std::process::exit(2);
            };
            spin = Some(PathBuf::from(dir));
        } else if allocations.is_none() {
            allocations = Some(PathBuf::from(arg));
        } else {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
    let runs = Runs {
        std: Path::new(&dir),
        spin: spin.as_deref(),
    };
    match report(&runs) {
        Ok(table) => print!("{table}"),
        Err(error) => {
            eprintln!("bench-report: {error}");
            std::process::exit(1);
        }
    }
    if let Some(allocations) = allocations {
        match std::fs::read_to_string(&allocations) {
            Ok(table) => print!("\n### Allocations (counting global allocator)\n\n{table}"),
            Err(error) => {
                eprintln!("bench-report: {}: {error}", allocations.display());
                std::process::exit(1);
            }
        }
    }
}
