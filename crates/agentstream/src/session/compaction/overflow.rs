//! pi-ai's `isContextOverflow`: an error message of a provider that
//! reports a too-long prompt, a successful answer whose input exceeded the
//! context window (a silent overflow), or a `length` stop with no output
//! at the window's edge.
//!
//! Pi matches regular expressions; the core has no regex engine, so each
//! pattern is written out below as the same match: ASCII case folding (as
//! JavaScript's `/i` without `/u`), `\d+` as ASCII digits, `\s` as
//! JavaScript's white space and line terminators, `.` as anything but a
//! line terminator.

use crate::message::{AssistantMessage, StopReason};

/// The provider error texts Pi reads as a context overflow, as
/// case-insensitive substrings (the patterns that are plain text).
const OVERFLOW_TEXT: [&str; 14] = [
    "prompt is too long",                           // Anthropic
    "request_too_large",                            // Anthropic, HTTP 413
    "input is too long for requested model",        // Amazon Bedrock
    "exceeds the context window",                   // OpenAI
    "reduce the length of the messages",            // Groq
    "exceeds the available context size",           // llama.cpp
    "greater than the context length",              // LM Studio
    "context window exceeds limit",                 // MiniMax
    "exceeded model token limit",                   // Kimi
    "model_context_window_exceeded",                // z.ai
    "prompt too long; exceeded context length",     // Ollama
    "prompt too long; exceeded max context length", // Ollama
    "too many tokens",                              // generic
    "token limit exceeded",                         // generic
];

fn lower(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// Whether `needle` (ASCII, lower case) occurs in `hay` at `at`.
fn at(hay: &[u8], at: usize, needle: &str) -> bool {
    hay.len() >= at + needle.len()
        && hay[at..at + needle.len()]
            .iter()
            .zip(needle.bytes())
            .all(|(&h, n)| lower(h) == n)
}

/// Every position where `needle` starts in `hay`.
fn find_all<'a>(hay: &'a [u8], needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    (0..hay.len().saturating_sub(needle.len() - 1)).filter(move |&i| at(hay, i, needle))
}

fn contains(hay: &[u8], needle: &str) -> bool {
    find_all(hay, needle).next().is_some()
}

/// The end of a run of one or more ASCII digits at `i`.
fn digits(hay: &[u8], i: usize) -> Option<usize> {
    let n = hay[i.min(hay.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (n > 0).then_some(i + n)
}

/// `prefix\d+suffix`, anywhere.
fn with_number(hay: &[u8], prefix: &str, suffix: &str) -> bool {
    find_all(hay, prefix).any(|i| digits(hay, i + prefix.len()).is_some_and(|e| at(hay, e, suffix)))
}

/// `context[_ ]length[_ ]exceeded`.
fn context_length_exceeded(hay: &[u8]) -> bool {
    find_all(hay, "context").any(|i| {
        let sep = |j: usize| matches!(hay.get(j), Some(b'_' | b' '));
        sep(i + 7) && at(hay, i + 8, "length") && sep(i + 14) && at(hay, i + 15, "exceeded")
    })
}

/// JavaScript's `\s` at byte `i` of `text`: its length in bytes.
fn js_space(text: &str, i: usize) -> Option<usize> {
    let c = text.get(i..)?.chars().next()?;
    let space = matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    );
    space.then_some(c.len_utf8())
}

fn skip_spaces(text: &str, mut i: usize) -> usize {
    while let Some(n) = js_space(text, i) {
        i += n;
    }
    i
}

/// `^4(?:00|13)\s*(?:status code)?\s*\(no body\)` (Cerebras).
fn no_body(text: &str) -> bool {
    let hay = text.as_bytes();
    if !(hay.starts_with(b"400") || hay.starts_with(b"413")) {
        return false;
    }
    let i = skip_spaces(text, 3);
    // `\s*` is greedy but gives back: with "status code" absent, the
    // second `\s*` takes what the first left, so one skip covers both.
    let j = if at(hay, i, "status code") {
        skip_spaces(text, i + 11)
    } else {
        i
    };
    at(hay, j, "(no body)")
}

/// `input token count.*exceeds the maximum`, `.` stopping at line
/// terminators (Gemini).
fn token_count_exceeds(text: &str) -> bool {
    let hay = text.as_bytes();
    find_all(hay, "input token count").any(|i| {
        let rest = &text[i + 17..];
        let line_end = rest
            .find(['\n', '\r', '\u{2028}', '\u{2029}'])
            .unwrap_or(rest.len());
        contains(&rest.as_bytes()[..line_end], "exceeds the maximum")
    })
}

/// Whether a provider's error text is one Pi reads as a context overflow
/// (and not as a rate limit or a Bedrock throttling error).
///
/// ```
/// use agentstream::session::is_overflow_error;
///
/// assert!(is_overflow_error("prompt is too long: 213462 tokens > 200000 maximum"));
/// assert!(is_overflow_error("This model's maximum context length is 128000 tokens."));
/// assert!(!is_overflow_error("Rate limit: too many tokens per minute"));
/// ```
pub fn is_overflow_error(text: &str) -> bool {
    let hay = text.as_bytes();
    let non_overflow = at(hay, 0, "throttling error:")
        || at(hay, 0, "service unavailable:")
        || contains(hay, "rate limit")
        || contains(hay, "too many requests");
    if non_overflow {
        return false;
    }
    OVERFLOW_TEXT.iter().any(|p| contains(hay, p))
        || context_length_exceeded(hay)
        || token_count_exceeds(text)
        || with_number(hay, "maximum prompt length is ", "")
        || with_number(hay, "maximum context length is ", " tokens")
        || with_number(hay, "exceeds the limit of ", "")
        || with_number(hay, "too large for model with ", " maximum context length")
        || no_body(text)
}

/// pi-ai's `isContextOverflow` for an assistant message and the model's
/// context window (`None` or `0`: unknown, so only error texts count).
///
/// ```
/// use agentstream::message::{assistant, StopReason};
/// use agentstream::session::is_context_overflow;
///
/// let mut m = assistant([], StopReason::Stop);
/// m.usage.input = 150_000;
/// m.usage.cache_read = 60_000;
/// assert!(is_context_overflow(&m, Some(200_000)), "a silent overflow");
/// assert!(!is_context_overflow(&m, None));
/// ```
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason == StopReason::Error {
        if let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) {
            if is_overflow_error(text) {
                return true;
            }
        }
    }
    let Some(window) = context_window.filter(|&w| w > 0) else {
        return false;
    };
    let input = message.usage.input as f64 + message.usage.cache_read as f64;
    match message.stop_reason {
        StopReason::Stop => input > window as f64,
        StopReason::Length => message.usage.output == 0 && input >= window as f64 * 0.99,
        _ => false,
    }
}
