//! `agentstream normalize`: write every JSON value of a file back out,
//! with messages re-serialized by the IR.
//!
//! Message entries get their `message` replaced by the IR's serialization;
//! other entries pass through unchanged apart from being written as compact
//! JSON. Output is one JSON value per line on stdout; blank lines are
//! dropped. A JSON array of messages becomes JSON Lines with one message
//! per line, which `validate` accepts as well.
//!
//! On an input error, the output written so far stays, the error goes to
//! stderr as `FILE:LINE: error: ...`, and the exit status is 2.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agentstream::message::Message;
use serde_json::Value;

use crate::input::{InputError, Items, Shape};
use crate::terminal::escape_line;

/// Arguments of `agentstream normalize`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A Pi session JSONL file or a JSON array of messages.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// Runs the command.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let fail = |e: &InputError| {
        eprintln!("{}:{}", args.file.display(), escape_line(&e.to_string()));
        ExitCode::from(2)
    };
    let items = match Items::open(&args.file) {
        Ok(items) => items,
        Err(e) => return Ok(fail(&e)),
    };
    for item in items {
        let mut item = match item {
            Ok(item) => item,
            Err(e) => {
                out.flush()?;
                return Ok(fail(&e));
            }
        };
        if let Some(original) = item.message() {
            let normalized = Message::from_value(original.clone())
                .map_err(|e| InputError::decode(item.line, &item.message_path(), &e))
                .and_then(|m| {
                    serde_json::to_value(&m).map_err(|e| InputError {
                        line: item.line,
                        path: None,
                        text: format!("cannot serialize the message: {e}"),
                    })
                });
            let normalized: Value = match normalized {
                Ok(v) => v,
                Err(e) => {
                    out.flush()?;
                    return Ok(fail(&e));
                }
            };
            match (item.shape, &mut item.value) {
                (Shape::Entry, Value::Object(entry)) => {
                    entry.insert("message".into(), normalized);
                }
                _ => item.value = normalized,
            }
        }
        serde_json::to_writer(&mut out, &item.value)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
