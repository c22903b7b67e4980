//! Tool-call / tool-result linkage validation.
//!
//! [`validate_linkage`] walks a conversation in order and reports how tool
//! calls and tool results fit together. [`LinkageChecker`] does the same one
//! message at a time, for callers that stream a log.
//!
//! # Rules and codes
//!
//! | Code | Reported at | When |
//! |------|-------------|------|
//! | [`ORPHAN_TOOL_RESULT`] `orphan-tool-result` | the tool result | its `toolCallId` matches no tool call in an earlier message |
//! | [`TOOL_NAME_MISMATCH`] `tool-name-mismatch` | the tool result | its `toolName` differs from the `name` of the call it answers |
//! | [`DUPLICATE_TOOL_CALL_ID`] `duplicate-tool-call-id` | the later call (with its block index) | a tool call reuses the id of an earlier call, in the same or an earlier message |
//! | [`DUPLICATE_TOOL_RESULT`] `duplicate-tool-result` | the second result | a call that was already answered gets another result |
//! | [`UNANSWERED_TOOL_CALL`] `unanswered-tool-call` | the call (with its block index) | a call from the latest assistant message has no result when a later user or assistant message arrives |
//! | [`TOOL_USE_WITHOUT_CALL`] `tool-use-without-call` | the assistant message | its `stopReason` is `toolUse` but it has no tool-call block |
//!
//! Details:
//! - A call that reuses an id replaces the earlier call for the rest of the
//!   walk: later results are matched against it, and the earlier call is not
//!   reported as unanswered on its own.
//! - A result that arrives late (after its call was reported unanswered)
//!   still answers it: no `orphan-tool-result` is added.
//! - Calls still unanswered at the end of the list are not reported: the
//!   conversation may simply be waiting for the tools.
//! - Messages with an unknown role are ignored.
//! - A mismatched name is only reported for the first result of a call.
//!
//! Diagnostics come in the order they are detected; an
//! `unanswered-tool-call` is detected at the later message but points at the
//! call.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::diagnostic::Diagnostic;

use super::{ContentBlock, Message, StopReason};

/// A tool result answers no earlier tool call.
pub const ORPHAN_TOOL_RESULT: &str = "orphan-tool-result";
/// A tool result's `toolName` differs from its call's `name`.
pub const TOOL_NAME_MISMATCH: &str = "tool-name-mismatch";
/// A tool call reuses the id of an earlier call.
pub const DUPLICATE_TOOL_CALL_ID: &str = "duplicate-tool-call-id";
/// A second tool result for the same call.
pub const DUPLICATE_TOOL_RESULT: &str = "duplicate-tool-result";
/// A tool call has no result when the conversation moves on.
pub const UNANSWERED_TOOL_CALL: &str = "unanswered-tool-call";
/// `stopReason` is `toolUse` but the message has no tool call.
pub const TOOL_USE_WITHOUT_CALL: &str = "tool-use-without-call";

/// Checks tool-call / tool-result linkage over a whole conversation. A valid
/// conversation gives no diagnostics. See the [module docs](self) for the
/// rules.
///
/// ```
/// use agentstream::message::{assistant, text, tool_call, tool_result, user, validate_linkage, Message, StopReason};
/// use serde_json::json;
///
/// let messages: Vec<Message> = vec![
///     user("list files").into(),
///     assistant([tool_call("c1", "ls", json!({}))], StopReason::ToolUse).into(),
///     tool_result("c1", "bash", "a.txt", false).into(),
///     tool_result("c9", "ls", "b.txt", false).into(),
/// ];
/// let found: Vec<String> = validate_linkage(&messages).iter().map(|d| d.to_string()).collect();
/// assert_eq!(found, [
///     "tool-name-mismatch tool result for call \"c1\" names tool \"bash\" but the call at message index 1 named \"ls\"",
///     "orphan-tool-result tool result for call \"c9\" (ls) answers no earlier tool call",
/// ]);
/// ```
pub fn validate_linkage(messages: &[Message]) -> Vec<Diagnostic> {
    let mut checker = LinkageChecker::new();
    messages.iter().flat_map(|m| checker.check(m)).collect()
}

