//! Diagnostics shared by the validators.
//!
//! A [`Diagnostic`] is one finding of a validator over a list of messages or
//! events: a stable machine-readable code, where it was found, and one plain
//! sentence for people.
//!
//! Codes are kebab-case `&'static str` constants defined by the module that
//! emits them, so new validators can add codes without touching this module.
//! A code, once published, keeps its meaning. The codes defined so far:
//!
//! | Code | Emitted by | Meaning |
//! |------|------------|---------|
//! | `orphan-tool-result` | [`validate_linkage`](crate::message::validate_linkage) | a tool result answers no earlier tool call |
//! | `tool-name-mismatch` | [`validate_linkage`](crate::message::validate_linkage) | a tool result's `toolName` differs from its call's `name` |
//! | `duplicate-tool-call-id` | [`validate_linkage`](crate::message::validate_linkage) | a tool call reuses the id of an earlier call |
//! | `duplicate-tool-result` | [`validate_linkage`](crate::message::validate_linkage) | a second tool result for the same call |
//! | `unanswered-tool-call` | [`validate_linkage`](crate::message::validate_linkage) | a tool call has no result when the conversation moves on |
//! | `tool-use-without-call` | [`validate_linkage`](crate::message::validate_linkage) | `stopReason` is `toolUse` but the message has no tool call |
//! | `round-trip-mismatch` | the `agentstream validate` CLI | re-serializing a message changes its JSON |
//!
//! See [`crate::message::linkage`] for the exact rules.

use alloc::string::String;
use core::fmt;

/// One finding of a validator.
///
/// `Display` prints `CODE sentence`, for example
/// `orphan-tool-result tool result for call "c9" answers no earlier tool call`.
///
/// ```
/// use agentstream::diagnostic::Diagnostic;
///
/// let d = Diagnostic::new("orphan-tool-result", 3, None, "tool result for call \"c9\" answers no earlier tool call");
/// assert_eq!(d.to_string(), "orphan-tool-result tool result for call \"c9\" answers no earlier tool call");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Diagnostic {
    /// The stable code, for example `orphan-tool-result`. See the
    /// [module documentation](self) for the list.
    pub code: &'static str,
    /// Index of the message (or event) the finding is about.
    pub message_index: usize,
    /// Index of the content block within that message, where one applies.
    pub content_index: Option<usize>,
    /// One plain sentence, without a trailing period.
    pub text: String,
}

impl Diagnostic {
    /// Creates a diagnostic.
    pub fn new(
        code: &'static str,
        message_index: usize,
        content_index: Option<usize>,
        text: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            message_index,
            content_index,
            text: text.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code, self.text)
    }
}
