//! The tool calls a projector tracks: their argument text and whether it
//! is already a complete JSON value.

use alloc::string::String;

pub(crate) use crate::json::parse_arguments;

/// One tool call of the message.
#[derive(Debug, Default)]
pub(crate) struct Call {
    pub(crate) key: Option<u64>,
    pub(crate) id: String,
    pub(crate) name: String,
    /// All argument text received.
    pub(crate) args: String,
    /// How much of `args` went out as deltas.
    pub(crate) emitted: usize,
    pub(crate) scan: JsonScan,
    /// Set once the call's block is open.
    pub(crate) content_index: Option<usize>,
    pub(crate) ended: bool,
}

/// Tracks whether a JSON text is complete without parsing it: the nesting
/// depth outside strings.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct JsonScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    started: bool,
}

impl JsonScan {
    pub(crate) fn feed(&mut self, text: &str) {
        for b in text.bytes() {
            if self.in_string {
                match (self.escape, b) {
                    (true, _) => self.escape = false,
                    (false, b'\\') => self.escape = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'{' | b'[' => {
                    self.started = true;
                    self.depth += 1;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b'"' => self.in_string = true,
                _ => {}
            }
        }
    }

    pub(crate) fn complete(&self) -> bool {
        self.started && self.depth == 0 && !self.in_string
    }
}
