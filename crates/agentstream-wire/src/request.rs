//! What every provider's request builder shares: the check that a
//! context can be sent (`blocking_diagnostics`), [`RequestError`], why it
//! cannot, and the shape of each provider's table of option field names
//! (`OptionFields`).

use alloc::vec::Vec;
use core::fmt;

use agentstream::diagnostic::Diagnostic;
use agentstream::message::linkage::{
    DUPLICATE_TOOL_CALL_ID, DUPLICATE_TOOL_RESULT, ORPHAN_TOOL_RESULT, UNANSWERED_TOOL_CALL,
};
use agentstream::message::{
    user, ContentBlock, ImageContent, LinkageChecker, Message, ToolResultMessage,
};
use agentstream::model::CacheRetention;
use serde_json::{json, Value};

/// A context that cannot be sent: its tool calls and tool results do not
/// pair up. Holds the linkage diagnostics (`unanswered-tool-call`,
/// `orphan-tool-result`, `duplicate-tool-call-id`, `duplicate-tool-result`)
/// in the order found; a call still unanswered at the end of the history
/// counts too, since the request would continue without its result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestError {
    /// The findings that block the request.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the context's tool calls and results do not pair up:")?;
        for d in &self.diagnostics {
            write!(f, " [message {}] {d};", d.message_index)?;
        }
        Ok(())
    }
}

impl RequestError {
    /// The check every body writer makes before writing: `Err` with the
    /// linkage findings that block the request (see [`RequestError`]) when
    /// `messages`, sent as the next turn, do not pair up. For a provider
    /// written outside this crate, which cannot build a `RequestError`
    /// otherwise.
    ///
    /// ```
    /// use agentstream::message::{assistant, tool_call, Message, StopReason};
    /// use agentstream_wire::request::RequestError;
    /// use serde_json::json;
    ///
    /// let call = assistant([tool_call("c1", "ls", json!({}))], StopReason::ToolUse);
    /// let error = RequestError::check(&[Message::Assistant(call)]).unwrap_err();
    /// assert_eq!(error.diagnostics[0].code, "unanswered-tool-call");
    /// assert!(RequestError::check(&[]).is_ok());
    /// ```
    ///
    /// # Errors
    /// The `RequestError` holding the findings, when there are any.
    pub fn check<'m>(messages: impl IntoIterator<Item = &'m Message>) -> Result<(), Self> {
        let diagnostics = blocking_diagnostics(messages);
        if diagnostics.is_empty() {
            Ok(())
        } else {
            Err(Self { diagnostics })
        }
    }
}

/// The diagnostics are findings about the context, not errors of their
/// own, so there is no [`source`](core::error::Error::source).
impl core::error::Error for RequestError {}

/// Where a provider's body carries each per-call option: the one table
/// of field names per provider (`FIELDS` in each provider's `request`
/// module), which its body writer writes and the server's reading of a
/// request (`server::options`) reads. An option the provider has no field
/// for is `None` (the writer does not send it; the reader leaves it
/// unset). A field holding an object names the object; what goes inside
/// it is the provider's shape, written beside the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptionFields {
    /// The output token limit.
    pub max_tokens: &'static str,
    /// The sampling temperature.
    pub temperature: &'static str,
    /// Nucleus sampling.
    pub top_p: &'static str,
    /// The stop sequences (an array).
    pub stop: Option<&'static str>,
    /// The tool choice.
    pub tool_choice: &'static str,
    /// The reasoning effort or thinking budget.
    pub reasoning: &'static str,
    /// The structured output format.
    pub response_format: &'static str,
    /// The prompt cache key (the session id), where the body carries one.
    pub cache_key: Option<&'static str>,
    /// The prompt cache lifetime, where the body carries one.
    pub cache_retention: Option<&'static str>,
}

/// The linkage findings that would make the request invalid.
/// A tool result's text blocks joined by `\n` (pi-ai's rule for every
/// provider that sends a result's text as one string).
pub(crate) fn result_text(result: &ToolResultMessage) -> alloc::string::String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    texts.join("\n")
}

/// An image as the `data:` URL the OpenAI-shaped APIs take
/// (`data:image/png;base64,…`).
pub(crate) fn data_url(image: &ImageContent) -> alloc::string::String {
    alloc::format!("data:{};base64,{}", image.mime_type, image.data)
}

/// A tool result's image blocks, in order.
pub(crate) fn result_images(result: &ToolResultMessage) -> impl Iterator<Item = &ContentBlock> {
    result
        .content
        .iter()
        .filter(|b| matches!(b, ContentBlock::Image(_)))
}

pub(crate) fn blocking_diagnostics<'m>(
    messages: impl IntoIterator<Item = &'m Message>,
) -> Vec<Diagnostic> {
    let mut checker = LinkageChecker::new();
    let mut found: Vec<Diagnostic> = messages
        .into_iter()
        .flat_map(|m| checker.check(m))
        .collect();
    // The request itself is the next turn: calls still waiting are unanswered.
    found.extend(checker.check(&Message::User(user(""))));
    found.retain(|d| {
        [
            UNANSWERED_TOOL_CALL,
            ORPHAN_TOOL_RESULT,
            DUPLICATE_TOOL_CALL_ID,
            DUPLICATE_TOOL_RESULT,
        ]
        .contains(&d.code)
    });
    found
}

/// The Anthropic-style prompt-cache marker for `retention`, as pi-ai writes
/// it: `{"type": "ephemeral"}`, with `"ttl": "1h"` for `Long` where the
/// endpoint supports the long lifetime; none for `None` or no retention.
pub(crate) fn cache_control(retention: CacheRetention, long_supported: bool) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long if long_supported => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        _ => Some(json!({"type": "ephemeral"})),
    }
}

/// Whether `retention` asks for caching at all (`Short` or `Long`).
pub(crate) fn caching(retention: CacheRetention) -> bool {
    matches!(retention, CacheRetention::Short | CacheRetention::Long)
}
