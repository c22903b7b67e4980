//! What the projector targets share: tight limits, so the fuzzer reaches
//! them, and the checks every projected sequence must pass.

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::limits::Limits;

/// Limits small enough for the fuzzer's short inputs to cross them.
pub fn tight_limits() -> Limits {
    Limits::DEFAULT
        .with_max_content_blocks(8)
        .with_max_tool_calls(4)
        .with_max_tool_argument_bytes(256)
}

/// Feeds each line of `input` (lossily decoded) to `push` as one payload,
/// then `finish`, and asserts the sequence: valid under the protocol
/// checker, with exactly one terminal event.
pub fn check_projection<P>(
    input: &[u8],
    projector: &mut P,
    push: fn(&mut P, &str, &mut Vec<ModelEvent>),
    finish: fn(&mut P, &mut Vec<ModelEvent>),
) {
    let text = String::from_utf8_lossy(input);
    let mut events = Vec::new();
    for line in text.lines() {
        push(projector, line, &mut events);
    }
    finish(projector, &mut events);
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
}

/// `input` split at each `\n\0\n` into at most `max` parts (the last one
/// keeps any further separator); always at least one part.
pub fn split_parts(input: &[u8], max: usize) -> Vec<&[u8]> {
    const SEPARATOR: &[u8] = b"\n\0\n";
    let mut parts = Vec::new();
    let mut rest = input;
    while parts.len() + 1 < max {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(at) => {
                parts.push(&rest[..at]);
                rest = &rest[at + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    parts.push(rest);
    parts
}
