//! Context portability: [`transform_messages`] rewrites a conversation so
//! that it can be sent to a given model, whichever model wrote it and
//! however its turns ended.
//!
//! Every request builder of the wire crate runs it before building a
//! body, so a context can move between providers and survives an aborted
//! turn. The rules, in the order they apply:
//!
//! 1. **Aborted and failed turns are not replayed.** An assistant message
//!    whose `stopReason` is `error` or `aborted` is left out: it may hold
//!    half a tool call, or reasoning with no answer, which the endpoints
//!    refuse. Tool results answering a call of such a message are left out
//!    with it (they would answer nothing).
//! 2. **Unanswered tool calls get an error result.** When a user or
//!    assistant message follows an assistant message whose tool calls did
//!    not all get a result, a tool result with the text
//!    [`NO_RESULT_PROVIDED`] and `isError: true` is inserted for each
//!    missing one, before that message. Calls still waiting at the very
//!    end of the conversation are left alone (the tools may be running).
//! 3. **Thinking.** From the *same model* (same `provider`, `api` and
//!    `model` as the [`TargetModel`]) thinking blocks are kept as they are,
//!    signatures included, and so are text signatures and tool-call
//!    `thoughtSignature`s. From *another model*: redacted thinking is
//!    dropped (its opaque data only means something to its model), empty
//!    or whitespace-only thinking is dropped, other thinking becomes a
//!    plain text block with the reasoning as its text; text blocks lose
//!    their `textSignature` and tool calls their `thoughtSignature`.
//! 4. **Tool-call ids.** The ids of tool calls from another model go
//!    through the caller's normalizer (a provider's id rules, such as
//!    Anthropic's `^[a-zA-Z0-9_-]+$`), and the tool results that answer
//!    them follow.
//!
//! # Where this differs from Pi's `transformMessages`
//!
//! - Pi keeps tool results whose call was in a skipped (aborted or failed)
//!   message, and the endpoint then refuses the orphan result; here they
//!   are dropped with their call.
//! - Pi stamps the synthetic results with the current time; this crate has
//!   no clock, so they carry the timestamp of the assistant message whose
//!   call they answer.
//!
//! ```
//! use agentstream::message::transform::{transform_messages, TargetModel, NO_RESULT_PROVIDED};
//! use agentstream::message::{assistant, text, tool_call, user, Message, StopReason};
//! use serde_json::json;
//!
//! let mut aborted = assistant([tool_call("c1", "ls", json!({}))], StopReason::Aborted);
//! aborted.error_message = Some("Request was aborted".into());
//! let messages: Vec<Message> = vec![
//!     user("list files").into(),
//!     assistant([tool_call("c0", "ls", json!({}))], StopReason::ToolUse).into(),
//!     aborted.into(),
//!     user("never mind").into(),
//! ];
//! let target = TargetModel::new("openai", "openai-completions", "gpt-4o");
//! let sent = transform_messages(&messages, &target, |id| id.into());
//! // The aborted turn is gone; the unanswered call `c0` got an error result.
//! assert_eq!(sent.len(), 4);
//! let Message::ToolResult(result) = &*sent[2] else { panic!() };
//! assert_eq!((result.tool_call_id.as_str(), result.is_error), ("c0", true));
//! assert_eq!(result.text(), NO_RESULT_PROVIDED);
//! ```

use alloc::borrow::Cow;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::Map;

use super::{
    AssistantMessage, ContentBlock, Message, StopReason, TextContent, ToolCall, ToolResultMessage,
};

/// The text of the error result inserted for a tool call that never got
/// one (Pi's wording).
pub const NO_RESULT_PROVIDED: &str = "No result provided";

/// The model a conversation is about to be sent to: what "the same model"
/// is compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetModel<'a> {
    /// The provider, compared with a message's `provider`.
    pub provider: &'a str,
    /// The API, compared with a message's `api`.
    pub api: &'a str,
    /// The model id, compared with a message's `model`.
    pub model: &'a str,
}

