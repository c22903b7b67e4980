//! [`Limits`]: how much of a response a client agrees to hold.
//!
//! A server is input like any other: it can send a line that never ends, an
//! endless stream of deltas, or a hundred thousand tool calls. Every buffer
//! the wire protocols keep is bounded by one of these limits, and every
//! count is checked against one. Exceeding a limit ends the call in an
//! `error` event whose message names the limit (see [`LimitExceeded`]),
//! with everything received until then kept in its partial message; the
//! HTTP exchange then stops reading, which closes the connection.
//!
//! The defaults are far above what real providers send (a 128k-token
//! answer streamed as OpenAI chunks is about 40 MB of SSE) and low enough
//! that a hostile server cannot exhaust a small machine. What a response
//! holds in memory is its text and argument bytes plus about 130 bytes per
//! delta (the immutable partial snapshots), so the memory held stays
//! within a small multiple of [`max_response_bytes`](Limits::max_response_bytes).
//!
//! ```
//! use agentstream_wire::limits::Limits;
//!
//! let limits = Limits::default().with_max_response_bytes(1 << 20).with_max_tool_calls(16);
//! assert_eq!(limits.max_response_bytes, 1 << 20);
//! assert_eq!(limits.max_line_bytes, Limits::DEFAULT.max_line_bytes);
//! ```

use core::fmt;

/// Caps on one response. See the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// The longest SSE line, in bytes, line break excluded. Default 8 MiB.
    pub max_line_bytes: usize,
    /// The most `data` one SSE event may carry (its `data` lines joined),
    /// in bytes. Default 8 MiB.
    pub max_event_data_bytes: usize,
    /// The most body bytes one response may have. Default 64 MiB.
    pub max_response_bytes: u64,
    /// The most content blocks (text, thinking and tool calls) in one
    /// message. Default 4,096.
    pub max_content_blocks: usize,
    /// The most tool calls in one message. Default 1,024.
    pub max_tool_calls: usize,
    /// The most argument text one tool call may have, in bytes. Default
    /// 8 MiB.
    pub max_tool_argument_bytes: usize,
}

impl Limits {
    /// The defaults, as a constant.
    pub const DEFAULT: Limits = Limits {
        max_line_bytes: 8 << 20,
        max_event_data_bytes: 8 << 20,
        max_response_bytes: 64 << 20,
        max_content_blocks: 4096,
        max_tool_calls: 1024,
        max_tool_argument_bytes: 8 << 20,
    };

    /// No limit at all, for trusted input such as a recording one made
    /// oneself. Every cap is the largest value of its type.
    pub const UNLIMITED: Limits = Limits {
        max_line_bytes: usize::MAX,
        max_event_data_bytes: usize::MAX,
        max_response_bytes: u64::MAX,
        max_content_blocks: usize::MAX,
        max_tool_calls: usize::MAX,
        max_tool_argument_bytes: usize::MAX,
    };

    /// Sets [`max_line_bytes`](Self::max_line_bytes).
    #[must_use]
    pub const fn with_max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// Sets [`max_event_data_bytes`](Self::max_event_data_bytes).
    #[must_use]
    pub const fn with_max_event_data_bytes(mut self, bytes: usize) -> Self {
        self.max_event_data_bytes = bytes;
        self
    }

    /// Sets [`max_response_bytes`](Self::max_response_bytes).
    #[must_use]
    pub const fn with_max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sets [`max_content_blocks`](Self::max_content_blocks).
    #[must_use]
    pub const fn with_max_content_blocks(mut self, blocks: usize) -> Self {
        self.max_content_blocks = blocks;
        self
    }

    /// Sets [`max_tool_calls`](Self::max_tool_calls).
    #[must_use]
    pub const fn with_max_tool_calls(mut self, calls: usize) -> Self {
        self.max_tool_calls = calls;
        self
    }

    /// Sets [`max_tool_argument_bytes`](Self::max_tool_argument_bytes).
    #[must_use]
    pub const fn with_max_tool_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_argument_bytes = bytes;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Which of the [`Limits`] a response exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// [`Limits::max_line_bytes`].
    LineBytes,
    /// [`Limits::max_event_data_bytes`].
    EventDataBytes,
    /// [`Limits::max_response_bytes`].
    ResponseBytes,
    /// [`Limits::max_content_blocks`].
    ContentBlocks,
    /// [`Limits::max_tool_calls`].
    ToolCalls,
    /// [`Limits::max_tool_argument_bytes`].
    ToolArgumentBytes,
}

impl Limit {
    /// The name of the [`Limits`] field, such as `max_line_bytes`.
    pub const fn field(self) -> &'static str {
        match self {
            Limit::LineBytes => "max_line_bytes",
            Limit::EventDataBytes => "max_event_data_bytes",
            Limit::ResponseBytes => "max_response_bytes",
            Limit::ContentBlocks => "max_content_blocks",
            Limit::ToolCalls => "max_tool_calls",
            Limit::ToolArgumentBytes => "max_tool_argument_bytes",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Limit::LineBytes => "an SSE line is longer than",
            Limit::EventDataBytes => "an SSE event carries more data than",
            Limit::ResponseBytes => "the response body is larger than",
            Limit::ContentBlocks => "the message has more content blocks than",
            Limit::ToolCalls => "the message has more tool calls than",
            Limit::ToolArgumentBytes => "a tool call's arguments are longer than",
        }
    }

    /// The value of this limit in `limits`.
    pub fn value_in(self, limits: &Limits) -> u64 {
        let value = match self {
            Limit::LineBytes => limits.max_line_bytes,
            Limit::EventDataBytes => limits.max_event_data_bytes,
            Limit::ResponseBytes => return limits.max_response_bytes,
            Limit::ContentBlocks => limits.max_content_blocks,
            Limit::ToolCalls => limits.max_tool_calls,
            Limit::ToolArgumentBytes => limits.max_tool_argument_bytes,
        };
        u64::try_from(value).unwrap_or(u64::MAX)
    }
}

/// A response went past one of its [`Limits`].
///
/// Its wording is stable: `response limit exceeded: WHAT max_NAME (VALUE)`,
/// and it is the call's `errorMessage`.
///
/// ```
/// use agentstream_wire::limits::{Limit, LimitExceeded, Limits};
///
/// let error = LimitExceeded::new(Limit::LineBytes, &Limits::default().with_max_line_bytes(1024));
/// assert_eq!(
///     error.to_string(),
///     "response limit exceeded: an SSE line is longer than max_line_bytes (1024)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LimitExceeded {
    /// The limit.
    pub limit: Limit,
    /// Its value.
    pub max: u64,
}

impl LimitExceeded {
    /// `limit` exceeded, with its value taken from `limits`.
    pub fn new(limit: Limit, limits: &Limits) -> Self {
        Self {
            limit,
            max: limit.value_in(limits),
        }
    }
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "response limit exceeded: {} {} ({})",
            self.limit.what(),
            self.limit.field(),
            self.max
        )
    }
}

impl core::error::Error for LimitExceeded {}
