//! A checker for event sequences: the test oracle for every producer.
//!
//! See [`validate_events`].

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::event::ModelEvent;
use super::partial::PartialMessage;
use super::rope::Rope;
use crate::diagnostic::Diagnostic;
use crate::message::{AssistantMessage, ContentBlock};

/// The kinds of streamed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

impl Kind {
    fn of(event: &ModelEvent) -> Option<Kind> {
        use ModelEvent as E;
        Some(match event {
            E::TextStart { .. } | E::TextDelta { .. } | E::TextEnd { .. } => Kind::Text,
            E::ThinkingStart { .. } | E::ThinkingDelta { .. } | E::ThinkingEnd { .. } => {
                Kind::Thinking
            }
            E::ToolCallStart { .. } | E::ToolCallDelta { .. } | E::ToolCallEnd { .. } => {
                Kind::ToolCall
            }
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Thinking => "thinking",
            Kind::ToolCall => "tool call",
        }
    }
}

/// What the checker has seen of one block.
struct Track {
    kind: Kind,
    deltas: String,
    /// Index of the first event of the block.
    first_event: usize,
    /// The partial's text of this block at the last delta, when it held
    /// exactly the deltas so far: the next partial that extends it by one
    /// shared chunk equal to the next delta holds them too, which is
    /// checked in O(1) instead of by copying the text (O(text) per delta,
    /// quadratic per block).
    verified: Option<Rope>,
}

impl Track {
    /// Whether `partial` holds exactly `self.deltas` (already extended by
    /// `delta`) for block `index`.
    fn partial_holds_deltas(
        &mut self,
        partial: &PartialMessage,
        index: usize,
        delta: &str,
    ) -> bool {
        let tag = match self.kind {
            Kind::Text => 0,
            Kind::Thinking => 1,
            Kind::ToolCall => 2,
        };
        let Some(rope) = partial
            .streamed_rope(index)
            .filter(|(kind, _)| *kind == tag)
            .map(|(_, rope)| rope)
        else {
            self.verified = None;
            return false;
        };
        let earlier_len = self.deltas.len() - delta.len();
        let extends = match &self.verified {
            Some(earlier) => rope.is_one_append_after(earlier),
            None => earlier_len == 0 && rope.is_one_append_after(&Rope::default()),
        };
        let holds = if extends && rope.last_chunk() == Some(delta) {
            true
        } else {
            // Not built by appending: compare the text itself.
            rope.len() == self.deltas.len() && rope.to_text() == self.deltas
        };
        self.verified = holds.then(|| rope.clone());
        holds
    }
}

/// Checks an event sequence against the protocol.
///
/// [`validate_events`] returns [`Diagnostic`]s in the style of the linkage
/// validator; `message_index` is the index of the offending event. A
/// well-formed sequence gives none. The codes are stable:
///
/// | code | meaning |
/// |---|---|
/// | `empty-stream` | there are no events |
/// | `missing-start` | the first event is not `start` (a lone `error` is allowed: a call that failed before it began) |
/// | `misplaced-start` | `start` appears after the first event |
/// | `missing-terminal` | the last event is not `done` or `error` |
/// | `event-after-terminal` | an event follows the first `done`/`error` |
/// | `content-index-decreased` | a block event's `contentIndex` is lower than an earlier one |
/// | `block-kind-mismatch` | events of different block kinds share a `contentIndex` |
/// | `partial-mismatch` | a delta event's `partial` does not hold the deltas so far for its block |
/// | `delta-mismatch` | a block's concatenated deltas differ from its `*_end` content or its final form |
/// | `invalid-tool-arguments` | a tool call's concatenated argument deltas are not a JSON object |
/// | `tool-arguments-mismatch` | a tool call's final arguments differ from its parsed argument deltas |
/// | `terminal-reason-mismatch` | a terminal event's `reason` differs from its message's `stopReason` |
/// | `missing-error-message` | an `error` event's message has no `errorMessage` |
/// | `implausible-usage` | the terminal message's `totalTokens` is smaller than its input, output, cache-read and cache-write tokens together |
///
/// ```
/// use agentstream::message::{assistant, text, StopReason};
/// use agentstream::model::{validate_events, DoneReason, ModelEvent};
///
/// let message = assistant([text("hi")], StopReason::Stop);
/// let events = [ModelEvent::done(DoneReason::Stop, message)];
/// let codes: Vec<_> = validate_events(&events).iter().map(|d| d.code).collect();
/// assert_eq!(codes, ["missing-start"]);
/// ```
pub fn validate_events(events: &[ModelEvent]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut report = |code, index, content_index, text: String| {
        out.push(Diagnostic::new(code, index, content_index, text));
    };
    let Some(first) = events.first() else {
        report("empty-stream", 0, None, "the stream has no events".into());
        return out;
    };
    let lone_error = events.len() == 1 && matches!(first, ModelEvent::Error { .. });
    if !matches!(first, ModelEvent::Start { .. }) && !lone_error {
        report(
            "missing-start",
            0,
            None,
            format!("the first event is {}, not start", first.type_name()),
        );
    }
    if let Some(last) = events.last().filter(|e| !e.is_terminal()) {
        report(
            "missing-terminal",
            events.len() - 1,
            None,
            format!("the last event is {}, not done or error", last.type_name()),
        );
    }

    let mut blocks: BTreeMap<usize, Track> = BTreeMap::new();
    let mut highest_index: Option<usize> = None;
    let mut terminal_seen = false;
    for (i, event) in events.iter().enumerate() {
        if terminal_seen {
            report(
                "event-after-terminal",
                i,
                None,
                format!("{} follows the terminal event", event.type_name()),
            );
        }
        if i > 0 && matches!(event, ModelEvent::Start { .. }) {
            report(
                "misplaced-start",
                i,
                None,
                "start is not the first event".into(),
            );
        }
        if let Some(message) = event.terminal_message() {
            terminal_seen = true;
            check_terminal(event, message, i, &blocks, &mut report);
            continue;
        }
        let (Some(kind), Some(index)) = (Kind::of(event), event.content_index()) else {
            continue;
        };
        if highest_index.is_some_and(|highest| index < highest) {
            report(
                "content-index-decreased",
                i,
                Some(index),
                format!(
                    "contentIndex {index} comes after contentIndex {}",
                    highest_index.unwrap_or_default()
                ),
            );
        }
        highest_index = highest_index.max(Some(index));
        let track = blocks.entry(index).or_insert(Track {
            kind,
            deltas: String::new(),
            first_event: i,
            verified: None,
        });
        if track.kind != kind {
            report(
                "block-kind-mismatch",
                i,
                Some(index),
                format!(
                    "a {} event targets the {} block started at event {}",
                    kind.name(),
                    track.kind.name(),
                    track.first_event
                ),
            );
            continue;
        }
        match event {
            ModelEvent::TextDelta { delta, partial, .. }
            | ModelEvent::ThinkingDelta { delta, partial, .. }
            | ModelEvent::ToolCallDelta { delta, partial, .. } => {
                track.deltas.push_str(delta);
                if !track.partial_holds_deltas(partial, index, delta) {
                    report(
                        "partial-mismatch",
                        i,
                        Some(index),
                        "the partial does not hold the deltas received so far".into(),
                    );
                }
            }
            ModelEvent::TextEnd { content, .. } | ModelEvent::ThinkingEnd { content, .. }
                if *content != track.deltas =>
            {
                report(
                    "delta-mismatch",
                    i,
                    Some(index),
                    format!(
                        "the {} deltas do not add up to the end content",
                        kind.name()
                    ),
                );
            }
            ModelEvent::ToolCallEnd { tool_call, .. } => {
                check_arguments(&track.deltas, &tool_call.arguments, i, index, &mut report);
            }
            _ => {}
        }
    }
    out
}

/// The text a streaming block holds in a partial: the text, the reasoning,
/// or the raw argument JSON.
fn streamed_text(block: Option<&ContentBlock>, kind: Kind) -> Option<String> {
    match (block?, kind) {
        (ContentBlock::Text(b), Kind::Text) => Some(b.text.clone()),
        (ContentBlock::Thinking(b), Kind::Thinking) => Some(b.thinking.clone()),
        (ContentBlock::ToolCall(b), Kind::ToolCall) => b.raw_arguments.clone(),
        _ => None,
    }
}

fn check_arguments(
    deltas: &str,
    arguments: &Map<String, Value>,
    event: usize,
    index: usize,
    report: &mut impl FnMut(&'static str, usize, Option<usize>, String),
) {
    match serde_json::from_str::<Value>(deltas) {
        Ok(Value::Object(parsed)) if parsed == *arguments => {}
        Ok(Value::Object(_)) => report(
            "tool-arguments-mismatch",
            event,
            Some(index),
            "the tool call's arguments differ from its parsed argument deltas".into(),
        ),
        _ => report(
            "invalid-tool-arguments",
            event,
            Some(index),
            "the tool call's argument deltas are not a JSON object".into(),
        ),
    }
}

fn check_terminal(
    event: &ModelEvent,
    message: &AssistantMessage,
    i: usize,
    blocks: &BTreeMap<usize, Track>,
    report: &mut impl FnMut(&'static str, usize, Option<usize>, String),
) {
    let expected = match event {
        ModelEvent::Done { reason, .. } => reason.stop_reason(),
        ModelEvent::Error { reason, .. } => reason.stop_reason(),
        _ => return,
    };
    if message.stop_reason != expected {
        report(
            "terminal-reason-mismatch",
            i,
            None,
            format!(
                "{} has reason {} but its message has stopReason {}",
                event.type_name(),
                expected.as_str(),
                message.stop_reason.as_str()
            ),
        );
    }
    let usage = &message.usage;
    let parts = [usage.output, usage.cache_read, usage.cache_write]
        .into_iter()
        .fold(usage.input, u64::saturating_add);
    if let Some(total) = usage.total_tokens.filter(|&total| total < parts) {
        report(
            "implausible-usage",
            i,
            None,
            format!("totalTokens is {total}, less than the {parts} tokens of its parts"),
        );
    }
    if matches!(event, ModelEvent::Error { .. }) && message.error_message.is_none() {
        report(
            "missing-error-message",
            i,
            None,
            "the error event's message has no errorMessage".into(),
        );
    }
    for (&index, track) in blocks {
        let Some(block) = message.content.get(index) else {
            continue;
        };
        match (block, track.kind) {
            (ContentBlock::ToolCall(call), Kind::ToolCall) => {
                check_arguments(&track.deltas, &call.arguments, i, index, report)
            }
            (block, kind) => {
                if streamed_text(Some(block), kind).as_deref() != Some(track.deltas.as_str()) {
                    report(
                        "delta-mismatch",
                        i,
                        Some(index),
                        format!(
                            "the {} deltas do not add up to block {index} of the final message",
                            kind.name()
                        ),
                    );
                }
            }
        }
    }
}