impl<'a> TargetModel<'a> {
    /// The target `model` of `provider` over `api`.
    pub fn new(provider: &'a str, api: &'a str, model: &'a str) -> Self {
        Self {
            provider,
            api,
            model,
        }
    }

    /// Whether `message` was written by this model: same provider, API and
    /// model id.
    pub fn wrote(&self, message: &AssistantMessage) -> bool {
        message.provider == self.provider && message.api == self.api && message.model == self.model
    }
}

/// Rewrites `messages` for `target`; see the [module documentation](self)
/// for the rules. `normalize_id` maps the id of a tool call from another
/// model to one the target accepts (the identity when it accepts any).
///
/// Messages that need no change are borrowed, so a long history (images
/// included) is not copied for each request.
pub fn transform_messages<'m>(
    messages: &'m [Message],
    target: &TargetModel<'_>,
    mut normalize_id: impl FnMut(&str) -> String,
) -> Vec<Cow<'m, Message>> {
    // Ids of the calls of skipped messages, and renamed ids.
    let mut skipped_calls: BTreeSet<&str> = BTreeSet::new();
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    let mut out: Vec<Cow<'m, Message>> = Vec::with_capacity(messages.len());
    // The calls of the latest kept assistant message still waiting for a
    // result: (id, name, timestamp).
    let mut pending: Vec<(String, String, u64)> = Vec::new();
    let mut answered: BTreeSet<String> = BTreeSet::new();

    for message in messages {
        match message {
            Message::Assistant(m) => {
                answer_missing(&mut pending, &mut answered, &mut out);
                if matches!(m.stop_reason, StopReason::Error | StopReason::Aborted) {
                    skipped_calls.extend(m.tool_calls().map(|c| c.id.as_str()));
                    continue;
                }
                let m = rewrite_assistant(m, target, &mut normalize_id, &mut renamed);
                pending = m
                    .tool_calls()
                    .map(|c| (c.id.clone(), c.name.clone(), m.timestamp))
                    .collect();
                out.push(match m {
                    Cow::Borrowed(_) => Cow::Borrowed(message),
                    Cow::Owned(m) => Cow::Owned(Message::Assistant(m)),
                });
            }
            Message::ToolResult(r) => {
                if let Some(id) = renamed.get(&r.tool_call_id) {
                    let mut r = r.clone();
                    r.tool_call_id = id.clone();
                    answered.insert(r.tool_call_id.clone());
                    out.push(Cow::Owned(Message::ToolResult(r)));
                } else if skipped_calls.contains(r.tool_call_id.as_str())
                    && !pending.iter().any(|(id, _, _)| *id == r.tool_call_id)
                {
                    // It answers a call that is not sent.
                } else {
                    answered.insert(r.tool_call_id.clone());
                    out.push(Cow::Borrowed(message));
                }
            }
            Message::User(_) => {
                answer_missing(&mut pending, &mut answered, &mut out);
                out.push(Cow::Borrowed(message));
            }
            Message::Unknown(_) => out.push(Cow::Borrowed(message)),
        }
    }
    out
}

/// Inserts an error result for every pending call without one.
fn answer_missing(
    pending: &mut Vec<(String, String, u64)>,
    answered: &mut BTreeSet<String>,
    out: &mut Vec<Cow<'_, Message>>,
) {
    for (id, name, timestamp) in pending.drain(..) {
        if !answered.contains(&id) {
            out.push(Cow::Owned(Message::ToolResult(ToolResultMessage {
                tool_call_id: id,
                tool_name: name,
                content: vec![ContentBlock::Text(TextContent {
                    text: NO_RESULT_PROVIDED.into(),
                    ..TextContent::default()
                })],
                details: None,
                is_error: true,
                timestamp,
                extra: Map::new(),
            })));
        }
    }
    answered.clear();
}

