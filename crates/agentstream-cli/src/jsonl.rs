//! `--jsonl[=SHAPE]`: every event as one line of JSON.
//!
//! - `--jsonl` (or `--jsonl=pi`): Pi's shape, what Pi itself writes. Every
//!   streaming event carries `partial`, the whole message formed so far,
//!   so the output grows with the square of the answer (4,096 short blocks
//!   print hundreds of megabytes).
//! - `--jsonl=compact`: the same events without `partial` (and, for the
//!   agent's `message_update`, without its `message`, which is the same
//!   partial), so the output is linear in the answer. The terminal events
//!   keep their complete message: `done` and `error`, and the agent's
//!   `message_end`, `turn_end` and `agent_end`. The partial at any point is
//!   the deltas so far, and can be rebuilt from them.

use std::io::{self, Write};

use agentstream::agent::AgentEvent;
use agentstream::model::ModelEvent;

/// The shape of `--jsonl` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Shape {
    /// Pi's events: each carries the message formed so far.
    #[default]
    Pi,
    /// Without the message formed so far, except in the terminal events.
    Compact,
}

/// Writes `event` as one line in `shape`.
pub fn write_model_event(out: &mut impl Write, event: &ModelEvent, shape: Shape) -> io::Result<()> {
    match shape {
        Shape::Pi => serde_json::to_writer(&mut *out, event),
        Shape::Compact => serde_json::to_writer(&mut *out, &event.without_partial()),
    }
    .map_err(io::Error::other)?;
    writeln!(out)
}

/// Writes `event` as one line in `shape`.
pub fn write_agent_event(out: &mut impl Write, event: &AgentEvent, shape: Shape) -> io::Result<()> {
    match (shape, event) {
        (
            Shape::Compact,
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            },
        ) => {
            // Pi's `message_update` without its `message` (the partial).
            out.write_all(br#"{"type":"message_update","assistantMessageEvent":"#)?;
            serde_json::to_writer(&mut *out, &assistant_message_event.without_partial())
                .map_err(io::Error::other)?;
            out.write_all(b"}")?;
        }
        _ => serde_json::to_writer(&mut *out, event).map_err(io::Error::other)?,
    }
    writeln!(out)
}
