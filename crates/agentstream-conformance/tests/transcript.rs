//! The checked-in demo transcript equals this build's, played on one task;
//! `AGENTSTREAM_BLESS=1` rewrites `transcripts/demo.txt` instead.

use agentstream_conformance::{demo_transcript, Rt, DEMO_TRANSCRIPT};

#[test]
fn the_checked_in_transcript_is_this_builds() {
    let transcript = futures_executor::block_on(demo_transcript(Rt::inline()));
    if std::env::var("AGENTSTREAM_BLESS").is_ok_and(|v| v == "1") {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/transcripts/demo.txt");
        std::fs::write(path, &transcript).expect("transcripts/demo.txt is writable");
        return;
    }
    assert_eq!(
        DEMO_TRANSCRIPT, transcript,
        "AGENTSTREAM_BLESS=1 rewrites transcripts/demo.txt"
    );
}

#[test]
fn the_transcript_is_canonical_json_one_event_a_line() {
    assert!(DEMO_TRANSCRIPT.ends_with('\n'));
    for line in DEMO_TRANSCRIPT.lines() {
        assert_eq!(agentstream_conformance::canonical_json(line), line);
        assert!(line.starts_with(r#"{""#), "not a JSON object: {line}");
    }
    assert!(DEMO_TRANSCRIPT.lines().count() > 10);
}
