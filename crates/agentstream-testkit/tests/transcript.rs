//! The checked-in demo transcript is the real Pi's, and equals this
//! build's, played on one task.

use agentstream_testkit::conformance::{canonical_json, demo_transcript, Rt, DEMO_TRANSCRIPT};

#[test]
fn the_checked_in_transcript_is_this_builds() {
    let transcript = futures_executor::block_on(demo_transcript(Rt::inline()));
    assert_eq!(DEMO_TRANSCRIPT, transcript);
}

/// `transcripts/demo.txt` is Pi 0.73.1's transcript of the oracle's
/// `demo` scenario (`tests/golden/pi/demo.jsonl` of the core, written by
/// the Pi oracle) in the canonical rendering, never one blessed from our
/// own output.
#[test]
fn the_checked_in_transcript_is_pis() {
    let pi = include_str!("../../agentstream/tests/golden/pi/demo.jsonl");
    let rendered: Vec<String> = pi.lines().map(canonical_json).collect();
    let checked_in: Vec<&str> = DEMO_TRANSCRIPT.lines().collect();
    assert_eq!(checked_in, rendered);
}

#[test]
fn the_transcript_is_canonical_json_one_event_a_line() {
    assert!(DEMO_TRANSCRIPT.ends_with('\n'));
    for line in DEMO_TRANSCRIPT.lines() {
        assert_eq!(canonical_json(line), line);
        assert!(line.starts_with(r#"{""#), "not a JSON object: {line}");
    }
    assert!(DEMO_TRANSCRIPT.lines().count() > 10);
}
