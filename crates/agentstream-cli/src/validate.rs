//! `agentstream validate`: parse every message, check its round trip and the
//! tool-call linkage, and summarize.
//!
//! Output (text mode), on stdout:
//!
//! ```text
//! FILE:LINE: CODE sentence
//! summary: N messages, D diagnostics, M round-trip mismatches, E errors
//! ```
//!
//! A fatal input error is printed to stderr as `FILE:LINE: error: ...` and
//! stops reading that file; other files are still read.
//!
//! With `--json`, stdout carries one JSON object per line instead: records
//! with `"kind"` `"diagnostic"`, `"error"` and a final `"summary"`.
//!
//! Exit status: 2 if any file had an error, else 1 if there was any
//! diagnostic or round-trip mismatch, else 0.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentstream::diagnostic::Diagnostic;
use agentstream::message::{json_diff, LinkageChecker, Message};
use serde_json::{json, Value};

use crate::input::{join_path, InputError, Item, Items};
use crate::terminal::escape_line;

/// The code of a lone UTF-16 surrogate, replaced by U+FFFD so the rest of
/// the file is still checked.
pub const LONE_SURROGATE: &str = "lone-surrogate";

/// The code of a round-trip mismatch diagnostic.
pub const ROUND_TRIP_MISMATCH: &str = "round-trip-mismatch";

/// Arguments of `agentstream validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON Lines records instead of text.
    #[arg(long)]
    pub json: bool,
    /// Pi session JSONL files or JSON arrays of messages.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Default)]
struct Totals {
    messages: usize,
    diagnostics: usize,
    mismatches: usize,
    errors: usize,
}

struct Report<W: Write> {
    out: W,
    json: bool,
    totals: Totals,
}

/// Runs the command.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let stdout = io::stdout();
    let mut report = Report {
        out: io::BufWriter::new(stdout.lock()),
        json: args.json,
        totals: Totals::default(),
    };
    for file in &args.files {
        validate_file(file, &mut report)?;
    }
    report.summary(args.files.len())?;
    report.out.flush()?;
    let t = &report.totals;
    Ok(if t.errors > 0 {
        ExitCode::from(2)
    } else if t.diagnostics + t.mismatches > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn validate_file<W: Write>(file: &Path, report: &mut Report<W>) -> io::Result<()> {
    let items = match Items::open(file) {
        Ok(items) => items,
        Err(e) => return report.error(file, &e),
    };
    let mut checker = LinkageChecker::new();
    // The line of each message, by message index, for linkage diagnostics.
    let mut lines: Vec<usize> = Vec::new();
    for item in items {
        let item = match item {
            Ok(item) => item,
            Err(e) => return report.error(file, &e),
        };
        for path in &item.lone_surrogates {
            report.totals.diagnostics += 1;
            let text =
                format!("a lone UTF-16 surrogate in the string at {path} was replaced by U+FFFD");
            let d = Diagnostic::new(LONE_SURROGATE, lines.len(), None, text);
            report.diagnostic(file, &item, &d)?;
        }
        let Some(original) = item.message() else {
            continue;
        };
        let message = match Message::from_value(original.clone()) {
            Ok(message) => message,
            Err(e) => {
                return report.error(
                    file,
                    &InputError::decode(item.line, &item.message_path(), &e),
                )
            }
        };
        let index = lines.len();
        lines.push(item.line);
        report.totals.messages += 1;
        if let Some(path) = round_trip_diff(original, &message) {
            report.totals.mismatches += 1;
            let path = join_path(&item.message_path(), &path);
            let text = format!("re-serializing the message changes the JSON at {path}");
            report.diagnostic(
                file,
                &item,
                &Diagnostic::new(ROUND_TRIP_MISMATCH, index, None, text),
            )?;
        }
        for d in checker.check(&message) {
            report.totals.diagnostics += 1;
            let line = lines.get(d.message_index).copied().unwrap_or(item.line);
            report.diagnostic_at(file, line, &d)?;
        }
    }
    Ok(())
}

/// Serializes the message to text, parses it back and compares it with the
/// original under JavaScript semantics. Returns the path of the first
/// difference, relative to the message.
fn round_trip_diff(original: &Value, message: &Message) -> Option<String> {
    let reparsed = serde_json::to_string(message)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    match reparsed {
        Some(value) => json_diff(original, &value),
        None => Some("$".into()),
    }
}

impl<W: Write> Report<W> {
    fn diagnostic(&mut self, file: &Path, item: &Item, d: &Diagnostic) -> io::Result<()> {
        self.diagnostic_at(file, item.line, d)
    }

    fn diagnostic_at(&mut self, file: &Path, line: usize, d: &Diagnostic) -> io::Result<()> {
        if self.json {
            let record = json!({
                "kind": "diagnostic",
                "file": file.display().to_string(),
                "line": line,
                "code": d.code,
                "messageIndex": d.message_index,
                "contentIndex": d.content_index,
                "text": d.text,
            });
            writeln!(self.out, "{record}")
        } else {
            let finding = escape_line(&d.to_string()).into_owned();
            writeln!(self.out, "{}:{line}: {finding}", file.display())
        }
    }

    fn error(&mut self, file: &Path, e: &InputError) -> io::Result<()> {
        self.totals.errors += 1;
        eprintln!("{}:{}", file.display(), escape_line(&e.to_string()));
        if self.json {
            let record = json!({
                "kind": "error",
                "file": file.display().to_string(),
                "line": e.line,
                "path": e.path,
                "text": e.text,
            });
            writeln!(self.out, "{record}")?;
        }
        Ok(())
    }

    fn summary(&mut self, files: usize) -> io::Result<()> {
        let t = &self.totals;
        if self.json {
            let record = json!({
                "kind": "summary",
                "files": files,
                "messages": t.messages,
                "diagnostics": t.diagnostics,
                "roundTripMismatches": t.mismatches,
                "errors": t.errors,
            });
            writeln!(self.out, "{record}")
        } else {
            writeln!(
                self.out,
                "summary: {} messages, {} diagnostics, {} round-trip mismatches, {} errors",
                t.messages, t.diagnostics, t.mismatches, t.errors
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_difference_names_its_path() {
        let original = json!({"role": "user", "content": "hi", "timestamp": 1});
        let message = Message::from_value(original.clone()).unwrap();
        assert_eq!(round_trip_diff(&original, &message), None);
        // A value the message does not carry stands in for a lossy model.
        let mut changed = original;
        changed["content"] = json!("bye");
        assert_eq!(
            round_trip_diff(&changed, &message),
            Some("$.content".into())
        );
    }
}