/// Incremental linkage checking: feed messages in order with
/// [`check`](Self::check). Memory use grows with the number of distinct tool
/// call ids, not with the size of the messages.
#[derive(Debug, Clone, Default)]
pub struct LinkageChecker {
    next_index: usize,
    calls: BTreeMap<String, CallState>,
    /// Ids of the calls made by the latest assistant message.
    pending: Vec<String>,
}

#[derive(Debug, Clone)]
struct CallState {
    message_index: usize,
    content_index: usize,
    name: String,
    answered_at: Option<usize>,
}

impl LinkageChecker {
    /// A checker that has seen no message yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of messages checked so far; the index the next message
    /// gets.
    pub fn messages_checked(&self) -> usize {
        self.next_index
    }

    /// Checks the next message and returns what it reveals.
    pub fn check(&mut self, message: &Message) -> Vec<Diagnostic> {
        let index = self.next_index;
        self.next_index += 1;
        let mut out = Vec::new();
        match message {
            Message::User(_) => self.move_on(index, &mut out),
            Message::Assistant(m) => {
                self.move_on(index, &mut out);
                let mut has_call = false;
                for (content_index, block) in m.content.iter().enumerate() {
                    if let ContentBlock::ToolCall(call) = block {
                        has_call = true;
                        self.record_call(index, content_index, &call.id, &call.name, &mut out);
                    }
                }
                if m.stop_reason == StopReason::ToolUse && !has_call {
                    out.push(Diagnostic::new(
                        TOOL_USE_WITHOUT_CALL,
                        index,
                        None,
                        "stopReason is toolUse but the message has no tool call",
                    ));
                }
            }
            Message::ToolResult(r) => {
                self.record_result(index, &r.tool_call_id, &r.tool_name, &mut out)
            }
            Message::Unknown(_) => {}
        }
        out
    }

    /// A user or assistant message arrived: the latest calls had their chance.
    fn move_on(&mut self, index: usize, out: &mut Vec<Diagnostic>) {
        for id in self.pending.drain(..) {
            if let Some(call) = self.calls.get(&id) {
                if call.answered_at.is_none() {
                    out.push(Diagnostic::new(
                        UNANSWERED_TOOL_CALL,
                        call.message_index,
                        Some(call.content_index),
                        format!(
                            "tool call \"{id}\" ({}) has no result before message index {index}",
                            call.name
                        ),
                    ));
                }
            }
        }
    }

    fn record_call(
        &mut self,
        index: usize,
        content_index: usize,
        id: &str,
        name: &str,
        out: &mut Vec<Diagnostic>,
    ) {
        let state = CallState {
            message_index: index,
            content_index,
            name: name.into(),
            answered_at: None,
        };
        // `pending` holds the calls of this message only (`move_on` drains
        // it before every assistant message), so the id is pending already
        // exactly when an earlier call of this message used it: O(log n)
        // per call instead of a scan of the pending calls.
        let earlier = self.calls.insert(id.into(), state);
        if earlier.as_ref().map_or(true, |e| e.message_index != index) {
            self.pending.push(id.into());
        }
        if let Some(earlier) = earlier {
            out.push(Diagnostic::new(
                DUPLICATE_TOOL_CALL_ID,
                index,
                Some(content_index),
                format!(
                    "tool call id \"{id}\" was already used by the call at message index {}, block {}",
                    earlier.message_index, earlier.content_index
                ),
            ));
        }
    }

    fn record_result(&mut self, index: usize, id: &str, name: &str, out: &mut Vec<Diagnostic>) {
        let Some(call) = self.calls.get_mut(id) else {
            out.push(Diagnostic::new(
                ORPHAN_TOOL_RESULT,
                index,
                None,
                format!("tool result for call \"{id}\" ({name}) answers no earlier tool call"),
            ));
            return;
        };
        if let Some(first) = call.answered_at {
            out.push(Diagnostic::new(
                DUPLICATE_TOOL_RESULT,
                index,
                None,
                format!("second tool result for call \"{id}\"; the first is message index {first}"),
            ));
            return;
        }
        call.answered_at = Some(index);
        if call.name != name {
            out.push(Diagnostic::new(
                TOOL_NAME_MISMATCH,
                index,
                None,
                format!(
                    "tool result for call \"{id}\" names tool \"{name}\" but the call at message index {} named \"{}\"",
                    call.message_index, call.name
                ),
            ));
        }
    }
}
