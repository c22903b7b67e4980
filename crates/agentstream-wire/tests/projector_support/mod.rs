//! What the projector tests share (`gemini_projector.rs`,
//! `responses_projector.rs`): a recorded stream, payloads projected and
//! checked with `validate_events`, an SSE body decoded in pieces, the
//! terminal message, and the check that every cut of a body ends cleanly.

use agentstream::message::AssistantMessage;
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::sse::{Projection, Projector, SseDecoder, SseEvent};

/// The recorded stream `name` in `tests/fixtures/{folder}/`.
pub fn fixture(folder: &str, name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/{folder}/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The events `projector` makes of `payloads` (the SSE `data` of each
/// event) and of the end of the body; they must pass `validate_events`.
pub fn project<'a, P: Projection>(
    projector: &mut Projector<P>,
    payloads: impl IntoIterator<Item = &'a str>,
) -> Vec<ModelEvent> {
    let mut out = Vec::new();
    for data in payloads {
        projector.push_data(data, &mut out);
    }
    projector.finish(&mut out);
    let diagnostics = validate_events(&out);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    out
}

/// The SSE events of a body handed to the decoder as `pieces`, then
/// ended.
pub fn decoded<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(decoder.feed_to_vec(piece).unwrap());
    }
    events.extend(decoder.finish_to_vec());
    events
}

/// The message of the terminal event.
pub fn last(events: &[ModelEvent]) -> &AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("a terminal event")
}

/// Cuts `body` at every `step`-th byte: what `run` makes of the payloads
/// before each cut ends in `error` or `done`.
pub fn every_cut_ends_cleanly(body: &str, step: usize, run: impl Fn(Vec<&str>) -> Vec<ModelEvent>) {
    for cut in (0..body.len()).step_by(step) {
        let events = decoded([&body.as_bytes()[..cut]]);
        let out = run(events.iter().map(|e| e.data.as_str()).collect());
        assert!(matches!(
            out.last().map(ModelEvent::type_name),
            Some("error" | "done")
        ));
    }
}
