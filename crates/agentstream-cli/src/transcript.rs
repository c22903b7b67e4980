//! The human-readable output of `agentstream agent`: each turn under its
//! own label (the prompt in the first), the assistant's text as it streams, each
//! tool call with its arguments, each result abbreviated, and a last line
//! saying how the run ended.
//!
//! ```text
//! turn 1
//!   user: What is in the README?
//!   assistant: Let me read README.md.
//!   tool call: read {"path":"README.md"}
//!   tool result: # Demo project\n\nIt has a README.\n
//!
//! turn 2
//!   assistant: README.md has 3 lines. Its title is "Demo project", and it begins: It has a README.
//!
//! done: the run completed after 2 turns and 1 tool call; the last turn's text is the answer
//! ```
//!
//! Text from the model, a tool or a file is printed with its control
//! characters escaped; a tool result stays on one line.

use std::io::{self, Write};

use agentstream::agent::{AgentEvent, AgentOutcome, AgentStop, ToolExecutionResult};
use agentstream::message::{SharedMessage, UserContent};
use agentstream::model::ModelEvent;

use crate::terminal::{escape_controls, escape_line};

/// How many characters of a tool's result are shown.
const SHOWN_RESULT_CHARS: usize = 200;
/// The indentation of a turn's lines, and of the continuation lines of a
/// streamed text.
const INDENT: &str = "  ";
const CONTINUATION: &str = "\n    ";

/// The block whose deltas are being printed on the current line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

/// The state of the printed transcript between events.
#[derive(Debug, Default)]
pub struct Transcript {
    /// The turns started so far.
    turns: usize,
    /// The tool calls executed so far.
    tool_calls: usize,
    /// The block whose deltas are on the current line, if any.
    open: Option<Open>,
    /// Whether the current assistant message printed any text or thinking
    /// delta (if it printed none, its text is printed whole at its end).
    streamed: bool,
}

impl Transcript {
    /// Prints what `event` adds to the transcript.
    pub fn event(&mut self, out: &mut impl Write, event: &AgentEvent) -> io::Result<()> {
        match event {
            AgentEvent::TurnStart => {
                self.close(out)?;
                if self.turns > 0 {
                    writeln!(out)?;
                }
                self.turns += 1;
                writeln!(out, "turn {}", self.turns)
            }
            AgentEvent::MessageStart {
                message: SharedMessage::User(user),
            } => {
                self.close(out)?;
                let text = match &user.content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|block| block.as_text())
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                writeln!(out, "{INDENT}user: {}", indent(&escape_controls(&text)))
            }
            AgentEvent::MessageStart {
                message: SharedMessage::Assistant(_),
            } => {
                self.streamed = false;
                Ok(())
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => match assistant_message_event {
                ModelEvent::TextDelta { delta, .. } => self.delta(out, Open::Text, delta),
                ModelEvent::ThinkingDelta { delta, .. } => self.delta(out, Open::Thinking, delta),
                _ => Ok(()),
            },
            AgentEvent::MessageEnd {
                message: SharedMessage::Assistant(message),
            } => {
                self.close(out)?;
                let text = message.text();
                if !self.streamed && !text.is_empty() {
                    writeln!(
                        out,
                        "{INDENT}assistant: {}",
                        indent(&escape_controls(&text))
                    )?;
                }
                if let Some(error) = &message.error_message {
                    writeln!(out, "{INDENT}error: {}", escape_line(error))?;
                }
                Ok(())
            }
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => {
                self.close(out)?;
                self.tool_calls += 1;
                writeln!(
                    out,
                    "{INDENT}tool call: {} {}",
                    escape_line(tool_name),
                    escape_line(&args.to_string())
                )
            }
            AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => {
                self.close(out)?;
                let label = if *is_error {
                    "tool result (error)"
                } else {
                    "tool result"
                };
                writeln!(
                    out,
                    "{INDENT}{label}: {}",
                    escape_line(&abbreviate(&result_text(result)))
                )
            }
            _ => Ok(()),
        }
    }

    /// Prints the last line: how the run ended.
    pub fn finish(&mut self, out: &mut impl Write, outcome: &AgentOutcome) -> io::Result<()> {
        self.close(out)?;
        let turns = plural(outcome.turns, "turn");
        let calls = plural(self.tool_calls, "tool call");
        match outcome.stop {
            AgentStop::Completed => writeln!(
                out,
                "\ndone: the run completed after {turns} and {calls}; the last turn's text is the answer"
            ),
            AgentStop::MaxTurns => writeln!(
                out,
                "\nstopped: the turn limit was reached after {turns} and {calls}"
            ),
            AgentStop::Aborted => writeln!(out, "\nstopped: aborted after {turns} and {calls}"),
            AgentStop::StoppedAfterTurn => writeln!(
                out,
                "\nstopped: the stop-after-turn hook ended the run after {turns} and {calls}"
            ),
            _ => writeln!(
                out,
                "\nstopped: the model call failed after {turns} and {calls}"
            ),
        }
    }

    /// Prints a text or thinking delta, opening its labelled line first.
    fn delta(&mut self, out: &mut impl Write, kind: Open, delta: &str) -> io::Result<()> {
        if delta.is_empty() {
            return Ok(());
        }
        if self.open != Some(kind) {
            self.close(out)?;
            let label = match kind {
                Open::Text => "assistant",
                Open::Thinking => "thinking",
            };
            write!(out, "{INDENT}{label}: ")?;
            self.open = Some(kind);
        }
        self.streamed = true;
        write!(out, "{}", indent(&escape_controls(delta)))
    }

    /// Ends the line of an open text or thinking block.
    fn close(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.open.take().is_some() {
            writeln!(out)?;
        }
        Ok(())
    }
}

/// `text` with its continuation lines indented under their label.
fn indent(text: &str) -> String {
    text.replace('\n', CONTINUATION)
}

/// The text blocks of a tool result, joined by line feeds.
fn result_text(result: &ToolExecutionResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// "1 turn", "2 turns".
fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The first [`SHOWN_RESULT_CHARS`] characters of `text`, with a count of
/// the rest.
fn abbreviate(text: &str) -> String {
    let total = text.chars().count();
    if total <= SHOWN_RESULT_CHARS {
        return text.to_owned();
    }
    let shown: String = text.chars().take(SHOWN_RESULT_CHARS).collect();
    format!("{shown}… ({} more characters)", total - SHOWN_RESULT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviate_keeps_short_text_and_counts_the_rest() {
        assert_eq!(abbreviate("short"), "short");
        let long = "é".repeat(SHOWN_RESULT_CHARS + 5);
        let cut = abbreviate(&long);
        assert!(cut.starts_with(&"é".repeat(SHOWN_RESULT_CHARS)));
        assert!(cut.ends_with("… (5 more characters)"), "{cut}");
    }

    #[test]
    fn streamed_text_is_labelled_and_its_lines_indented() {
        let mut transcript = Transcript::default();
        let mut out = Vec::new();
        transcript.turns = 1;
        transcript.delta(&mut out, Open::Thinking, "hmm").unwrap();
        transcript.delta(&mut out, Open::Text, "one\ntwo").unwrap();
        transcript.delta(&mut out, Open::Text, "\x1b[2J").unwrap();
        transcript.close(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  thinking: hmm\n  assistant: one\n    two\\u{1b}[2J\n"
        );
    }
}
