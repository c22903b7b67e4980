//! The trace body: the two-turn demo (a `read` tool call, then an answer
//! built from its result) rendered to a transcript string that every host
//! must produce byte for byte: [`DEMO_TRANSCRIPT`], checked in as
//! `transcripts/demo.txt`. The demo is the Pi oracle's `demo` scenario,
//! and the file is the real Pi's transcript of it
//! (`crates/agentstream/tests/golden/pi/demo.jsonl`) in this rendering.
//!
//! The rendering is canonical JSON, one agent event a line, object keys
//! sorted, so it does not depend on serde_json's `preserve_order` feature
//! (which another crate of a build may turn on).

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::conformance::Rt;

/// The demo's expected transcript (`transcripts/demo.txt`).
pub const DEMO_TRANSCRIPT: &str = include_str!("../../transcripts/demo.txt");

/// Renders one JSON text canonically: no whitespace, object keys sorted.
/// Text that is not JSON is returned unchanged.
///
/// ```
/// let line = r#"{"b": 1, "a": {"d": [true, null], "c": "x"}}"#;
/// assert_eq!(
///     agentstream_testkit::conformance::canonical_json(line),
///     r#"{"a":{"c":"x","d":[true,null]},"b":1}"#
/// );
/// ```
pub fn canonical_json(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            let mut out = String::new();
            write_canonical(&value, &mut out);
            out
        }
        Err(_) => String::from(text),
    }
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).expect("a string serializes"));
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&serde_json::to_string(scalar).expect("a scalar serializes")),
    }
}

/// Plays the demo as a task of `rt` and renders its transcript: one
/// canonical JSON line per agent event, each ending in `\n`.
pub async fn demo_transcript(rt: Rt) -> String {
    let (slot, mut played) = agentstream::channel::<String, (), ()>();
    rt.spawn(async move {
        let mut transcript = String::new();
        for line in crate::conformance::agent::demo_lines().await {
            transcript.push_str(&canonical_json(&line));
            transcript.push('\n');
        }
        slot.push(transcript)
            .expect("the body waits for the transcript");
        let _ = slot.finish(());
    })
    .await;
    match futures_util::StreamExt::next(&mut played).await {
        Some(Ok(transcript)) => transcript,
        other => panic!("the demo's task ended without its transcript: {other:?}"),
    }
}

/// The demo's transcript on this host equals [`DEMO_TRANSCRIPT`] byte for
/// byte.
pub async fn trace_demo_transcript(rt: Rt) {
    let transcript = demo_transcript(rt).await;
    let lines: Vec<String> = transcript.lines().map(String::from).collect();
    if let Some(difference) =
        crate::conformance::agent::first_difference(DEMO_TRANSCRIPT, &lines, |e, a| e == a)
    {
        panic!("the demo's transcript differs from transcripts/demo.txt at {difference}");
    }
    assert!(
        transcript == DEMO_TRANSCRIPT,
        "the demo's transcript has the lines of transcripts/demo.txt but not its bytes (line endings or the final newline)"
    );
}