/// The assistant message as `target` should see it.
fn rewrite_assistant<'m>(
    message: &'m AssistantMessage,
    target: &TargetModel<'_>,
    normalize_id: &mut impl FnMut(&str) -> String,
    renamed: &mut BTreeMap<String, String>,
) -> Cow<'m, AssistantMessage> {
    if target.wrote(message) {
        return Cow::Borrowed(message);
    }
    let mut out = message.clone();
    out.content = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(t) if t.redacted == Some(true) => None,
            ContentBlock::Thinking(t) if t.thinking.trim().is_empty() => None,
            ContentBlock::Thinking(t) => Some(ContentBlock::Text(TextContent {
                text: t.thinking.clone(),
                ..TextContent::default()
            })),
            ContentBlock::Text(t) => Some(ContentBlock::Text(TextContent {
                text: t.text.clone(),
                ..TextContent::default()
            })),
            ContentBlock::ToolCall(call) => {
                let id = normalize_id(&call.id);
                if id != call.id {
                    renamed.insert(call.id.clone(), id.clone());
                }
                Some(ContentBlock::ToolCall(ToolCall {
                    id,
                    thought_signature: None,
                    ..call.clone()
                }))
            }
            other => Some(other.clone()),
        })
        .collect();
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{
        assistant, text, thinking, tool_call, tool_result, user, ThinkingContent,
    };
    use serde_json::json;

    const TARGET: TargetModel<'static> = TargetModel {
        provider: "anthropic",
        api: "anthropic-messages",
        model: "claude",
    };

    fn same(content: Vec<ContentBlock>, stop: StopReason) -> AssistantMessage {
        let mut m = assistant(content, stop);
        m.provider = "anthropic".into();
        m.api = "anthropic-messages".into();
        m.model = "claude".into();
        m
    }

    fn run(messages: Vec<Message>) -> Vec<Message> {
        transform_messages(&messages, &TARGET, |id| id.replace('|', "_"))
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    #[test]
    fn unchanged_messages_are_borrowed() {
        let messages: Vec<Message> = vec![
            user("a").into(),
            same(vec![text("x")], StopReason::Stop).into(),
        ];
        let out = transform_messages(&messages, &TARGET, |id: &str| id.into());
        assert!(out.iter().all(|m| matches!(m, Cow::Borrowed(_))));
        let mut foreign = same(vec![text("x")], StopReason::Stop);
        foreign.model = "other".into();
        let messages: Vec<Message> = vec![foreign.into()];
        let out = transform_messages(&messages, &TARGET, |id: &str| id.into());
        assert!(matches!(out[0], Cow::Owned(_)));
    }

    fn signed(text: &str, signature: &str) -> ContentBlock {
        ContentBlock::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: Some(signature.into()),
            ..ThinkingContent::default()
        })
    }

    fn redacted(data: &str) -> ContentBlock {
        ContentBlock::Thinking(ThinkingContent {
            thinking_signature: Some(data.into()),
            redacted: Some(true),
            ..ThinkingContent::default()
        })
    }

    #[test]
    fn error_and_aborted_turns_are_skipped() {
        for stop in [StopReason::Error, StopReason::Aborted] {
            let out = run(vec![
                user("a").into(),
                same(vec![text("half")], stop.clone()).into(),
                user("b").into(),
            ]);
            assert_eq!(out.len(), 2, "{stop}");
            assert!(out.iter().all(|m| m.role() == "user"));
        }
        // Other stop reasons are kept.
        for stop in [StopReason::Stop, StopReason::Length] {
            let out = run(vec![same(vec![text("x")], stop).into()]);
            assert_eq!(out.len(), 1);
        }
    }

    #[test]
    fn results_of_skipped_calls_go_with_them() {
        let out = run(vec![
            user("a").into(),
            same(vec![tool_call("c1", "ls", json!({}))], StopReason::Aborted).into(),
            tool_result("c1", "ls", "late", false).into(),
            user("b").into(),
        ]);
        assert_eq!(
            out.iter().map(Message::role).collect::<Vec<_>>(),
            ["user", "user"]
        );
    }

    #[test]
    fn unanswered_calls_get_an_error_result_before_the_next_turn() {
        let mut call_turn = same(
            vec![
                tool_call("c1", "ls", json!({})),
                tool_call("c2", "cat", json!({})),
            ],
            StopReason::ToolUse,
        );
        call_turn.timestamp = 77;
        for next in [
            Message::from(user("next")),
            same(vec![text("x")], StopReason::Stop).into(),
        ] {
            let out = run(vec![
                call_turn.clone().into(),
                tool_result("c2", "cat", "ok", false).into(),
                next.clone(),
            ]);
            assert_eq!(out.len(), 4);
            let Message::ToolResult(r) = &out[2] else {
                panic!("{out:?}")
            };
            assert_eq!(r.tool_call_id, "c1");
            assert_eq!(r.tool_name, "ls");
            assert!(r.is_error);
            assert_eq!(r.text(), "No result provided");
            assert_eq!(r.timestamp, 77);
            assert_eq!(out[3], next);
        }
        // At the end of the conversation, nothing is invented.
        let out = run(vec![call_turn.into()]);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn same_model_thinking_is_kept_with_its_signature() {
        let message = same(
            vec![signed("hmm", "sig"), redacted("opaque"), signed("", "s2")],
            StopReason::Stop,
        );
        let out = run(vec![message.clone().into()]);
        assert_eq!(out, [Message::Assistant(message)]);
    }

    #[test]
    fn other_model_thinking_becomes_text_and_redacted_goes() {
        let mut message = same(
            vec![
                signed("reasoning", "sig"),
                redacted("opaque"),
                thinking("  \n"),
                ContentBlock::Text(TextContent {
                    text: "answer".into(),
                    text_signature: Some("ts".into()),
                    ..TextContent::default()
                }),
            ],
            StopReason::Stop,
        );
        message.model = "claude-other".into();
        let out = run(vec![message.into()]);
        let Message::Assistant(m) = &out[0] else {
            panic!()
        };
        assert_eq!(m.content, [text("reasoning"), text("answer")]);
    }

    #[test]
    fn provider_and_api_count_for_the_same_model() {
        for change in 0..2 {
            let mut message = same(vec![signed("r", "sig")], StopReason::Stop);
            if change == 0 {
                message.provider = "bedrock".into();
            } else {
                message.api = "openai-completions".into();
            }
            let out = run(vec![message.into()]);
            let Message::Assistant(m) = &out[0] else {
                panic!()
            };
            assert_eq!(m.content, [text("r")]);
        }
    }

    #[test]
    fn foreign_tool_call_ids_are_normalized_and_results_follow() {
        let mut message = same(
            vec![ContentBlock::ToolCall(ToolCall {
                thought_signature: Some("t".into()),
                ..match tool_call("call|1", "ls", json!({})) {
                    ContentBlock::ToolCall(c) => c,
                    _ => unreachable!(),
                }
            })],
            StopReason::ToolUse,
        );
        message.provider = "openai".into();
        let out = run(vec![
            message.into(),
            tool_result("call|1", "ls", "ok", false).into(),
        ]);
        let Message::Assistant(m) = &out[0] else {
            panic!()
        };
        let call = m.tool_calls().next().unwrap();
        assert_eq!(call.id, "call_1");
        assert_eq!(call.thought_signature, None);
        let Message::ToolResult(r) = &out[1] else {
            panic!()
        };
        assert_eq!(r.tool_call_id, "call_1");
        // The same model's ids are left alone.
        let out = run(vec![same(
            vec![tool_call("a|b", "ls", json!({}))],
            StopReason::ToolUse,
        )
        .into()]);
        let Message::Assistant(m) = &out[0] else {
            panic!()
        };
        assert_eq!(m.tool_calls().next().unwrap().id, "a|b");
    }
}
